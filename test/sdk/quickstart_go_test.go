package sdk_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

// TestQuickstartGo follows the quickstart's Go section as a newcomer
// does: its shell block makes a module and `go get`s the SDK at its
// release (served here by a module proxy in a directory, as for
// TestPartnerModuleRunsTheSandboxCheck), its Go block is saved as main.go,
// and `go run .` prints the first ticket; the order.paid webhook the
// service then delivers is verified and typed by the SDK's ConstructEvent.
func TestQuickstartGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and runs the stack")
	}
	script, goBlocks := sectionScript(t, "Go", "go", "main.go")
	version := "v" + ticketsales.Version
	if goBlocks != 1 || !strings.Contains(script, "sdk/go@"+version) {
		t.Fatalf("the Go section should get the SDK at %s and save one block as main.go:\n%s", version, script)
	}
	path := filepath.Join(t.TempDir(), "quickstart.sh")
	if err := os.WriteFile(path, []byte(script+"go run .\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	proxy := t.TempDir()
	publish(t, proxy, "../../sdk/go", version)
	s, key := sandbox(t)
	hooks, secret := subscribeHooks(t, s.URL, key, "order.paid")
	start := time.Now()
	env := append([]string{"TICKETS_URL=" + contractProxy(t, s.URL), "TICKETS_KEY=" + key}, partnerGoEnv(t, proxy)...)
	out := tsRun(t, t.TempDir(), env, 2*time.Minute, "bash", "-euo", "pipefail", path)
	t.Logf("the Go quickstart ran in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	if want := regexp.MustCompile(`ticket \S+: barcode 2000\d{9}, the buyer's page http://\S+/o/\d+\?access_token=\S+\n`); !want.MatchString(out) {
		t.Errorf("the Go quickstart did not print %s:\n%s", want, out)
	}

	// The order's order.paid delivery, verified and typed by the SDK.
	d := hooks.first(t)
	ev, err := ticketsales.ConstructEvent(d.body, d.header, secret)
	if err != nil {
		t.Fatalf("the order.paid delivery: %v\n%s", err, d.body)
	}
	typed, err := ev.Typed()
	if err != nil {
		t.Fatal(err)
	}
	paid, ok := typed.(*ticketsales.OrderPaidEvent)
	if !ok || paid.Data.Status != "paid" || !paid.Data.IsTest || paid.Id != d.header.Get("webhook-id") {
		t.Fatalf("the delivery typed as %T %+v", typed, typed)
	}
	if _, err := ticketsales.ConstructEvent(d.body, d.header, "whsec_"+"b3RoZXIgc2VjcmV0"); !errors.Is(err, ticketsales.ErrWebhookSignature) {
		t.Errorf("verified with another secret: %v", err)
	}
	t.Logf("webhook %s: order %d is %s", ev.Type, paid.Data.Id, paid.Data.Status)
}

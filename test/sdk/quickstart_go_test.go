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
// and `go run .` prints the first ticket, then reconciles the order found
// by its reference and refunds it; the order.paid and order.refunded
// webhooks the service delivers are verified and typed by the SDK's
// ConstructEvent.
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
	hooks, secret := subscribeHooks(t, s.URL, key, "order.paid", "order.refunded")
	env := append([]string{"TICKETS_URL=" + contractProxy(t, s.URL), "TICKETS_KEY=" + key}, partnerGoEnv(t, proxy)...)
	out, at := quickstartRun(t, t.TempDir(), env, 2*time.Minute, path)
	t.Logf("the Go quickstart: the first ticket after %s, the refund reconciled after %s",
		at(quickstartTicket), at(quickstartReconciled))
	if want := regexp.MustCompile(`ticket \S+: barcode 2000\d{9}, the buyer's page http://\S+/o/\d+\?access_token=\S+\n`); !want.MatchString(out) {
		t.Errorf("the Go quickstart did not print %s:\n%s", want, out)
	}
	ref, id := checkReconciled(t, s.URL, key, out)

	// The order's order.paid delivery, verified and typed by the SDK.
	d := hooks.ofType(t, "order.paid")
	ev, err := ticketsales.ConstructEvent(d.body, d.header, secret)
	if err != nil {
		t.Fatalf("the order.paid delivery: %v\n%s", err, d.body)
	}
	typed, err := ev.Typed()
	if err != nil {
		t.Fatal(err)
	}
	paid, ok := typed.(*ticketsales.OrderPaidEvent)
	if !ok || paid.Data.Status != "paid" || !paid.Data.IsTest || paid.Id != d.header.Get("webhook-id") ||
		paid.Data.Id != id || paid.Data.Reference == nil || *paid.Data.Reference != ref {
		t.Fatalf("the delivery typed as %T %+v", typed, typed)
	}
	if _, err := ticketsales.ConstructEvent(d.body, d.header, "whsec_"+"b3RoZXIgc2VjcmV0"); !errors.Is(err, ticketsales.ErrWebhookSignature) {
		t.Errorf("verified with another secret: %v", err)
	}
	t.Logf("webhook %s: order %d (%s) is %s", ev.Type, paid.Data.Id, *paid.Data.Reference, paid.Data.Status)

	// Its order.refunded delivery: the refund, which names the order and
	// carries its reference, typed by the SDK.
	d = hooks.ofType(t, "order.refunded")
	if ev, err = ticketsales.ConstructEvent(d.body, d.header, secret); err != nil {
		t.Fatalf("the order.refunded delivery: %v\n%s", err, d.body)
	}
	if typed, err = ev.Typed(); err != nil {
		t.Fatal(err)
	}
	refundedEv, ok := typed.(*ticketsales.OrderRefundedEvent)
	if !ok {
		t.Fatalf("the delivery typed as %T", typed)
	}
	refund, err := refundedEv.Data.AsRefundView()
	if err != nil || refund.OrderId != id || refund.OrderStatus != ticketsales.RefundViewOrderStatusRefunded ||
		refund.Amount.Amount != paid.Data.Amount.Amount || refund.OrderReference == nil || *refund.OrderReference != ref {
		t.Fatalf("the order.refunded delivery's refund: %v %+v", err, refund)
	}
	t.Logf("webhook %s: refund %s of order %d (%s), %d, the order %s", ev.Type, refund.Id, refund.OrderId, ref,
		refund.Amount.Amount, refund.OrderStatus)
}

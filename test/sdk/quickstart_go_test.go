package sdk_test

import (
	"os"
	"os/exec"
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
// and `go run .` prints the first ticket.
func TestQuickstartGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module and runs the stack")
	}
	var script strings.Builder
	goBlocks := 0
	for _, b := range tsQuickstart(t, "Go") {
		switch b.lang {
		case "sh":
			script.WriteString(b.code + "\n")
		case "go":
			if strings.Contains(b.code, "\n__GO__\n") {
				t.Fatal("a Go block holds the test's heredoc marker")
			}
			script.WriteString("cat >main.go <<'__GO__'\n" + b.code + "__GO__\n")
			goBlocks++
		default:
			t.Fatalf("a Go section block is %q: the test runs sh and go blocks", b.lang)
		}
	}
	version := "v" + ticketsales.Version
	if goBlocks != 1 || !strings.Contains(script.String(), "sdk/go@"+version) {
		t.Fatalf("the Go section should get the SDK at %s and save one block as main.go:\n%s", version, script.String())
	}
	script.WriteString("go run .\n")
	path := filepath.Join(t.TempDir(), "quickstart.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	proxy := t.TempDir()
	publish(t, proxy, "../../sdk/go", version)
	goProxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	modCache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	s, key := sandbox(t)
	start := time.Now()
	out := tsRun(t, t.TempDir(), []string{"TICKETS_URL=" + contractProxy(t, s.URL), "TICKETS_KEY=" + key,
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(strings.TrimSpace(string(modCache)), "cache", "download")) +
			"," + strings.TrimSpace(string(goProxy)),
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "modcache"), "GONOSUMDB=github.com/ticketsales",
		"GOFLAGS=-modcacherw", "GOWORK=off", "GOTOOLCHAIN=local"}, 2*time.Minute, "bash", "-euo", "pipefail", path)
	t.Logf("the Go quickstart ran in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	if want := regexp.MustCompile(`ticket \S+: barcode 2000\d{9}, the buyer's page http://\S+/o/\d+\?access_token=\S+\n`); !want.MatchString(out) {
		t.Errorf("the Go quickstart did not print %s:\n%s", want, out)
	}
}

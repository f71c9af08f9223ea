package sdk_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The quickstart's code is run as written: these tests take the fenced
// blocks of docs/quickstart.md's sections and run them against the real
// stack, so the page cannot drift from the API or the SDKs.

// tsDocBlock is one fenced block of a markdown page.
type tsDocBlock struct{ lang, code string }

var tsFence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n")

// tsQuickstart returns the fenced blocks of the quickstart's section
// titled title ("## title"), in order.
func tsQuickstart(t *testing.T, title string) []tsDocBlock {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "quickstart.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(page), "\n## "+title+"\n")
	if !found {
		t.Fatalf("docs/quickstart.md has no section %q", title)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []tsDocBlock
	for _, m := range tsFence.FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, tsDocBlock{lang: m[1], code: m[2]})
	}
	if len(blocks) == 0 {
		t.Fatalf("docs/quickstart.md section %q has no code", title)
	}
	return blocks
}

// sectionScript is a quickstart section as one shell script: its sh
// blocks as they are, and each block in lang saved as file (a heredoc),
// in the page's order; n counts the blocks in lang.
func sectionScript(t *testing.T, section, lang, file string) (script string, n int) {
	t.Helper()
	var b strings.Builder
	for _, block := range tsQuickstart(t, section) {
		switch block.lang {
		case "sh":
			b.WriteString(block.code + "\n")
		case lang:
			if strings.Contains(block.code, "\n__CODE__\n") {
				t.Fatalf("a %s block holds the test's heredoc marker", lang)
			}
			b.WriteString("cat >" + file + " <<'__CODE__'\n" + block.code + "__CODE__\n")
			n++
		default:
			t.Fatalf("a %s section block is %q: the test runs sh and %s blocks", section, block.lang, lang)
		}
	}
	return b.String(), n
}

// TestQuickstartCurl runs the quickstart's curl blocks, one after the
// other, as one bash script with -euo pipefail: from a sandbox key to a
// paid order's ticket, with nothing but bash, curl, awk and od.
func TestQuickstartCurl(t *testing.T) {
	var script strings.Builder
	for _, b := range tsQuickstart(t, "curl") {
		if b.lang != "bash" {
			t.Fatalf("a curl block is %q, not bash: the test runs them all", b.lang)
		}
		for _, tool := range []string{"jq", "uuidgen", "python"} {
			if regexp.MustCompile(`\b` + tool + `\b`).MatchString(b.code) {
				t.Errorf("the curl quickstart uses %s, which not every machine has:\n%s", tool, b.code)
			}
		}
		script.WriteString(b.code + "\n")
	}
	path := filepath.Join(t.TempDir(), "quickstart.sh")
	if err := os.WriteFile(path, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	base, key := tsSandbox(t)
	start := time.Now()
	out := tsRun(t, t.TempDir(), []string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key}, time.Minute,
		"bash", "-euo", "pipefail", path)
	t.Logf("the curl quickstart ran in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`event \d+: seat \S+ in \S+ is free`),
		regexp.MustCompile(`order \d+: pending_payment, \d+ \(minor units\) to pay`),
		regexp.MustCompile(`order \d+: paid\n`),
		regexp.MustCompile(`ticket \S+: barcode 2000\d{9}\n`),
		regexp.MustCompile(`the buyer's page: http://\S+/o/\d+\?access_token=\S+\n`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the curl quickstart did not print %s:\n%s", want, out)
		}
	}
}

// TestQuickstartTypeScript follows the quickstart's TypeScript section as
// a newcomer does, in a directory laid out as the repository: its shell
// blocks build and pack the SDK and make a project that installs the
// tarball, its TypeScript block is saved as first-ticket.ts, and the last
// shell block compiles it strictly and runs it with Node. The order.paid
// webhook the service then delivers is verified and typed by the SDK's
// constructEvent in that project.
func TestQuickstartTypeScript(t *testing.T) {
	// The page works in the repository's checkout and makes the project
	// beside it: the copy is laid out as <dir>/repo/sdk/ts.
	sdk := tsSDKCopy(t)
	repo := filepath.Dir(filepath.Dir(sdk))
	script, ts := sectionScript(t, "TypeScript", "ts", "first-ticket.ts")
	if ts != 1 || !strings.Contains(script, "node first-ticket.js") {
		t.Fatalf("the TypeScript section should save one block as first-ticket.ts and run it:\n%s", script)
	}
	path := filepath.Join(t.TempDir(), "quickstart.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	base, key := tsSandbox(t)
	hooks, secret := subscribeHooks(t, base, key, "order.paid")
	start := time.Now()
	// The user's npm cache first: a second run needs no network.
	out := tsRun(t, repo, []string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key, "npm_config_prefer_offline=true",
		"npm_config_audit=false", "npm_config_fund=false"}, 2*time.Minute, "bash", "-euo", "pipefail", path)
	t.Logf("the TypeScript quickstart ran in %s:\n%s", time.Since(start).Round(time.Millisecond), out)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`held \S+ of ".+" until \S+`),
		regexp.MustCompile(`ticket \S+: barcode 2000\d{9}, the buyer's page http://\S+/o/\d+\?access_token=\S+\n`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the TypeScript quickstart did not print %s:\n%s", want, out)
		}
	}

	// The order's order.paid delivery, verified and typed by the SDK's
	// constructEvent in the quickstart's project, compiled as strictly.
	d := hooks.first(t)
	project := filepath.Join(filepath.Dir(repo), "first-ticket")
	headers, _ := json.Marshal(map[string]string{"webhook-id": d.header.Get("webhook-id"),
		"webhook-timestamp": d.header.Get("webhook-timestamp"), "webhook-signature": d.header.Get("webhook-signature")})
	for name, b := range map[string][]byte{"delivery.body": d.body, "delivery.headers.json": headers, "verify-webhook.ts": []byte(tsVerifyWebhook)} {
		if err := os.WriteFile(filepath.Join(project, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tsRun(t, project, nil, time.Minute, "npx", "--no-install", "tsc", "--strict", "--module", "nodenext", "--target", "es2022", "verify-webhook.ts")
	out = tsRun(t, project, []string{"TICKETS_WEBHOOK_SECRET=" + secret}, time.Minute, "node", "verify-webhook.js")
	t.Logf("the TypeScript SDK's constructEvent: %s", out)
	if want := regexp.MustCompile(`webhook order\.paid evt_\S+: order \d+ is paid \(test: true\)\n`); !want.MatchString(out) {
		t.Errorf("the TypeScript SDK did not verify the order.paid delivery:\n%s", out)
	}
	cmd := exec.Command("node", "verify-webhook.js")
	cmd.Dir, cmd.Env = project, append(os.Environ(), "TICKETS_WEBHOOK_SECRET=whsec_b3RoZXIgc2VjcmV0")
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "WebhookVerificationError") {
		t.Errorf("verified with another secret: %v\n%s", err, b)
	}
}

// tsVerifyWebhook is a receiver's code: the delivery's raw body and
// headers, verified and narrowed by its type.
const tsVerifyWebhook = `import { readFileSync } from "node:fs";
import { constructEvent } from "@ticketsales/sdk";

const body = readFileSync("delivery.body");
const headers = JSON.parse(readFileSync("delivery.headers.json", "utf8")) as Record<string, string>;
const event = constructEvent(body, headers, process.env.TICKETS_WEBHOOK_SECRET!);
switch (event.type) {
  case "order.paid":
    console.log(` + "`webhook ${event.type} ${event.id}: order ${event.data.id} is ${event.data.status} (test: ${event.data.is_test})`" + `);
    break;
  default:
    throw new Error(` + "`unexpected ${event.type}`" + `);
}
`

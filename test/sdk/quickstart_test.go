package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
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
// paid order's ticket, and the order found by its reference, with nothing
// but bash, curl, awk and od.
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
	out, at := quickstartRun(t, t.TempDir(), []string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key}, time.Minute, path)
	t.Logf("the curl quickstart: the first ticket after %s, the order found by its reference after %s",
		at(quickstartTicket), at(quickstartFound))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`event \d+: seat \S+ in \S+ is free`),
		regexp.MustCompile(`order \d+: pending_payment, \d+ \(minor units\) to pay`),
		regexp.MustCompile(`order \d+: paid\n`),
		regexp.MustCompile(`ticket \S+: barcode 2000\d{9}\n`),
		regexp.MustCompile(`the buyer's page: http://\S+/o/\d+\?access_token=\S+\n`),
		regexp.MustCompile(`cart-[0-9a-f]{8} is order \d+: paid, payment pay-[0-9a-f]{32}\n`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the curl quickstart did not print %s:\n%s", want, out)
		}
	}
	// The order found by its reference is the one the steps made and paid.
	if id, found := regexp.MustCompile(`order (\d+): paid\n`).FindStringSubmatch(out),
		regexp.MustCompile(`is order (\d+):`).FindStringSubmatch(out); id == nil || found == nil || id[1] != found[1] {
		t.Errorf("the lookup by reference found another order:\n%s", out)
	}
}

// What the quickstart programs print on the way, for the times the tests log.
var (
	quickstartTicket     = regexp.MustCompile(`^ticket `)
	quickstartFound      = regexp.MustCompile(`^cart-\S+ is order `)
	quickstartReconciled = regexp.MustCompile(`^reconciled `)
)

// stampedOutput is a program's output and when each of its lines ended.
type stampedOutput struct {
	mu    sync.Mutex
	start time.Time
	all   bytes.Buffer
	line  []byte
	lines []stampedLine
}

type stampedLine struct {
	text string
	at   time.Duration
}

func (o *stampedOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all.Write(p)
	for _, c := range p {
		if c != '\n' {
			o.line = append(o.line, c)
			continue
		}
		o.lines = append(o.lines, stampedLine{string(o.line), time.Since(o.start)})
		o.line = o.line[:0]
	}
	return len(p), nil
}

// quickstartRun runs a quickstart section's script with bash -euo
// pipefail, as tsRun does, logs its output with the time of each line,
// and answers the output and at: how long after the start the first line
// matching a pattern was printed (the run's whole time for a pattern
// never printed, which the test's assertions then report).
func quickstartRun(t *testing.T, dir string, env []string, limit time.Duration, script string) (string, func(*regexp.Regexp) time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "npm_config_update_notifier=false", "NO_COLOR=1"), env...)
	out := &stampedOutput{start: time.Now()}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	total := time.Since(out.start)
	if err != nil {
		t.Fatalf("bash %s: %v (after %s)\n%s", script, err, total.Round(time.Millisecond), out.all.String())
	}
	// The transcript with each line's time, to see what each step took.
	var lines strings.Builder
	for _, l := range out.lines {
		if strings.TrimSpace(l.text) != "" {
			fmt.Fprintf(&lines, "%7.3fs %s\n", l.at.Seconds(), l.text)
		}
	}
	t.Logf("the whole script: %s\n%s", total.Round(time.Millisecond), lines.String())
	return out.all.String(), func(re *regexp.Regexp) time.Duration {
		for _, l := range out.lines {
			if re.MatchString(l.text) {
				return l.at.Round(time.Millisecond)
			}
		}
		return total.Round(time.Millisecond)
	}
}

// reconciledPattern is the quickstart programs' last line: the order found
// by the reference, what was paid and what its refunds returned.
var reconciledPattern = regexp.MustCompile(`reconciled (cart-\S+): order (\d+) paid (\d+), refunded (\d+)\n`)

// checkReconciled checks a quickstart program's reconciliation line and,
// through the API, that the order it names carries the reference and the
// metadata and is refunded whole; it answers the reference and the order.
func checkReconciled(t *testing.T, base, key, out string) (string, int64) {
	t.Helper()
	m := reconciledPattern.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the quickstart did not print %s:\n%s", reconciledPattern, out)
	}
	ref := m[1]
	id, _ := strconv.ParseInt(m[2], 10, 64)
	if m[3] != m[4] || m[3] == "0" {
		t.Errorf("%s: paid %s, refunded %s", ref, m[3], m[4])
	}
	c, err := ticketsales.New(base, key)
	if err != nil {
		t.Fatal(err)
	}
	var found []ticketsales.Order
	for o, err := range c.Orders(context.Background(), &ticketsales.ListOrdersParams{FilterReference: &ref}) {
		if err != nil {
			t.Fatalf("orders of %s: %v", ref, err)
		}
		found = append(found, o)
	}
	if len(found) != 1 {
		t.Fatalf("orders with reference %s: %d, want 1: %+v", ref, len(found), found)
	}
	o := found[0]
	if o.Id != id || o.Status != ticketsales.OrderStatusRefunded || o.Reference == nil || *o.Reference != ref ||
		len(o.Metadata) == 0 || strconv.FormatInt(o.Amount.Amount, 10) != m[3] || o.PaymentId == nil {
		t.Errorf("the order of %s, read back: %+v", ref, o)
	}
	return ref, id
}

// TestQuickstartTypeScript follows the quickstart's TypeScript section as
// a newcomer does, in a directory laid out as the repository: its shell
// blocks build and pack the SDK and make a project that installs the
// tarball, its TypeScript block is saved as first-ticket.ts, and the last
// shell block compiles it strictly and runs it with Node: a first ticket,
// then the order found by its reference, refunded and reconciled. The
// order.paid and order.refunded webhooks the service delivers are
// verified and typed by the SDK's constructEvent in that project.
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
	hooks, secret := subscribeHooks(t, base, key, "order.paid", "order.refunded")
	// The user's npm cache first: a second run needs no network.
	out, at := quickstartRun(t, repo, []string{"TICKETS_URL=" + base, "TICKETS_KEY=" + key, "npm_config_prefer_offline=true",
		"npm_config_audit=false", "npm_config_fund=false"}, 2*time.Minute, path)
	t.Logf("the TypeScript quickstart: the first ticket after %s, the refund reconciled after %s",
		at(quickstartTicket), at(quickstartReconciled))
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`held \S+ of ".+" until \S+`),
		regexp.MustCompile(`ticket \S+: barcode 2000\d{9}, the buyer's page http://\S+/o/\d+\?access_token=\S+\n`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the TypeScript quickstart did not print %s:\n%s", want, out)
		}
	}
	ref, id := checkReconciled(t, base, key, out)

	// The order's order.paid and order.refunded deliveries, verified and
	// typed by the SDK's constructEvent in the quickstart's project,
	// compiled as strictly.
	project := filepath.Join(filepath.Dir(repo), "first-ticket")
	files := map[string][]byte{"verify-webhook.ts": []byte(tsVerifyWebhook)}
	for name, typ := range map[string]string{"paid": "order.paid", "refunded": "order.refunded"} {
		d := hooks.ofType(t, typ)
		headers, _ := json.Marshal(map[string]string{"webhook-id": d.header.Get("webhook-id"),
			"webhook-timestamp": d.header.Get("webhook-timestamp"), "webhook-signature": d.header.Get("webhook-signature")})
		files[name+".body"], files[name+".headers.json"] = d.body, headers
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(project, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tsRun(t, project, nil, time.Minute, "npx", "--no-install", "tsc", "--strict", "--module", "nodenext", "--target", "es2022", "verify-webhook.ts")
	for name, want := range map[string]*regexp.Regexp{
		"paid": regexp.MustCompile(fmt.Sprintf(`webhook order\.paid evt_\S+: order %d \(%s\) is paid \(test: true\)\n`, id, regexp.QuoteMeta(ref))),
		"refunded": regexp.MustCompile(fmt.Sprintf(`webhook order\.refunded evt_\S+: refund \S+ of order %d \(%s\), %s, the order refunded\n`,
			id, regexp.QuoteMeta(ref), reconciledPattern.FindStringSubmatch(out)[4])),
	} {
		out := tsRun(t, project, []string{"TICKETS_WEBHOOK_SECRET=" + secret}, time.Minute, "node", "verify-webhook.js", name)
		t.Logf("the TypeScript SDK's constructEvent: %s", out)
		if !want.MatchString(out) {
			t.Errorf("the TypeScript SDK did not verify the %s delivery as %s:\n%s", name, want, out)
		}
	}
	cmd := exec.Command("node", "verify-webhook.js", "paid")
	cmd.Dir, cmd.Env = project, append(os.Environ(), "TICKETS_WEBHOOK_SECRET=whsec_b3RoZXIgc2VjcmV0")
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "WebhookVerificationError") {
		t.Errorf("verified with another secret: %v\n%s", err, b)
	}
}

// tsVerifyWebhook is a receiver's code: the delivery's raw body and
// headers, verified and narrowed by its type.
const tsVerifyWebhook = `import { readFileSync } from "node:fs";
import { constructEvent } from "@ticketsales/sdk";

const name = process.argv[2];
const body = readFileSync(` + "`${name}.body`" + `);
const headers = JSON.parse(readFileSync(` + "`${name}.headers.json`" + `, "utf8")) as Record<string, string>;
const event = constructEvent(body, headers, process.env.TICKETS_WEBHOOK_SECRET!);
switch (event.type) {
  case "order.paid":
    console.log(` + "`webhook ${event.type} ${event.id}: order ${event.data.id} (${event.data.reference}) is ${event.data.status} (test: ${event.data.is_test})`" + `);
    break;
  case "order.refunded":
    // The refund, or only its ids if the sandbox order is gone already.
    if (!("amount" in event.data)) throw new Error(` + "`refund ${event.data.id} of a deleted order`" + `);
    console.log(` + "`webhook ${event.type} ${event.id}: refund ${event.data.id} of order ${event.data.order_id} (${event.data.order_reference}), ${event.data.amount.amount}, the order ${event.data.order_status}`" + `);
    break;
  default:
    throw new Error(` + "`unexpected ${event.type}`" + `);
}
`

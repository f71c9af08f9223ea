package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// sandboxDoorMark is how the cabinet marks a sandbox door key.
const sandboxDoorMark = "SANDBOX — test tickets only"

// keyState is the key's prefix and whether it is revoked.
func keyState(t *testing.T, s *testenv.Stack, id int64) (prefix string, revoked bool) {
	t.Helper()
	if err := s.DB.NewRaw("SELECT key_prefix, revoked_at IS NOT NULL FROM api_keys WHERE id = ?", id).
		Scan(context.Background(), &prefix, &revoked); err != nil {
		t.Fatal(err)
	}
	return prefix, revoked
}

// keyRow is the keys list's row of the key.
func keyRow(t *testing.T, body string, id int64) string {
	t.Helper()
	m := regexp.MustCompile(fmt.Sprintf(`(?s)<tr data-key-id="%d">.*?</tr>`, id)).FindString(body)
	if m == "" {
		t.Fatalf("key %d is not in the list", id)
	}
	return m
}

// TestCabinetKeysRevokeConfirms: Revoke on the keys list opens a page
// naming the key and what stops; a POST without the page's confirmation
// (the old one-click form, or a wrong value) or from another site is
// refused and revokes nothing; the page's form revokes.
func TestCabinetKeysRevokeConfirms(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "boss@acme.test"))
	_, id := s.Key(t, company, apikey.Production)
	prefix, _ := keyState(t, s, id)
	path := fmt.Sprintf("/cabinet/keys/%d/revoke", id)

	list := b.get("/cabinet/keys")
	row := keyRow(t, list.Body, id)
	if !strings.Contains(row, `href="`+path+`"`) || strings.Contains(row, "<form") {
		t.Fatalf("the list's Revoke is not a link to the confirmation:\n%s", row)
	}
	confirm := b.get(path)
	for _, want := range []string{prefix, "production", "Production key: every order", `name="confirm" value="` + prefix + `"`, `id="confirm-revoke"`, "Last used"} {
		if confirm.Status != http.StatusOK || !strings.Contains(confirm.Body, want) {
			t.Fatalf("the confirmation page lacks %q: %d\n%.3000s", want, confirm.Status, confirm.Body)
		}
	}
	if _, revoked := keyState(t, s, id); revoked {
		t.Fatal("opening the confirmation revoked the key")
	}
	for name, form := range map[string]url.Values{"no confirmation": nil, "a wrong one": {"confirm": {"ts_wrong"}}} {
		p := b.post(path, form)
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, "Nothing was revoked") || !strings.Contains(p.Body, `id="confirm-revoke"`) {
			t.Fatalf("a POST with %s: %d\n%.2000s", name, p.Status, p.Body)
		}
		if _, revoked := keyState(t, s, id); revoked {
			t.Fatalf("a POST with %s revoked the key", name)
		}
	}
	// The confirmation's form is guarded as every form: from another
	// origin, even with the right field, it is refused.
	if p := b.post(path, url.Values{"confirm": {prefix}}, "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
		t.Fatalf("a cross-site confirmed POST: %d", p.Status)
	}
	if _, revoked := keyState(t, s, id); revoked {
		t.Fatal("a cross-site POST revoked the key")
	}
	p := b.post(path, url.Values{"confirm": {prefix}})
	if p.Status != http.StatusOK || p.URL.Path != "/cabinet/keys" || !strings.Contains(p.Body, fmt.Sprintf("Key %d is revoked", id)) {
		t.Fatalf("confirmed revoke: %d %s", p.Status, p.URL)
	}
	if _, revoked := keyState(t, s, id); !revoked {
		t.Fatal("the confirmed revoke left the key usable")
	}
	if p := b.get(path); p.URL.Path != "/cabinet/keys" || !strings.Contains(p.Body, "already revoked") {
		t.Fatalf("the confirmation of a revoked key: %d %s", p.Status, p.URL)
	}
	if p := b.get("/cabinet/keys/999999999/revoke"); p.Status != http.StatusNotFound {
		t.Fatalf("the confirmation of no key: %d", p.Status)
	}
}

// TestCabinetKeysDoorDefaultsAndSandboxMark: an owner's key form chooses
// production; a sandbox door key is warned about on the form and marked
// on the created page, the list and the revoke confirmation, and a
// production door key is not.
func TestCabinetKeysDoorDefaultsAndSandboxMark(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "boss@acme.test"))

	form := b.get("/cabinet/keys").Body
	if !regexp.MustCompile(`id="env-production"\s+checked`).MatchString(form) || regexp.MustCompile(`id="env-sandbox"\s+checked`).MatchString(form) {
		t.Fatal("the key form does not default to production")
	}
	warn := regexp.MustCompile(`(?s)id="door-sandbox">(.*?)</p>`).FindStringSubmatch(form)
	if warn == nil || !strings.Contains(warn[1], sandboxDoorMark) || !strings.Contains(warn[1], "<code>unknown</code>") ||
		!strings.Contains(warn[1], "production check-in page") {
		t.Fatalf("the form's sandbox door warning: %v", warn)
	}

	created := b.postKeyForm(url.Values{"environment": {"sandbox"}, "name": {"test scanner"}, "kind": {"door"}, "gate": {"Test"}})
	newKeyOn(t, created)
	if !strings.Contains(created.Body, `id="new-key-sandbox"`) || !strings.Contains(created.Body, sandboxDoorMark) {
		t.Fatalf("the created sandbox door key is not marked:\n%.3000s", created.Body)
	}
	prod := b.postKeyForm(url.Values{"environment": {"production"}, "name": {"north door"}, "kind": {"door"}, "gate": {"North"}})
	newKeyOn(t, prod)
	if strings.Contains(prod.Body, `id="new-key-sandbox"`) { // the form's hidden warning says it too
		t.Fatal("a production door key is marked sandbox")
	}
	var sandboxID, prodID int64
	if err := s.DB.NewRaw("SELECT id FROM api_keys WHERE name = 'test scanner'").Scan(context.Background(), &sandboxID); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.NewRaw("SELECT id FROM api_keys WHERE name = 'north door'").Scan(context.Background(), &prodID); err != nil {
		t.Fatal(err)
	}
	list := b.get("/cabinet/keys").Body
	if !strings.Contains(keyRow(t, list, sandboxID), sandboxDoorMark) || strings.Contains(keyRow(t, list, prodID), sandboxDoorMark) {
		t.Fatal("the list does not mark the sandbox door key alone")
	}
	sc := b.get(fmt.Sprintf("/cabinet/keys/%d/revoke", sandboxID)).Body
	if !strings.Contains(sc, sandboxDoorMark) || !strings.Contains(sc, "Sandbox door key") || !strings.Contains(sc, "gate Test") {
		t.Fatalf("the sandbox door key's confirmation:\n%.3000s", sc)
	}
	pc := b.get(fmt.Sprintf("/cabinet/keys/%d/revoke", prodID)).Body
	if strings.Contains(pc, sandboxDoorMark) || !strings.Contains(pc, "Production door key: the scanners") || !strings.Contains(pc, "gate North") {
		t.Fatalf("the production door key's confirmation:\n%.3000s", pc)
	}
}

// TestCabinetKeysRevokeInBrowser: in Chromium, the door key form starts
// at production and warns once Sandbox is chosen; Revoke on the list opens
// the confirmation, which fits 1280 and 390 px with nothing sticking out
// (screenshots key-revoke-*.png), and its button revokes.
func TestCabinetKeysRevokeInBrowser(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	base, _ := outboxInstance(t, s)
	_, id := s.Key(t, company, apikey.Sandbox, apikey.ScopeCheckin)
	if _, err := s.DB.NewRaw("UPDATE api_keys SET name = ?, checkin_gate = ? WHERE id = ?", fitKeyName, fitGate, id).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	run("sign in", chromedp.Navigate(cabinetUser(t, s, base, company, "boss@acme.test")),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#totals")))
	sel := fmt.Sprintf("#revoke-%d", id)
	run("open the keys", chromedp.Navigate(base+"/cabinet/keys"), chromedp.WaitVisible(chromedp.CSS(sel)))
	visible := func(sel string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).offsetParent !== null`, sel)))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	run("choose a door key", chromedp.Click(chromedp.CSS("#kind-door")))
	if !visible("#door-production") || visible("#door-sandbox") {
		t.Fatal("the door key form does not start at production")
	}
	run("choose sandbox", chromedp.Click(chromedp.CSS("#env-sandbox")))
	if !visible("#door-sandbox") || visible("#door-production") {
		t.Fatal("choosing a sandbox door key shows no warning")
	}
	pageFits(t, ctx, "keys-sandbox-door", nil)
	run("click Revoke", chromedp.Click(chromedp.CSS(sel)), chromedp.WaitVisible(chromedp.CSS("#confirm-revoke")))
	if _, revoked := keyState(t, s, id); revoked {
		t.Fatal("clicking Revoke on the list revoked at once")
	}
	pageFits(t, ctx, "key-revoke", func(t *testing.T, width int64) {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]fitViolation](fmt.Sprintf("%s(%d)", measureFit, width)))
		if err != nil || len(got) > 0 {
			t.Fatalf("the confirmation at %d px: %v %+v", width, err, got)
		}
	})
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#confirm-revoke")))
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("confirm: %v %v", res, err)
	}
	if _, revoked := keyState(t, s, id); !revoked {
		t.Fatal("the confirmation's button did not revoke")
	}
}

package api_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/api/cabinet"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func sessionCookie(t *testing.T, h http.Header) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == cabinet.CookieName {
			return c
		}
	}
	return nil
}

// TestCabinetSignInSessionsAndCSRF: a one-time link sets the password and
// signs in; the link works once; the session cookie is HttpOnly and
// SameSite=Lax, lasts SessionLifetime at most and ends on sign-out; wrong
// passwords get 401 and then 429; a cross-site POST is refused and changes
// nothing.
func TestCabinetSignInSessionsAndCSRF(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	link := cabinetUser(t, s, s.URL, company, "Boss@Acme.Test")
	b := newBrowserless(t, s.URL, nil)

	for _, path := range []string{"/cabinet", "/cabinet/", "/cabinet/report"} {
		if p := b.get(path); p.Status != 200 || p.URL.Path != "/cabinet/signin" {
			t.Fatalf("%s without a session: %d %s", path, p.Status, p.URL)
		}
	}
	// Passwords that differ or are short are refused; the link still works.
	if p := b.post(link, url.Values{"password": {"short"}, "password_again": {"short"}}); p.Status != 422 {
		t.Fatalf("short password: %d", p.Status)
	}
	if p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword + "!"}}); p.Status != 422 {
		t.Fatalf("passwords that differ: %d", p.Status)
	}
	// The answer that signs in sets the cookie: check its flags.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Jar: b.c.Jar}
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	ck := sessionCookie(t, res.Header)
	if res.StatusCode != http.StatusSeeOther || ck == nil {
		t.Fatalf("set password: %d, cookie %v", res.StatusCode, res.Header.Values("Set-Cookie"))
	}
	if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure || ck.Path != "/cabinet" {
		t.Fatalf("session cookie over plain http: %+v", ck)
	}
	var expiry time.Time
	if err := s.DB.NewRaw("SELECT max(expiry) FROM cabinet_sessions").Scan(context.Background(), &expiry); err != nil {
		t.Fatal(err)
	}
	if d := time.Until(expiry); d <= 0 || d > cabinet.SessionLifetime {
		t.Fatalf("session expires in %s", d)
	}
	if p := b.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "boss@acme.test") {
		t.Fatalf("report after sign-in: %d %.300s", p.Status, p.Body)
	}
	// The link worked once.
	if p := b.get(link); p.Status != 404 {
		t.Fatalf("a used link: %d", p.Status)
	}

	// Cross-site POSTs are refused and create no key.
	form := url.Values{"environment": {"production"}, "name": {"evil"}, "scopes": {"orders:read"}}
	if p := b.post("/cabinet/keys", form, "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
		t.Fatalf("cross-site POST (Sec-Fetch-Site): %d", p.Status)
	}
	if p := b.post("/cabinet/keys", form, "Origin: https://evil.example"); p.Status != http.StatusForbidden {
		t.Fatalf("cross-site POST (Origin): %d", p.Status)
	}
	if p := b.post("/cabinet/signout", nil, "Origin: https://evil.example"); p.Status != http.StatusForbidden {
		t.Fatalf("cross-site sign-out: %d", p.Status)
	}
	var keys int
	if err := s.DB.NewRaw("SELECT count(*) FROM api_keys").Scan(context.Background(), &keys); err != nil || keys != 0 {
		t.Fatalf("keys after refused posts: %d %v", keys, err)
	}
	// The same form from the cabinet's own origin works.
	p := b.postKeyForm(form, "Origin: "+s.URL, "Sec-Fetch-Site: same-origin")
	if p.Status != http.StatusOK || p.URL.Path != "/cabinet/keys/created" || !regexp.MustCompile(`value="tk_production_[0-9a-f]{48}"`).MatchString(p.Body) {
		t.Fatalf("same-origin create: %d %.500s", p.Status, p.Body)
	}

	// Sign out ends the session.
	if p := b.post("/cabinet/signout", nil); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("sign out: %d %s", p.Status, p.URL)
	}
	if p := b.get("/cabinet/keys"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("keys after sign-out: %s", p.URL)
	}
	var sessions int
	if err := s.DB.NewRaw("SELECT count(*) FROM cabinet_sessions").Scan(context.Background(), &sessions); err != nil || sessions != 0 {
		t.Fatalf("sessions after sign-out: %d %v", sessions, err)
	}

	// Sign in with the password; wrong ones get 401, then 429.
	if p := b.signIn("boss@acme.test", cabinetPassword); p.Status != 200 || p.URL.Path != "/cabinet/report" {
		t.Fatalf("sign in: %d %s", p.Status, p.URL)
	}
	// A session past its expiry is gone: the user signs in again.
	if _, err := s.DB.NewRaw("UPDATE cabinet_sessions SET expiry = now() - interval '1 second'").Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("report with an expired session: %s", p.URL)
	}
	other := newBrowserless(t, s.URL, nil)
	for i := range 5 {
		if p := other.signIn("boss@acme.test", "wrong password "+fmt.Sprint(i)); p.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, p.Status)
		}
	}
	p = other.signIn("boss@acme.test", cabinetPassword)
	if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("after five wrong passwords, even the right one waits: %d", p.Status)
	}
	if p := other.signIn("nobody@acme.test", "whatever password"); p.Status != http.StatusUnauthorized {
		t.Fatalf("unknown e-mail: %d", p.Status)
	}
}

// TestCabinetCookieSecureBehindTLS: the session cookie is Secure when the
// deployment's public URL is https (TLS ends at a proxy), and on a request
// that arrives over TLS itself.
func TestCabinetCookieSecureBehindTLS(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name, publicURL string
		tls             bool
	}{
		{"https public URL", "https://tickets.example", false},
		{"TLS request", "http://127.0.0.1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := cabinet.New(cabinet.Deps{DB: s.DB, Users: organizer.New(s.DB, nil, organizer.Limits{}), PublicBaseURL: tc.publicURL, Log: log})
			var srv *httptest.Server
			if tc.tls {
				srv = httptest.NewTLSServer(h)
			} else {
				srv = httptest.NewServer(h)
			}
			t.Cleanup(srv.Close)
			link := cabinetUser(t, s, srv.URL, company, strings.ReplaceAll(tc.name, " ", "-")+"@acme.test")
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
				Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
			res, err := c.PostForm(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			ck := sessionCookie(t, res.Header)
			if ck == nil || !ck.Secure || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
				t.Fatalf("cookie: %v", res.Header.Values("Set-Cookie"))
			}
		})
	}
}

// TestCabinetPagesScopedToCompany: a user of company B sees none of
// company A's keys, requests or sales, and A's ids are 404 to B.
func TestCabinetPagesScopedToCompany(t *testing.T) {
	f := newFixture(t)
	var companyB, keyAID, keyBID int64
	if err := f.DB.NewRaw("SELECT id FROM companies WHERE id <> ?", f.companyA).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw(`SELECT k.id FROM api_keys k JOIN applications a ON a.id = k.application_id WHERE a.company_id = ?`,
		f.companyA).Scan(context.Background(), &keyAID); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw(`SELECT k.id FROM api_keys k JOIN applications a ON a.id = k.application_id WHERE a.company_id = ?`,
		companyB).Scan(context.Background(), &keyBID); err != nil {
		t.Fatal(err)
	}
	resA := f.Get(t, "/v1/events", f.keyA)
	resB := f.Get(t, "/v1/events", f.keyB)
	ridA, ridB := resA.Header.Get("X-Request-Id"), resB.Header.Get("X-Request-Id")

	bUser := newBrowserless(t, f.URL, nil)
	bUser.setPassword(cabinetUser(t, f.Stack, f.URL, companyB, "b@b.test"))

	// Wait for B's request to be in the log, so an absent A request is not
	// merely unflushed.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if p := bUser.get("/cabinet/requests?request_id=" + ridB); strings.Contains(p.Body, `data-request-id="`+ridB+`"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("company B's request never reached the log")
		}
	}
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM request_log WHERE request_id = ?", ridA).Scan(context.Background(), &n); err != nil || n != 1 {
		t.Fatalf("company A's request in the log: %d %v", n, err)
	}
	if p := bUser.get("/cabinet/requests?request_id=" + ridA); strings.Contains(p.Body, `data-request-id="`+ridA+`"`) {
		t.Fatal("company B found company A's request by its id")
	}
	if p := bUser.get("/cabinet/requests"); strings.Contains(p.Body, ridA) || !strings.Contains(p.Body, ridB) {
		t.Fatal("company B's request log shows A's requests or misses its own")
	}
	for _, path := range []string{
		fmt.Sprintf("/cabinet/report?event=%d", f.ids["swan-lake"]),
		fmt.Sprintf("/cabinet/report.csv?event=%d", f.ids["swan-lake"]),
		fmt.Sprintf("/cabinet/requests?key=%d", keyAID),
		"/cabinet/no-such-page",
	} {
		if p := bUser.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s as company B: %d", path, p.Status)
		}
	}
	if p := bUser.post(fmt.Sprintf("/cabinet/keys/%d/revoke", keyAID), nil); p.Status != http.StatusNotFound {
		t.Fatalf("company B revoking A's key: %d", p.Status)
	}
	if res := f.Get(t, "/v1/events", f.keyA); res.Status != 200 {
		t.Fatalf("A's key after B's attempt to revoke it: %d", res.Status)
	}
	keys := bUser.get("/cabinet/keys")
	if !strings.Contains(keys.Body, `id="applications"`) || strings.Count(keys.Body, "data-application=") != 1 {
		t.Fatalf("company B's applications:\n%s", keys.Body)
	}
	if !strings.Contains(keys.Body, fmt.Sprintf(`data-key-id="%d"`, keyBID)) || strings.Contains(keys.Body, fmt.Sprintf(`data-key-id="%d"`, keyAID)) {
		t.Fatalf("company B's keys page:\n%s", keys.Body)
	}
	cat := bUser.get("/cabinet/catalog")
	if strings.Contains(cat.Body, "Swan Lake") || !strings.Contains(cat.Body, "Gig") {
		t.Fatal("company B's catalog shows A's events or misses its own")
	}
	if p := bUser.get(fmt.Sprintf("/cabinet/report?event=%d", f.foreignID)); p.Status != 200 {
		t.Fatalf("company B's own event in its report: %d", p.Status)
	}
}

// withOutbox gives the stack's worker a mailer writing to a temporary
// outbox: production orders e-mail their tickets.
func withOutbox(t *testing.T, f *fixture) {
	t.Helper()
	m, err := mail.New("", t.TempDir(), "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = m
}

// reportTotals reads the total row of the cabinet's CSV.
func reportTotals(t *testing.T, b *browserless, query string) map[string]string {
	t.Helper()
	p := b.get("/cabinet/report.csv?" + query)
	if p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("report csv: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil || len(rows) < 2 || rows[1][0] != "total" {
		t.Fatalf("report csv: %v\n%s", err, p.Body)
	}
	m := map[string]string{}
	for i, h := range rows[0] {
		m[h] = rows[1][i]
	}
	return m
}

// TestCabinetReportEqualsOrdersAndRefunds sells through the real API:
// two production orders (one partly refunded) and a sandbox order. The
// cabinet's figures equal the production orders' amounts and the refund,
// the sandbox order is absent, and company B's user sees none of it.
func TestCabinetReportEqualsOrdersAndRefunds(t *testing.T) {
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	a := f.paidOrder(t, prod, "parterre-3-1", "parterre-3-2", "balcony-1-3")
	b := f.paidOrder(t, prod, "parterre-3-3")
	f.paidOrder(t, f.keyA, "parterre-3-4", "parterre-3-5") // sandbox

	var oa, ob orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", a), prod).Decode(t, &oa)
	f.Get(t, fmt.Sprintf("/v1/orders/%d", b), prod).Decode(t, &ob)
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", a), prod).Decode(t, &tb)
	res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", a), prod,
		fmt.Sprintf(`{"ticket_ids": [%d], "reason": "cannot come"}`, tb.Data[0].ID), idemKey(t))
	var rb refundBody
	res.Decode(t, &rb)
	if res.Status != 201 || rb.Data.Status != "completed" {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}

	user := newBrowserless(t, f.URL, nil)
	user.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "a@a.test"))
	got := reportTotals(t, user, "")
	gross := oa.Data.Amount.Amount + ob.Data.Amount.Amount
	fees := oa.Data.ServiceFee.Amount + ob.Data.ServiceFee.Amount
	refunds := rb.Data.Amount.Amount
	// A partial refund: the service keeps both orders' fees (on top).
	want := map[string]string{"tickets_sold": "4", "tickets_refunded": "1", "tickets_net": "3", "orders": "2", "currency": "RUB",
		"gross": report.Units(gross), "service_fees": report.Units(fees), "refunds": report.Units(refunds),
		"face_value_refunded": report.Units(refunds), "fees_kept": report.Units(fees),
		"net_to_organizer": report.Units(gross - refunds - fees)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("report %s = %s, want %s (the orders' and refund's sum)", k, got[k], v)
		}
	}
	page := user.get("/cabinet/report")
	if !strings.Contains(page.Body, fmt.Sprintf(`id="t-gross" data-minor="%d"`, gross)) || !strings.Contains(page.Body, "<svg") {
		t.Fatalf("report page:\n%.2000s", page.Body)
	}

	var companyB int64
	if err := f.DB.NewRaw("SELECT id FROM companies WHERE id <> ?", f.companyA).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	other := newBrowserless(t, f.URL, nil)
	other.setPassword(cabinetUser(t, f.Stack, f.URL, companyB, "b@b.test"))
	if got := reportTotals(t, other, ""); got["tickets_sold"] != "0" || got["gross"] != "0.00" || got["refunds"] != "0.00" {
		t.Fatalf("company B's report shows A's sales: %v", got)
	}
}

// TestCabinetInBrowser drives the cabinet in headless Chromium against an
// api instance configured as in production (keys cached for 10 s): sign in
// through a one-time link, read the report, create a key and use it on /v1,
// revoke it (the next request gets 401 at once: the cache forgot it), find
// a request by its request_id, upload a bad catalog file and read its
// errors. Screenshots at desktop and phone width go to .data/artifacts/cabinet.
func TestCabinetInBrowser(t *testing.T) {
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	sold := f.paidOrder(t, prod, "parterre-2-10", "parterre-2-11")
	f.paidOrder(t, f.keyA, "parterre-2-12") // sandbox: not in the report
	var o orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", sold), prod).Decode(t, &o)

	base := f.ProductionLikeAPI(t)
	link := cabinetUser(t, f.Stack, base, f.companyA, "organizer@a.test")
	ctx := newBrowser(t, 3*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	// submit clicks a button that submits a form and waits for the answer.
	submit := func(step string, button string, wantStatus int64) {
		t.Helper()
		res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if res.Status != wantStatus {
			t.Fatalf("%s: %d %s, want %d", step, res.Status, res.URL, wantStatus)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}

	// Sign in through the link: set the password, land on the report.
	run("open the sign-in link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword))
	submit("set the password", "#set-password", 200)
	run("the report", chromedp.WaitVisible(chromedp.CSS("#totals")))
	if got := text("#t-sold"); got != "2" {
		t.Fatalf("tickets sold on the report: %q, want 2 (the sandbox order is not counted)", got)
	}
	gross, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#t-gross').dataset.minor`))
	if err != nil || gross != fmt.Sprint(o.Data.Amount.Amount) {
		t.Fatalf("gross on the report: %q (%v), want %d", gross, err, o.Data.Amount.Amount)
	}
	if got := text("#t-gross"); !strings.Contains(got, money(o.Data.Amount.Amount)) {
		t.Fatalf("gross shown as %q, want %s", got, money(o.Data.Amount.Amount))
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#chart rect.gross').length`))
	if err != nil || bars < 1 {
		t.Fatalf("the chart has %d bars (%v)", bars, err)
	}
	// Usable on a phone: the page itself does not scroll sideways (wide
	// tables scroll inside their own boxes).
	pageFits(t, ctx, "report", nil)

	// Every file the pages load comes from this server.
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[location.href, ...performance.getEntriesByType('resource').map(e => e.name)]`))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range loaded {
		if !strings.HasPrefix(u, base+"/") {
			t.Errorf("the cabinet loaded %s from outside this server", u)
		}
	}

	// Create a production key; it is shown once, and it works.
	run("open API & integrations", chromedp.Navigate(base+"/cabinet/keys"), chromedp.WaitVisible(chromedp.CSS("#create-key")),
		chromedp.Click(chromedp.CSS("#env-production")), chromedp.SendKeys(chromedp.CSS("#key-name"), "box office"))
	submit("create a key", "#create-key", 200) // 303 to the page that shows it once
	key, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#new-key")))
	if err != nil || !apikey.WellFormed(key) || !strings.HasPrefix(key, "tk_production_") {
		t.Fatalf("the new key: %q %v", key, err)
	}
	keyID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#new-key').dataset.keyId`))
	if err != nil {
		t.Fatal(err)
	}
	run("copy the key", chromedp.Click(chromedp.CSS("#copy-key")))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#copy-key').textContent === 'Copied'`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the copy button says %q: %v", text("#copy-key"), err)
	}
	res := testenv.Do(t, base, http.MethodGet, "/v1/events", key, "")
	if res.Status != 200 {
		t.Fatalf("the new key on /v1: %d %s", res.Status, res.Body)
	}
	requestID := res.Header.Get("X-Request-Id")
	pageFits(t, ctx, "keys-created", nil)

	// Revoke it: the same api instance refuses it at once, though it
	// cached the key a moment ago.
	run("reload keys", chromedp.Navigate(base+"/cabinet/keys"), chromedp.WaitVisible(chromedp.CSS("#revoke-"+keyID)))
	run("open the revoke confirmation", chromedp.Click(chromedp.CSS("#revoke-"+keyID)), chromedp.WaitVisible(chromedp.CSS("#confirm-revoke")))
	submit("revoke the key", "#confirm-revoke", 200)
	if got := text("#notice"); !strings.Contains(got, "revoked") {
		t.Fatalf("after revoking: %q", got)
	}
	if res := testenv.Do(t, base, http.MethodGet, "/v1/events", key, ""); res.Status != http.StatusUnauthorized {
		t.Fatalf("the revoked key on /v1: %d", res.Status)
	}

	// Find the key's request by its request_id (the log is written in
	// batches: try until it is there).
	found := false
	for deadline := time.Now().Add(20 * time.Second); !found && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		run("search the request log", chromedp.Navigate(base+"/cabinet/requests"), chromedp.WaitVisible(chromedp.CSS("#request_id")),
			chromedp.SendKeys(chromedp.CSS("#request_id"), requestID))
		submit("find", "#find", 200)
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll('#requests tr[data-request-id=%q]').length`, requestID)))
		if err != nil {
			t.Fatal(err)
		}
		found = n == 1
	}
	if !found {
		t.Fatalf("request %s not found in the cabinet's request log", requestID)
	}
	if row := text(fmt.Sprintf(`#requests tr[data-request-id=%q]`, requestID)); !strings.Contains(row, "/v1/events") || !strings.Contains(row, "200") {
		t.Fatalf("the request's row: %q", row)
	}
	pageFits(t, ctx, "requests", nil)

	// A bad catalog file: every error listed with its path, nothing imported.
	var eventsBefore int
	if err := f.DB.NewRaw("SELECT count(*) FROM events").Scan(context.Background(), &eventsBefore); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad-catalog.json")
	if err := os.WriteFile(bad, []byte(`{"cities": [{"ref": "ekb", "name": "Yekaterinburg"}],
	  "events": [{"ref": "new-show", "title": "", "slug": "new-show", "status": "published", "starts_at": "2030-01-01T20:00:00+05:00",
	    "venue": "nowhere", "fee": {"mode": "separate", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "ga", "name": "GA", "price": -5, "capacity": 10}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run("open the catalog", chromedp.Navigate(base+"/cabinet/catalog"), chromedp.WaitVisible(chromedp.CSS("#events")))
	if got := text("#events"); !strings.Contains(got, "Swan Lake") {
		t.Fatalf("catalog page events: %q", got)
	}
	run("choose the file", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{bad}))
	submit("upload", "#upload", 422)
	errs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#import-errors li'), li => li.innerText)`))
	if err != nil || len(errs) < 3 {
		t.Fatalf("import errors listed: %v %v", errs, err)
	}
	for _, want := range []string{"events[0].title", "events[0].venue", "events[0].categories[0].price"} {
		if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, want) }) {
			t.Errorf("no error at %s among %q", want, errs)
		}
	}
	var eventsAfter int
	if err := f.DB.NewRaw("SELECT count(*) FROM events").Scan(context.Background(), &eventsAfter); err != nil || eventsAfter != eventsBefore {
		t.Fatalf("events after a refused file: %d, before %d (%v)", eventsAfter, eventsBefore, err)
	}
	pageFits(t, ctx, "catalog-errors", nil)
	run("open webhooks", chromedp.Navigate(base+"/cabinet/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	pageFits(t, ctx, "webhooks", nil)

	// Sign out.
	submit("sign out", "#signout", 200)
	run("the sign-in page", chromedp.WaitVisible(chromedp.CSS("#signin")))
}

// money is how the cabinet shows minor units of roubles.
func money(minor int64) string {
	whole := fmt.Sprint(minor / 100)
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(d)
	}
	return fmt.Sprintf("%s.%02d RUB", b.String(), minor%100)
}

// TestCabinetRequestLogFiltersAndCatalogUpload: the request log page filters
// by status, method, path prefix and time and pages 50 at a time, newest
// first; a key's last use shows; a good catalog file uploads and its events
// appear with their seats.
func TestCabinetRequestLogFiltersAndCatalogUpload(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	company := s.Company(t, "Acme")
	key, keyID := s.Key(t, company, apikey.Sandbox)
	// 120 requests a second apart: 100 GET /v1/events (200), 20 POST /v1/orders (409).
	base := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	var entries []store.RequestLogEntry
	for i := range 120 {
		e := store.RequestLogEntry{RequestID: fmt.Sprintf("req_seed_%03d", i), CompanyID: &company, APIKeyID: &keyID,
			Method: "GET", Path: "/v1/events", Status: 200, DurationUS: 1500, CreatedAt: base.Add(time.Duration(i) * time.Second)}
		if i%6 == 0 {
			e.Method, e.Path, e.Status = "POST", "/v1/orders", 409
		}
		entries = append(entries, e)
	}
	if err := store.InsertRequestLog(ctx, s.DB, entries); err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "ops@acme.test"))
	rowsOf := func(p page) []string {
		return regexp.MustCompile(`data-request-id="([^"]+)"`).FindAllString(p.Body, -1)
	}
	first := b.get("/cabinet/requests")
	if rows := rowsOf(first); len(rows) != 50 || rows[0] != `data-request-id="req_seed_119"` || !strings.Contains(first.Body, `id="next"`) {
		t.Fatalf("first page: %d rows, first %v", len(rows), rows[:min(1, len(rows))])
	}
	third := b.get("/cabinet/requests?page=3")
	if rows := rowsOf(third); len(rows) != 20 || rows[19] != `data-request-id="req_seed_000"` || strings.Contains(third.Body, `id="next"`) {
		t.Fatalf("third page: %d rows", len(rows))
	}
	q := url.Values{"status": {"409"}, "method": {"post"}, "path": {"/v1/ord"}, "key": {fmt.Sprint(keyID)},
		"from": {"2026-11-20T12:00"}, "to": {"2026-11-20T12:01"}}
	if rows := rowsOf(b.get("/cabinet/requests?" + q.Encode())); len(rows) != 10 { // i = 0, 6, …, 54
		t.Fatalf("filtered: %d rows, want 10", len(rows))
	}
	if rows := rowsOf(b.get("/cabinet/requests?request_id=req_seed_042")); len(rows) != 1 {
		t.Fatalf("by request id: %v", rows)
	}

	// Last use of a key: written with the request log's batches.
	if res := s.Get(t, "/v1/events", key); res.Status != 200 {
		t.Fatal(res.Status)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var used *time.Time
		if err := s.DB.NewRaw("SELECT last_used_at FROM api_keys WHERE id = ?", keyID).Scan(ctx, &used); err != nil {
			t.Fatal(err)
		}
		if used != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key's last use was never recorded")
		}
	}
	if p := b.get("/cabinet/keys"); !regexp.MustCompile(`<td[^>]*>\d{4}-\d\d-\d\d \d\d:\d\d UTC</td>\s*<td[^>]*>—</td>`).MatchString(p.Body) {
		t.Fatalf("keys page does not show the last use:\n%s", p.Body)
	}

	// A good catalog file, uploaded as a browser would.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "catalog.json")
	_, _ = fw.Write(catalogfile.Demo(time.Now()))
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/cabinet/catalog", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	p := b.do(req)
	if p.Status != 200 || !strings.Contains(p.Body, `id="import-result"`) || !strings.Contains(p.Body, "Swan Lake") {
		t.Fatalf("upload: %d %.1000s", p.Status, p.Body)
	}
	inv, err := store.ListCompanyInventory(ctx, s.DB, company, time.Now())
	if err != nil || len(inv) != 4 {
		t.Fatalf("inventory after the upload: %v %v", inv, err)
	}
	for _, e := range inv {
		if e.Ref == "swan-lake" && (e.Free == 0 || e.Sold != 0 || e.Held != 0) {
			t.Fatalf("swan lake seats: %+v", e)
		}
		if e.Ref == "expo" && e.Free != 100 { // two sessions of 50
			t.Fatalf("exhibition places: %+v", e)
		}
		if e.Ref == "standup" && e.Free != 200 {
			t.Fatalf("stand-up places: %+v", e)
		}
	}
}

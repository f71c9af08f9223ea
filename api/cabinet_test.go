package api_test

import (
	"context"
	"crypto/tls"
	"encoding/csv"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"ticketsales/api/cabinet"
	"ticketsales/internal/apikey"
	"ticketsales/internal/organizer"
	"ticketsales/test/testenv"
)

const cabinetPassword = "correct horse battery"

// cabinetUser creates a cabinet user of the company and returns the
// absolute one-time sign-in link.
func cabinetUser(t *testing.T, s *testenv.Stack, base string, company int64, email string) string {
	t.Helper()
	_, path, err := organizer.New(s.DB, nil).CreateUser(context.Background(), company, email)
	if err != nil {
		t.Fatal(err)
	}
	return base + path
}

// browserless is a cabinet session driven with net/http, as a browser
// would, with a cookie jar; its requests send no Origin or Sec-Fetch-Site
// unless a test adds them.
type browserless struct {
	t    *testing.T
	c    *http.Client
	base string
}

func newBrowserless(t *testing.T, base string, tr http.RoundTripper) *browserless {
	jar, _ := cookiejar.New(nil)
	if tr == nil {
		tr = http.DefaultTransport
	}
	return &browserless{t: t, base: base, c: &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute}}
}

type page struct {
	Status int
	URL    *url.URL
	Body   string
	Header http.Header
}

func (b *browserless) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return page{Status: res.StatusCode, URL: res.Request.URL, Body: string(body), Header: res.Header}
}

func (b *browserless) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.abs(path), nil)
	return b.do(req)
}

func (b *browserless) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.abs(path), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return b.do(req)
}

func (b *browserless) abs(path string) string {
	if strings.HasPrefix(path, "http") {
		return path
	}
	return b.base + path
}

// setPassword follows a sign-in link and sets the password: the user is
// then signed in, on the report.
func (b *browserless) setPassword(link string) {
	b.t.Helper()
	if p := b.get(link); p.Status != 200 || !strings.Contains(p.Body, "Set your password") {
		b.t.Fatalf("sign-in link page: %d %.300s", p.Status, p.Body)
	}
	p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	if p.Status != 200 || p.URL.Path != "/cabinet/report" {
		b.t.Fatalf("after setting the password: %d %s %.300s", p.Status, p.URL, p.Body)
	}
}

func (b *browserless) signIn(email, password string) page {
	b.t.Helper()
	return b.post("/cabinet/signin", url.Values{"email": {email}, "password": {password}})
}

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

	if p := b.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("the report without a session: %s", p.URL)
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
	p := b.post("/cabinet/keys", form, "Origin: "+s.URL, "Sec-Fetch-Site: same-origin")
	if p.Status != http.StatusCreated || !regexp.MustCompile(`value="tk_production_[0-9a-f]{48}"`).MatchString(p.Body) {
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
			h := cabinet.New(cabinet.Deps{DB: s.DB, Users: organizer.New(s.DB, nil), PublicBaseURL: tc.publicURL, Log: log})
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
	want := map[string]string{"tickets_sold": "4", "tickets_refunded": "1", "tickets_net": "3", "orders": "2",
		"gross": fmt.Sprint(gross), "service_fees": fmt.Sprint(fees), "refunds": fmt.Sprint(refunds), "net_revenue": fmt.Sprint(gross - refunds)}
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
	if got := reportTotals(t, other, ""); got["tickets_sold"] != "0" || got["gross"] != "0" || got["refunds"] != "0" {
		t.Fatalf("company B's report shows A's sales: %v", got)
	}
}

package api_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"github.com/ticketsales/ticketsales/api/cabinet"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// cabinetServer serves a cabinet of its own (its own sign-in budgets)
// that takes the client's address from X-Forwarded-For.
func cabinetServer(t *testing.T, s *testenv.Stack) (*httptest.Server, *organizer.Service) {
	t.Helper()
	users := organizer.New(s.DB, nil, organizer.Limits{})
	h := cabinet.New(cabinet.Deps{DB: s.DB, Users: users, ClientIPHeader: "X-Forwarded-For",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, users
}

// TestCabinetParallelSignInsKeepTheLimit: wrong passwords sent all at once
// from one address get no more password checks than the per-account budget
// (five); the rest are refused with 429 before any check.
func TestCabinetParallelSignInsKeepTheLimit(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	srv, users := cabinetServer(t, s)
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, company, "boss@acme.test"))

	const n = 24
	var wg sync.WaitGroup
	statuses := make([]int, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = signInFrom(t, srv.URL, "203.0.113.7", "boss@acme.test", "wrong password!")
		}()
	}
	close(start)
	wg.Wait()
	counts := map[int]int{}
	for _, st := range statuses {
		counts[st]++
	}
	if checks := users.PasswordChecks(); checks > 5 {
		t.Fatalf("%d password checks of %d parallel wrong passwords (statuses %v), want at most 5", checks, n, counts)
	}
	if counts[http.StatusUnauthorized]+counts[http.StatusServiceUnavailable] > 5 || counts[http.StatusTooManyRequests] < n-5 ||
		counts[http.StatusUnauthorized]+counts[http.StatusServiceUnavailable]+counts[http.StatusTooManyRequests] != n {
		t.Fatalf("statuses of %d parallel wrong passwords: %v", n, counts)
	}
	// The right password from elsewhere still signs in.
	if st := signInFrom(t, srv.URL, "198.51.100.1", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("right password from another address: %d", st)
	}
}

// TestCabinetSignInLimitsAcrossAddresses: wrong passwords for one e-mail
// from many addresses end up refused (the per-e-mail budget, 20), and the
// addresses of one IPv6 /64 count as one client.
func TestCabinetSignInLimitsAcrossAddresses(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	srv, _ := cabinetServer(t, s)
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, company, "boss@acme.test"))
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, company, "clerk@acme.test"))

	// One /64, a new address at every attempt: the sixth is refused.
	for i := range 5 {
		if st := signInFrom(t, srv.URL, fmt.Sprintf("2001:db8:1:2::%x", i+1), "clerk@acme.test", "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d from the /64: %d", i, st)
		}
	}
	if st := signInFrom(t, srv.URL, "2001:db8:1:2:ffff::99", "clerk@acme.test", cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("sixth attempt from the same /64: %d", st)
	}
	if st := signInFrom(t, srv.URL, "2001:db8:1:3::1", "clerk@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("right password from another /64: %d", st)
	}

	// Twenty addresses, one wrong password each: then every address waits.
	for i := range 20 {
		if st := signInFrom(t, srv.URL, fmt.Sprintf("198.51.100.%d", i+1), "boss@acme.test", "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i, st)
		}
	}
	if st := signInFrom(t, srv.URL, "192.0.2.200", "boss@acme.test", "wrong password!"); st != http.StatusTooManyRequests {
		t.Fatalf("wrong password from a 21st address: %d", st)
	}
	// Another e-mail is not affected.
	if st := signInFrom(t, srv.URL, "192.0.2.200", "clerk@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("another user from that address: %d", st)
	}
}

// TestCabinetOnlyTheNewestLinkWorks: issuing a link spends the user's older
// unused links, and using a link spends every other one of the user.
func TestCabinetOnlyTheNewestLinkWorks(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	ctx := context.Background()
	users := organizer.New(s.DB, nil, organizer.Limits{})
	u, first, err := users.CreateUser(ctx, company, "boss@acme.test", organizer.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	second, err := users.NewLink(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, s.URL, nil)
	if p := b.get(first); p.Status != http.StatusNotFound {
		t.Fatalf("the first link after a second was issued: %d", p.Status)
	}
	if p := b.post(first, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}}); p.Status != http.StatusNotFound {
		t.Fatalf("setting a password with the first link: %d", p.Status)
	}
	// A link stored beside the newest one (as before links replaced each
	// other) stops working when the newest is used.
	const other = "an-older-token-still-unused"
	sum := sha256.Sum256([]byte(other))
	if err := store.CreateSignInLink(ctx, s.DB, u.ID, sum[:], time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p := b.get(organizer.LinkPath + other); p.Status != http.StatusOK {
		t.Fatalf("the other link before: %d", p.Status)
	}
	b.setPassword(second)
	if p := newBrowserless(t, s.URL, nil).get(organizer.LinkPath + other); p.Status != http.StatusNotFound {
		t.Fatalf("the other link after the newest was used: %d", p.Status)
	}
}

// TestCabinetPasswordResetEndsSessions: a session opened before the password
// is set again through a link is sent to sign in; a disabled user's session
// ends and the user cannot sign in, not even with the right password.
func TestCabinetPasswordResetEndsSessions(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	ctx := context.Background()
	users := organizer.New(s.DB, nil, organizer.Limits{})
	u, first, err := users.CreateUser(ctx, company, "boss@acme.test", organizer.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	before := newBrowserless(t, s.URL, nil)
	before.setPassword(s.URL + first)
	if p := before.get("/cabinet/report"); p.URL.Path != "/cabinet/report" {
		t.Fatalf("report: %s", p.URL)
	}
	reset, err := users.NewLink(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	after := newBrowserless(t, s.URL, nil)
	after.setPassword(s.URL + reset)
	if p := before.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("a session from before the password reset: %d %s", p.Status, p.URL)
	}
	if p := after.get("/cabinet/keys"); p.URL.Path != "/cabinet/keys" {
		t.Fatalf("the session of the reset: %s", p.URL)
	}

	// The company keeps an active owner: another one signs up first.
	_, deputy, err := users.CreateUser(ctx, company, "deputy@acme.test", organizer.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	newBrowserless(t, s.URL, nil).setPassword(s.URL + deputy)
	if _, err := users.Disable(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if p := after.get("/cabinet/keys"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("a disabled user's session: %s", p.URL)
	}
	if p := after.signIn("boss@acme.test", cabinetPassword); p.Status != http.StatusUnauthorized {
		t.Fatalf("a disabled user signs in: %d %s", p.Status, p.URL)
	}
	if _, err := users.NewLink(ctx, u.ID); err == nil {
		t.Fatal("a link for a disabled user")
	}
}

// TestCabinetBannersShowNoQueryText: the revocation notice names only a
// revoked key of the company, the request log's notice does not repeat the
// searched id, and a huge page number is capped, not an error.
func TestCabinetBannersShowNoQueryText(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "boss@acme.test"))
	_, mine := s.Key(t, company, "sandbox")
	notice := regexp.MustCompile(`id="notice">([^<]*)<`)
	noticeOf := func(p page) string {
		if m := notice.FindStringSubmatch(p.Body); m != nil {
			return m[1]
		}
		return ""
	}
	for _, q := range []string{"Free+tickets+at+evil.example", "1;+call+us", fmt.Sprint(mine), "99999"} {
		if p := b.get("/cabinet/keys?revoked=" + q); p.Status != http.StatusOK || noticeOf(p) != "" {
			t.Fatalf("keys?revoked=%s: %d, notice %q", q, p.Status, noticeOf(p))
		}
	}
	prefix, _ := keyState(t, s, mine)
	if p := b.post(fmt.Sprintf("/cabinet/keys/%d/revoke", mine), url.Values{"confirm": {prefix}}); p.Status != http.StatusOK ||
		noticeOf(p) != fmt.Sprintf("Key %d is revoked: requests with it now get 401.", mine) {
		t.Fatalf("after revoking: %d %s, notice %q", p.Status, p.URL, noticeOf(p))
	}
	p := b.get("/cabinet/requests?request_id=" + url.QueryEscape("Call +1-555-EVIL for a refund"))
	if p.Status != http.StatusOK || noticeOf(p) == "" || strings.Contains(noticeOf(p), "EVIL") {
		t.Fatalf("request log search: %d, notice %q", p.Status, noticeOf(p))
	}
	for _, n := range []string{"1001", "99999999999999999999", "-5", "x"} {
		if p := b.get("/cabinet/requests?page=" + n); p.Status != http.StatusOK {
			t.Fatalf("request log page %s: %d %.300s", n, p.Status, p.Body)
		}
	}
}

// fromAddr sends every request as if from addr (X-Forwarded-For, which
// cabinetServer trusts).
type fromAddr string

func (a fromAddr) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", string(a))
	return http.DefaultTransport.RoundTrip(r)
}

// TestCabinetSignInBudgetCountsChecks: every password check costs the
// client, a successful one too, so a client that knows a password cannot
// have argon2id run for it without end: its 31st sign-in in a row is
// refused (429), while another client signs in.
func TestCabinetSignInBudgetCountsChecks(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	srv, users := cabinetServer(t, s)
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, company, "boss@acme.test"))

	// The budget refills one check per 10 s: on a slow machine a few more
	// than the burst may pass, never many.
	signedIn, refused := 0, false
	for range organizer.PerClientLimit.Burst + 10 {
		before := users.PasswordChecks()
		st := signInFrom(t, srv.URL, "203.0.113.7", "boss@acme.test", cabinetPassword)
		if st == http.StatusTooManyRequests {
			if users.PasswordChecks() != before {
				t.Fatal("the refused sign-in ran a password check")
			}
			refused = true
			break
		}
		if st != http.StatusSeeOther {
			t.Fatalf("sign-in %d: %d", signedIn+1, st)
		}
		signedIn++
	}
	if !refused || signedIn < organizer.PerClientLimit.Burst {
		t.Fatalf("%d sign-ins in a row from one client, then refused: %v; want the burst of %d, then 429",
			signedIn, refused, organizer.PerClientLimit.Burst)
	}
	if st := signInFrom(t, srv.URL, "203.0.113.8", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("another client: %d", st)
	}
}

// TestCabinetStrangerCannotLockOutTheOwner: someone failing passwords for
// an organizer's e-mail from many addresses exhausts the e-mail's budget,
// yet the organizer still signs in from an address they signed in from
// before (an IPv6 one: anywhere in its /64) and with a new one-time link
// (which makes its address known); a new address of theirs waits, as the
// stranger does, and a known address still has its own budget of five.
func TestCabinetStrangerCannotLockOutTheOwner(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	srv, users := cabinetServer(t, s)
	const email = "boss@acme.test"
	// The link is used from the office; the password then from home.
	newBrowserless(t, srv.URL, fromAddr("192.0.2.10")).setPassword(cabinetUser(t, s, srv.URL, company, email))
	if st := signInFrom(t, srv.URL, "2001:db8:9:9::1", email, cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("sign-in from home: %d", st)
	}

	// The stranger fails from ever new addresses until the e-mail's
	// budget is spent (it refills one a minute: again before each check
	// that a new address waits).
	stranger := 0
	exhaust := func() {
		t.Helper()
		for range organizer.PerEmailLimit.Burst + 5 {
			stranger++
			switch st := signInFrom(t, srv.URL, fmt.Sprintf("198.51.%d.%d", 100+stranger/200, stranger%200+1), email, "wrong password!"); st {
			case http.StatusTooManyRequests:
				return
			case http.StatusUnauthorized:
			default:
				t.Fatalf("stranger's wrong password: %d", st)
			}
		}
		t.Fatal("the e-mail's budget never ran out")
	}
	exhaust()
	if stranger < organizer.PerEmailLimit.Burst {
		t.Fatalf("the e-mail's budget ran out after %d failures", stranger)
	}
	if st := signInFrom(t, srv.URL, "198.51.200.1", email, cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("after the stranger, from a new address: %d, want 429", st)
	}
	if st := signInFrom(t, srv.URL, "192.0.2.10", email, cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the owner from the office (where the link was used): %d", st)
	}
	if st := signInFrom(t, srv.URL, "2001:db8:9:9:abcd::7", email, cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the owner from home (another address of the /64): %d", st)
	}

	// A new link works while the e-mail's budget is spent, and the
	// address it was used from is known afterwards.
	u, err := users.UserByEmail(context.Background(), email, 0)
	if err != nil {
		t.Fatal(err)
	}
	link, err := users.NewLink(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	newBrowserless(t, srv.URL, fromAddr("203.0.113.50")).setPassword(srv.URL + link)
	if st := signInFrom(t, srv.URL, "203.0.113.50", email, cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the owner's password from where the new link was used: %d", st)
	}
	// Setting the password through a link keeps only that address.
	exhaust()
	if st := signInFrom(t, srv.URL, "192.0.2.10", email, cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("an address known before the password was set again: %d, want 429", st)
	}

	// A known address is no free pass: its budget for the e-mail holds.
	for i := range organizer.PerAccountLimit.Burst {
		if st := signInFrom(t, srv.URL, "203.0.113.50", email, "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d from a known address: %d", i+1, st)
		}
	}
	if st := signInFrom(t, srv.URL, "203.0.113.50", email, cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("after five wrong passwords from a known address: %d, want 429", st)
	}
}

// TestCabinetOldPasswordHashIsMadeAgain: a password hashed with two lanes
// (argon2id parallelism 2, whose check takes two CPUs) is hashed again
// with one at its user's next sign-in; the password keeps working.
func TestCabinetOldPasswordHashIsMadeAgain(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	srv, _ := cabinetServer(t, s)
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, company, "boss@acme.test"))
	old, err := argon2id.CreateHash(cabinetPassword, &argon2id.Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 2, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.DB.ExecContext(ctx, "UPDATE cabinet_people SET password_hash = ? WHERE email = ?", old, "boss@acme.test"); err != nil {
		t.Fatal(err)
	}
	hashParams := func() *argon2id.Params {
		t.Helper()
		var h string
		if err := s.DB.NewRaw("SELECT password_hash FROM cabinet_people WHERE email = ?", "boss@acme.test").Scan(ctx, &h); err != nil {
			t.Fatal(err)
		}
		p, _, _, err := argon2id.DecodeHash(h)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for range 2 {
		if st := signInFrom(t, srv.URL, "203.0.113.7", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", st)
		}
		if p := hashParams(); p.Parallelism != 1 || p.Memory != 64*1024 || p.Iterations != 3 {
			t.Fatalf("hash costs after a sign-in: %+v", p)
		}
	}
}

package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
)

var (
	secretRE   = regexp.MustCompile(`id="two-factor-secret">([A-Z2-7 ]+)<`)
	recoveryRE = regexp.MustCompile(`<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>`)
)

// totpCode is the authenticator's code for secret at now+offset steps.
func totpCode(t *testing.T, secret string, steps int) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, time.Now().Add(time.Duration(steps)*30*time.Second),
		totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wrongCode is a six-digit code none of the secret's current steps has.
func wrongCode(t *testing.T, secret string) string {
	t.Helper()
	for i := 0; ; i++ {
		c := fmt.Sprintf("%06d", 123456+i)
		if c != totpCode(t, secret, -1) && c != totpCode(t, secret, 0) && c != totpCode(t, secret, 1) {
			return c
		}
	}
}

// enrol sets up two-factor sign-in on b's account page and returns the
// secret and the recovery codes.
func enrol(t *testing.T, b *browserless) (string, []string) {
	t.Helper()
	p := b.get("/cabinet/account/two-factor")
	m := secretRE.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil || !strings.Contains(p.Body, `src="data:image/png;base64,`) {
		t.Fatalf("the enrolment page: %d %s\n%.2000s", p.Status, p.URL, p.Body)
	}
	secret := strings.ReplaceAll(m[1], " ", "")
	p = b.post("/cabinet/account/two-factor", url.Values{"current_password": {cabinetPassword}, "code": {totpCode(t, secret, 0)}})
	var codes []string
	for _, c := range recoveryRE.FindAllStringSubmatch(p.Body, -1) {
		codes = append(codes, c[1])
	}
	if p.Status != http.StatusOK || len(codes) != organizer.RecoveryCodes {
		t.Fatalf("confirming: %d %q, %d codes", p.Status, noticeOf(p), len(codes))
	}
	return secret, codes
}

// signedInAs reports the e-mail the page's header names ("" signed out).
func signedInAs(p page) string {
	m := regexp.MustCompile(`<span class="who">([^ ]+) ·`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return m[1]
}

func (f *fixture) auditCount(t *testing.T, action, actor string) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM audit_log WHERE company_id = ? AND action = ? AND actor = ?", f.companyA, action, actor).
		Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCabinetTwoFactor: a member enrols an authenticator (a wrong code
// confirms nothing); the secret is sealed at rest; then the password,
// and a sign-in link, ask for a code before any session: a wrong code and
// a replayed one are refused, a recovery code works once, tries are
// limited. Each step is in the audit log.
func TestCabinetTwoFactor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const email = "tfa-owner@a.test"
	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUser(t, f.Stack, f.URL, f.companyA, email))
	if p := b.get("/cabinet/account"); !strings.Contains(p.Body, "Off: your password alone") {
		t.Fatalf("the account page before enrolment:\n%.3000s", p.Body)
	}

	// A wrong code confirms nothing: the password alone still signs in.
	p := b.get("/cabinet/account/two-factor")
	secret := strings.ReplaceAll(secretRE.FindStringSubmatch(p.Body)[1], " ", "")
	if p = b.post("/cabinet/account/two-factor", url.Values{"current_password": {cabinetPassword}, "code": {wrongCode(t, secret)}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(noticeOf(p), "not the code") {
		t.Fatalf("a wrong confirming code: %d %q", p.Status, noticeOf(p))
	}
	var confirmed bool
	if err := f.DB.NewRaw("SELECT confirmed_at IS NOT NULL FROM cabinet_two_factor WHERE email = ?", email).Scan(ctx, &confirmed); err != nil || confirmed {
		t.Fatalf("after a wrong code: confirmed %v, %v", confirmed, err)
	}
	other := newBrowserless(t, f.URL, nil)
	if p := other.signIn(email, cabinetPassword); signedInAs(p) != email {
		t.Fatalf("an unconfirmed authenticator asked for a code: %s", p.URL)
	}

	// The same page again keeps the same key until confirmed.
	secret2, codes := enrol(t, b)
	if secret2 != secret {
		t.Fatalf("the key changed between two openings of the page")
	}
	var sealed []byte
	if err := f.DB.NewRaw("SELECT sealed_secret FROM cabinet_two_factor WHERE email = ?", email).Scan(ctx, &sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), secret) || len(sealed) < 40 {
		t.Fatalf("the secret is not sealed at rest: %q", sealed)
	}
	if n := f.auditCount(t, "two_factor.enrol", email); n != 1 {
		t.Fatalf("%d enrolment rows", n)
	}
	if p := b.get("/cabinet/account"); !strings.Contains(p.Body, "On: after your password") {
		t.Fatalf("the account page after enrolment")
	}

	// The password: the code is asked for, and nobody is signed in yet.
	c := newBrowserless(t, f.URL, nil)
	p = c.signIn(email, cabinetPassword)
	if p.URL.Path != "/cabinet/signin/code" || signedInAs(p) != "" {
		t.Fatalf("after the password: %d %s as %q", p.Status, p.URL, signedInAs(p))
	}
	if p := c.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("a page before the code: %s", p.URL)
	}
	// The page asked for before signing in was dropped with the session's
	// wait: sign in again.
	p = c.signIn(email, cabinetPassword)
	if p = c.post("/cabinet/signin/code", url.Values{"code": {wrongCode(t, secret)}}); p.Status != http.StatusUnauthorized || signedInAs(p) != "" {
		t.Fatalf("a wrong code: %d as %q", p.Status, signedInAs(p))
	}
	if n := f.auditCount(t, "two_factor.failed", email); n != 1 {
		t.Fatalf("%d failed-code rows", n)
	}
	next := totpCode(t, secret, 1) // the step after the one enrolment spent
	if p = c.post("/cabinet/signin/code", url.Values{"code": {next}}); signedInAs(p) != email || p.URL.Path != "/cabinet/report" {
		t.Fatalf("the right code: %d %s as %q %q", p.Status, p.URL, signedInAs(p), noticeOf(p))
	}
	var via string
	if err := f.DB.NewRaw(`SELECT detail->>'via' FROM audit_log WHERE action = 'signin.ok' AND actor = ? ORDER BY id DESC LIMIT 1`, email).
		Scan(ctx, &via); err != nil || via != "two_factor" {
		t.Fatalf("the sign-in's row: %q %v", via, err)
	}

	// The same code again (someone who saw it) is refused.
	d := newBrowserless(t, f.URL, nil)
	d.signIn(email, cabinetPassword)
	if p = d.post("/cabinet/signin/code", url.Values{"code": {next}}); p.Status != http.StatusUnauthorized || !strings.Contains(noticeOf(p), "used already") {
		t.Fatalf("a replayed code: %d %q", p.Status, noticeOf(p))
	}
	// A recovery code works, typed loosely, once.
	if p = d.post("/cabinet/signin/code", url.Values{"code": {" " + strings.ToUpper(codes[0]) + " "}}); signedInAs(p) != email {
		t.Fatalf("a recovery code: %d %q", p.Status, noticeOf(p))
	}
	if n := f.auditCount(t, "two_factor.recovery_code", email); n != 1 {
		t.Fatalf("%d recovery-code rows", n)
	}
	e := newBrowserless(t, f.URL, nil)
	e.signIn(email, cabinetPassword)
	if p = e.post("/cabinet/signin/code", url.Values{"code": {codes[0]}}); p.Status != http.StatusUnauthorized {
		t.Fatalf("a used recovery code: %d", p.Status)
	}

	// A sign-in link (a lost password's) is a first factor only.
	users := organizer.New(f.DB, nil, organizer.Limits{})
	path, err := users.NewLink(ctx, f.cabinetUserID(t, email))
	if err != nil {
		t.Fatal(err)
	}
	l := newBrowserless(t, f.URL, nil)
	p = l.post(path, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	if p.URL.Path != "/cabinet/signin/code" || signedInAs(p) != "" {
		t.Fatalf("after a sign-in link: %d %s as %q", p.Status, p.URL, signedInAs(p))
	}
	if p = l.post("/cabinet/signin/code", url.Values{"code": {codes[1]}}); signedInAs(p) != email {
		t.Fatalf("the link's second factor: %d %q", p.Status, noticeOf(p))
	}

	// Tries are limited as passwords are: five wrong codes, then 429.
	g := newBrowserless(t, f.URL, nil)
	g.signIn(email, cabinetPassword)
	status := 0
	for range 8 {
		p = g.post("/cabinet/signin/code", url.Values{"code": {wrongCode(t, secret)}})
		if status = p.Status; status == http.StatusTooManyRequests {
			break
		}
	}
	if status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("wrong codes without limit: %d", status)
	}
	// Even the right one waits now.
	if p = g.post("/cabinet/signin/code", url.Values{"code": {codes[2]}}); p.Status != http.StatusTooManyRequests {
		t.Fatalf("a right code past the limit: %d", p.Status)
	}

	// Turning it off takes a code; a wrong one leaves it on. (The link
	// set the password again: b's session ended; l's is the one.)
	if p = l.post("/cabinet/account/two-factor/disable", url.Values{"code": {"zzzzz-zzzzz"}}); p.Status != http.StatusTooManyRequests &&
		p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("turning off with a wrong code: %d", p.Status)
	}
	if on, _ := users.HasTwoFactor(ctx, email); !on {
		t.Fatalf("a wrong code turned two-factor off")
	}
}

// TestCabinetTwoFactorPolicy: the owner requires a second factor of owners
// and finance: a finance member without one is sent to enrolment before
// any other page, a support member is not; the team page shows who has
// one; the owner resets a member's (signed out, audited), who enrols
// again; nobody may turn off what the policy requires.
func TestCabinetTwoFactorPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	owner := newBrowserless(t, f.URL, nil)
	joinAs(t, owner, cabinetUser(t, f.Stack, f.URL, f.companyA, "policy-owner@a.test"))
	finance := newBrowserless(t, f.URL, nil)
	joinAs(t, finance, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "policy-money@a.test", organizer.RoleFinance))
	support := newBrowserless(t, f.URL, nil)
	joinAs(t, support, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "policy-desk@a.test", organizer.RoleSupport))

	// Off by default: everyone opens their pages.
	if p := finance.get("/cabinet/report"); p.URL.Path != "/cabinet/report" {
		t.Fatalf("finance before the policy: %s", p.URL)
	}
	if p := support.post("/cabinet/team/two-factor", url.Values{"required": {"on"}}); p.Status != http.StatusForbidden {
		t.Fatalf("support set the policy: %d", p.Status)
	}
	if p := owner.post("/cabinet/team/two-factor", url.Values{"required": {"on"}}); p.URL.Path != "/cabinet/account/two-factor" {
		// The owner has none either: sent to enrol at once.
		t.Fatalf("the owner after requiring it: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if n := f.auditCount(t, "team.two_factor_policy", "policy-owner@a.test"); n != 1 {
		t.Fatalf("%d policy rows", n)
	}
	for _, path := range []string{"/cabinet/report", "/cabinet/orders", "/cabinet/account", "/cabinet/team"} {
		if p := finance.get(path); p.URL.Path != "/cabinet/account/two-factor" || !strings.Contains(p.Body, "requires two-factor sign-in") {
			t.Fatalf("finance opened %s without a second factor: %s", path, p.URL)
		}
	}
	if p := finance.post("/cabinet/orders/1/refund", url.Values{}); p.URL.Path != "/cabinet/account/two-factor" {
		t.Fatalf("finance posted without a second factor: %d %s", p.Status, p.URL)
	}
	if p := support.get("/cabinet/orders"); p.URL.Path != "/cabinet/orders" || p.Status != http.StatusOK {
		t.Fatalf("support was held by the policy: %s", p.URL)
	}
	ownerSecret, ownerCodes := enrol(t, owner)
	enrol(t, finance)
	if p := finance.get("/cabinet/report"); p.URL.Path != "/cabinet/report" {
		t.Fatalf("finance after enrolling: %s", p.URL)
	}

	team := owner.get("/cabinet/team")
	for email, want := range map[string]string{"policy-owner@a.test": "true", "policy-money@a.test": "true", "policy-desk@a.test": "false"} {
		row := regexp.MustCompile(`(?s)<tr data-member-id="\d+"[^>]*>\s*<th scope="row">` + regexp.QuoteMeta(email) + `.*?</tr>`).FindString(team.Body)
		if !strings.Contains(row, `data-two-factor="`+want+`"`) {
			t.Errorf("the team page's two-factor of %s is not %s:\n%s", email, want, row)
		}
	}
	if !strings.Contains(team.Body, `id="two-factor-required" checked`) {
		t.Errorf("the team page does not show the policy on")
	}

	// Required: it cannot be turned off.
	if p := owner.post("/cabinet/account/two-factor/disable", url.Values{"code": {ownerCodes[0]}}); p.Status != http.StatusConflict {
		t.Fatalf("turning off what the policy requires: %d", p.Status)
	}
	// Nor reset by the owner for themself, which needs no code: the
	// button is not shown, and the post is refused.
	self := f.cabinetUserID(t, "policy-owner@a.test")
	if p := owner.post(fmt.Sprintf("/cabinet/team/%d/two-factor/reset", self), url.Values{}); p.Status != http.StatusConflict ||
		!strings.Contains(noticeOf(p), "with a code") {
		t.Fatalf("the owner reset their own second factor: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	users := organizer.New(f.DB, nil, organizer.Limits{})
	if on, err := users.HasTwoFactor(context.Background(), "policy-owner@a.test"); !on || err != nil {
		t.Fatalf("after the owner's own reset: on %v, %v", on, err)
	}
	if _, err := users.ResetTwoFactor(store.WithActor(context.Background(), store.Actor{Kind: store.ActorUser, UserID: self,
		Label: "policy-owner@a.test"}), f.companyA, self); !errors.Is(err, organizer.ErrResetSelf) {
		t.Fatalf("the store reset the actor's own second factor: %v", err)
	}

	// The owner resets finance's: signed out, then sent to enrol again.
	money := f.cabinetUserID(t, "policy-money@a.test")
	if p := support.post(fmt.Sprintf("/cabinet/team/%d/two-factor/reset", money), url.Values{}); p.Status != http.StatusForbidden {
		t.Fatalf("support reset a second factor: %d", p.Status)
	}
	if p := owner.post(fmt.Sprintf("/cabinet/team/%d/two-factor/reset", money), url.Values{}); p.URL.Path != "/cabinet/team" ||
		!strings.Contains(noticeOf(p), "is reset") {
		t.Fatalf("the reset: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if n := f.auditCount(t, "two_factor.reset", "policy-owner@a.test"); n != 1 {
		t.Fatalf("%d reset rows", n)
	}
	if p := finance.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("finance still signed in after the reset: %s", p.URL)
	}
	if p := finance.signIn("policy-money@a.test", cabinetPassword); p.URL.Path != "/cabinet/account/two-factor" {
		t.Fatalf("finance signing in after the reset: %s", p.URL)
	}

	// Off again: the owner may turn theirs off, with a code.
	if p := owner.post("/cabinet/team/two-factor", url.Values{}); p.URL.Path != "/cabinet/team" {
		t.Fatalf("the policy off: %d %s", p.Status, p.URL)
	}
	spaced := totpCode(t, ownerSecret, 1) // as some apps show it: "123 456"
	spaced = spaced[:3] + " " + spaced[3:]
	if p := owner.post("/cabinet/account/two-factor/disable", url.Values{"code": {spaced}}); p.URL.Path != "/cabinet/account" ||
		!strings.Contains(noticeOf(p), "is off") {
		t.Fatalf("turning it off: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if n := f.auditCount(t, "two_factor.disable", "policy-owner@a.test"); n != 1 {
		t.Fatalf("%d disable rows", n)
	}
	if p := newBrowserless(t, f.URL, nil).signIn("policy-owner@a.test", cabinetPassword); signedInAs(p) != "policy-owner@a.test" {
		t.Fatalf("the password alone after turning it off: %s", p.URL)
	}
}

// TestCabinetTwoFactorPolicyEveryCompany: the authenticator is the
// person's, so a company that requires it of the person's role there
// keeps it on from every company's cabinet: a person who is owner in A
// (no policy) and finance in B (policy on) cannot turn it off signed in
// to A; with B's policy off, they can.
func TestCabinetTwoFactorPolicyEveryCompany(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(ctx, &companyB); err != nil {
		t.Fatal(err)
	}
	const email = "two-teams@a.test"
	a := newBrowserless(t, f.URL, nil)
	joinAs(t, a, cabinetUser(t, f.Stack, f.URL, f.companyA, email))
	newBrowserless(t, f.URL, nil).accept(cabinetUserAs(t, f.Stack, f.URL, companyB, email, organizer.RoleFinance))
	secret, _ := enrol(t, a)
	users := organizer.New(f.DB, nil, organizer.Limits{})
	if err := users.SetTwoFactorRequired(ctx, companyB, true); err != nil {
		t.Fatal(err)
	}
	if p := a.post("/cabinet/account/two-factor/disable", url.Values{"code": {totpCode(t, secret, 1)}}); p.Status != http.StatusConflict ||
		!strings.Contains(noticeOf(p), "cannot be turned off") {
		t.Fatalf("turning off what another company requires: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if on, err := users.HasTwoFactor(ctx, email); !on || err != nil {
		t.Fatalf("after turning off what B requires: on %v, %v", on, err)
	}
	if err := users.SetTwoFactorRequired(ctx, companyB, false); err != nil {
		t.Fatal(err)
	}
	if p := a.post("/cabinet/account/two-factor/disable", url.Values{"code": {totpCode(t, secret, 1)}}); !strings.Contains(noticeOf(p), "is off") {
		t.Fatalf("turning it off with no policy: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
}

// TestCabinetTwoFactorEnrolmentGuards: dropping an enrolment never
// confirmed writes no two_factor.disable row (nothing was on), and a
// confirmation switches on only the secret its code was checked against.
func TestCabinetTwoFactorEnrolmentGuards(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const email = "tfa-guards@a.test"
	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUser(t, f.Stack, f.URL, f.companyA, email))
	if p := b.get("/cabinet/account/two-factor"); secretRE.FindStringSubmatch(p.Body) == nil {
		t.Fatalf("the enrolment page: %d %s", p.Status, p.URL)
	}
	if p := b.post("/cabinet/account/two-factor/disable", url.Values{}); !strings.Contains(noticeOf(p), "is off") {
		t.Fatalf("dropping an unconfirmed enrolment: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if n := f.auditCount(t, "two_factor.disable", email); n != 0 {
		t.Fatalf("dropping an unconfirmed enrolment wrote %d disable rows", n)
	}

	// A secret replaced after its code was checked is not switched on.
	if err := store.BeginTwoFactor(ctx, f.DB, email, []byte("sealed-first")); err != nil {
		t.Fatal(err)
	}
	if err := store.BeginTwoFactor(ctx, f.DB, email, []byte("sealed-second")); err != nil {
		t.Fatal(err)
	}
	id := f.cabinetUserID(t, email)
	var version int
	if err := f.DB.NewRaw("SELECT session_version FROM cabinet_users WHERE id = ?", id).Scan(ctx, &version); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ConfirmTwoFactor(ctx, f.DB, email, id, version, []byte("sealed-first"), 1, nil, time.Now()); !errors.Is(err, errs.NotFound) {
		t.Fatalf("confirming a replaced secret: %v", err)
	}
	if _, err := store.ConfirmTwoFactor(ctx, f.DB, email, id, version, []byte("sealed-second"), 1, nil, time.Now()); err != nil {
		t.Fatalf("confirming the stored secret: %v", err)
	}
}

// TestCabinetTwoFactorSessions: turning two-factor sign-in on takes the
// current password as well as a code (a session alone does not), and
// turning it on or off signs out the person's other sessions, in every
// company, while the one that did it stays.
func TestCabinetTwoFactorSessions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const email = "tfa-sessions@a.test"
	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUser(t, f.Stack, f.URL, f.companyA, email))
	other := newBrowserless(t, f.URL, nil)
	if p := other.signIn(email, cabinetPassword); signedInAs(p) != email {
		t.Fatalf("the other session: %s", p.URL)
	}

	p := b.get("/cabinet/account/two-factor")
	if !strings.Contains(p.Body, `name="current_password"`) {
		t.Fatalf("the enrolment form asks for no password:\n%.2000s", p.Body)
	}
	secret := strings.ReplaceAll(secretRE.FindStringSubmatch(p.Body)[1], " ", "")
	for _, pw := range []string{"", "not the password!"} {
		p = b.post("/cabinet/account/two-factor", url.Values{"current_password": {pw}, "code": {totpCode(t, secret, 0)}})
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(noticeOf(p), "password is wrong") {
			t.Fatalf("confirming with password %q: %d %q", pw, p.Status, noticeOf(p))
		}
	}
	users := organizer.New(f.DB, nil, organizer.Limits{})
	if on, _ := users.HasTwoFactor(ctx, email); on {
		t.Fatalf("a wrong password turned two-factor on")
	}
	if p := other.get("/cabinet/report"); signedInAs(p) != email {
		t.Fatalf("the other session ended before enrolment: %s", p.URL)
	}

	secret, codes := enrol(t, b)
	if p := b.get("/cabinet/account"); signedInAs(p) != email || !strings.Contains(p.Body, "On: after your password") {
		t.Fatalf("the enrolling session after confirming: %s", p.URL)
	}
	if p := other.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("another session outlived enrolment: %s", p.URL)
	}

	// Off: the other session (signed in with a code) ends too.
	other.signIn(email, cabinetPassword)
	if p := other.post("/cabinet/signin/code", url.Values{"code": {codes[0]}}); signedInAs(p) != email {
		t.Fatalf("the other session's code: %d %q", p.Status, noticeOf(p))
	}
	if p := b.post("/cabinet/account/two-factor/disable", url.Values{"code": {totpCode(t, secret, 1)}}); p.URL.Path != "/cabinet/account" ||
		signedInAs(p) != email || !strings.Contains(noticeOf(p), "is off") {
		t.Fatalf("turning it off: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if p := other.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("another session outlived turning it off: %s", p.URL)
	}
}

// TestCabinetTwoFactorKnownAddress: whoever has the password and fails
// codes from elsewhere spends the person's budget, but not for the
// addresses the person signed in from recently (as the password's
// per-e-mail budget): the owner still signs in there, while the stranger
// stays refused.
func TestCabinetTwoFactorKnownAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base, _ := f.Stack.Instance(t, func(c *config.Config) { c.ClientIPHeader = "X-Forwarded-For" }, api.ProcessOptions{})
	const email = "tfa-known@a.test"
	home := newBrowserless(t, base, fromAddr("198.51.100.7"))
	joinAs(t, home, cabinetUser(t, f.Stack, base, f.companyA, email))
	secret, _ := enrol(t, home)

	stranger := newBrowserless(t, base, fromAddr("203.0.113.9"))
	if p := stranger.signIn(email, cabinetPassword); p.URL.Path != "/cabinet/signin/code" {
		t.Fatalf("the stranger's password: %d %s", p.Status, p.URL)
	}
	status := 0
	for range 8 {
		if status = stranger.post("/cabinet/signin/code", url.Values{"code": {wrongCode(t, secret)}}).Status; status == http.StatusTooManyRequests {
			break
		}
	}
	if status != http.StatusTooManyRequests {
		t.Fatalf("the stranger's wrong codes without limit: %d", status)
	}

	owner := newBrowserless(t, base, fromAddr("198.51.100.7"))
	owner.signIn(email, cabinetPassword)
	if p := owner.post("/cabinet/signin/code", url.Values{"code": {totpCode(t, secret, 1)}}); signedInAs(p) != email {
		t.Fatalf("the owner at a known address after the stranger's codes: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	// A new address of the person's is held by the person's budget.
	elsewhere := newBrowserless(t, base, fromAddr("192.0.2.44"))
	elsewhere.signIn(email, cabinetPassword)
	if p := elsewhere.post("/cabinet/signin/code", url.Values{"code": {totpCode(t, secret, 1)}}); p.Status != http.StatusTooManyRequests {
		t.Fatalf("an unknown address past the person's budget: %d %s", p.Status, p.URL)
	}
}

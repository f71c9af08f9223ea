package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// memberRow is the team page's row of the member with the e-mail, its
// numbers (ids, times) as N: each company numbers its own.
func memberRow(t *testing.T, b *browserless, email string) string {
	t.Helper()
	body := b.get("/cabinet/team").Body
	for _, row := range regexp.MustCompile(`(?s)<tr data-member-id="\d+".*?</tr>`).FindAllString(body, -1) {
		if strings.Contains(row, ">"+email+"<") || strings.Contains(row, ">"+email+" <") {
			return regexp.MustCompile(`\d+`).ReplaceAllString(row, "N")
		}
	}
	t.Fatalf("no row of %s on the team page:\n%s", email, body)
	return ""
}

// TestCabinetAddressInTwoCompanies: an address that is a user of one
// company is invited by another exactly as an address nobody uses is: the
// same answer, notice and row, nothing of the other company. The person
// accepts with the password they have, keeps the first company and its
// session, signs in once with one password and moves between the two;
// each company's team page shows only its own membership, and being
// removed from one leaves the other.
func TestCabinetAddressInTwoCompanies(t *testing.T) {
	s := testenv.NewStack(t)
	rival := s.Company(t, "Secret Rival Ltd")
	acme := s.Company(t, "Acme")
	base, outbox, _ := teamCabinet(t, s)
	person := newBrowserless(t, base, nil)
	person.setPassword(cabinetUser(t, s, base, rival, "pat@shared.test")) // the rival's owner
	owner := newBrowserless(t, base, nil)
	owner.setPassword(cabinetUser(t, s, base, acme, "owner@acme.test"))
	rivalRow := memberRow(t, person, "pat@shared.test")

	// The invitation answers alike whether the address is a user elsewhere.
	invite := func(email string) (string, string) {
		t.Helper()
		status, loc, body := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {email}, "role": {"developer"}})
		if status != http.StatusSeeOther {
			t.Fatalf("inviting %s: %d, want 303 as for anyone\n%s", email, status, noticeOf(page{Body: body}))
		}
		team := owner.get("/cabinet/team")
		if strings.Contains(team.Body, "Secret Rival") {
			t.Fatal("the team page names the other company")
		}
		answer := fmt.Sprintf("%d %s %s", status, loc, strings.ReplaceAll(noticeOf(team), email, "E"))
		return answer, strings.ReplaceAll(memberRow(t, owner, email), email, "E")
	}
	usedAnswer, usedRow := invite("pat@shared.test")
	freshAnswer, freshRow := invite("nobody@fresh.test")
	if usedAnswer != freshAnswer || usedRow != freshRow || !strings.HasPrefix(usedAnswer, "303 /cabinet/team Invitation sent to E") {
		t.Fatalf("inviting an address used elsewhere differs from a fresh one:\n%s\n%s\n%s\n%s", usedAnswer, freshAnswer, usedRow, freshRow)
	}
	if !strings.Contains(usedRow, `data-status="invited"`) {
		t.Fatalf("the invitee is not shown invited, though the address has a password elsewhere:\n%s", usedRow)
	}
	if got := memberRow(t, person, "pat@shared.test"); got != rivalRow {
		t.Fatalf("the invitation changed the other company's row:\n%s\n%s", rivalRow, got)
	}

	// The person accepts in another browser: a developer of Acme.
	newcomer := newBrowserless(t, base, nil)
	link := lastInvitation(t, outbox, "pat@shared.test")
	if p := newcomer.get(link); !strings.Contains(p.Body, "Acme") || strings.Contains(p.Body, "Secret Rival") ||
		!strings.Contains(p.Body, `id="accept"`) || strings.Contains(p.Body, "password_again") {
		t.Fatalf("the invitation's page:\n%s", p.Body)
	}
	if to := newcomer.accept(link); to != "/cabinet/keys" {
		t.Fatalf("accepting sends to %s", to)
	}
	if p := newcomer.get("/cabinet/keys"); !strings.Contains(p.Body, "pat@shared.test · developer") {
		t.Fatalf("after accepting:\n%.1500s", p.Body)
	}
	// The invitation took the person's password and changed nothing of
	// it: the other company's session goes on.
	if p := person.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("the other company's session after accepting: %d %s", p.Status, p.URL)
	}
	if p := newBrowserless(t, base, nil).signIn("pat@shared.test", cabinetPassword+"-old"); p.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", p.Status)
	}

	// One sign-in, both companies: the latest one first, the other a
	// switch away; each as its own role.
	if p := person.signIn("pat@shared.test", cabinetPassword); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · developer") {
		t.Fatalf("signing in: %d %s\n%.1000s", p.Status, p.URL, p.Body)
	}
	account := person.get("/cabinet/account")
	m := regexp.MustCompile(`<form method="post" action="/cabinet/account/switch"[^>]*>\s*<input type="hidden" name="user_id" value="(\d+)">`).FindStringSubmatch(account.Body)
	if m == nil || !strings.Contains(account.Body, "Secret Rival Ltd") {
		t.Fatalf("the account offers no switch to the other company:\n%s", account.Body)
	}
	if p := person.post("/cabinet/account/switch", url.Values{"user_id": {m[1]}}); p.URL.Path != "/cabinet/report" ||
		!strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("after switching: %d %s\n%.1000s", p.Status, p.URL, p.Body)
	}
	if got := memberRow(t, person, "pat@shared.test"); !strings.Contains(got, `data-status="active" data-role="owner"`) {
		t.Fatalf("the rival's row after the other company's invitation: %s", got)
	}
	// Acme's user id is not a switch for someone else.
	acmeID := memberID(t, s, "owner@acme.test")
	if status, _, _ := person.send(http.MethodPost, "/cabinet/account/switch", url.Values{"user_id": {fmt.Sprint(acmeID)}}); status != http.StatusNotFound {
		t.Fatalf("switching to another person's membership: %d", status)
	}

	// Removed from Acme, the person keeps the rival.
	var patAcme string
	for _, row := range regexp.MustCompile(`<tr data-member-id="(\d+)"[^>]*>\s*<th scope="row">pat@shared\.test<`).FindAllStringSubmatch(owner.get("/cabinet/team").Body, -1) {
		patAcme = row[1]
	}
	if status, loc, _ := owner.send(http.MethodPost, "/cabinet/team/"+patAcme+"/remove", url.Values{}); status != http.StatusSeeOther || loc != "/cabinet/team" {
		t.Fatalf("removing the person from Acme: %d %s", status, loc)
	}
	if p := newcomer.get("/cabinet/keys"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("the Acme session after the removal: %s", p.URL)
	}
	if p := person.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("the rival's session after Acme removed the person: %d %s", p.Status, p.URL)
	}
	again := newBrowserless(t, base, nil)
	if p := again.signIn("pat@shared.test", cabinetPassword); p.URL.Path != "/cabinet/report" || !strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("signing in after the removal: %d %s", p.Status, p.URL)
	}
}

// TestCabinetSwitchInBrowser: in Chromium, a person in two companies'
// teams, who accepted the second invitation with the password set for the
// first, sees the other on Account and switches to it; the invitation's
// page and the account page fit 1280 and 390 px (screenshots
// accept-existing-password-*.png, account-two-organizers-*.png).
func TestCabinetSwitchInBrowser(t *testing.T) {
	s := testenv.NewStack(t)
	rival := s.Company(t, "Secret Rival Ltd, a company with a rather long registered name")
	acme := s.Company(t, "Acme")
	base, _, _ := teamCabinet(t, s)
	ctx := newBrowser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	run("set the password", chromedp.Navigate(cabinetUserAs(t, s, base, rival, "pat@shared.test", organizer.RoleOwner)),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS(".who")))
	// The second company's invitation asks for that password.
	run("accept with it", chromedp.Navigate(cabinetUserAs(t, s, base, acme, "pat@shared.test", organizer.RoleDeveloper)),
		chromedp.WaitVisible(chromedp.CSS("#accept")))
	pageFits(t, ctx, "accept-existing-password", nil)
	run("accept", chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#accept")), chromedp.WaitVisible(chromedp.CSS(".who")))
	if got := text(".who"); got != "pat@shared.test · developer" {
		t.Fatalf("signed in as %q", got)
	}
	run("the account", chromedp.Navigate(base+"/cabinet/account"), chromedp.WaitVisible(chromedp.CSS("#organizers")))
	if got := text("#organizers"); !strings.Contains(got, "Secret Rival Ltd") || !strings.Contains(got, "owner") || strings.Contains(got, "Acme") {
		t.Fatalf("the other organizers: %q", got)
	}
	pageFits(t, ctx, "account-two-organizers", nil)
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#organizers button")))
	if err != nil || res.Status != http.StatusOK || !strings.HasSuffix(res.URL, "/cabinet/report") {
		t.Fatalf("switching: %v %v", res, err)
	}
	if got := text(".who"); got != "pat@shared.test · owner" {
		t.Fatalf("after switching, signed in as %q", got)
	}
}

// personState is what accepting or refusing a link may change of the
// person with the e-mail: the password, every membership's joining,
// session version and last sign-in, and the unused links.
func personState(t *testing.T, s *testenv.Stack, email string) string {
	t.Helper()
	var state string
	if err := s.DB.NewRaw(`SELECT concat_ws('|', p.password_hash,
			(SELECT string_agg(ROW(u.id, u.joined_at, u.session_version, u.last_sign_in_at)::text, ',' ORDER BY u.id) FROM cabinet_users u WHERE u.email = p.email),
			(SELECT string_agg(encode(l.token_hash, 'hex'), ',' ORDER BY l.token_hash) FROM cabinet_signin_links l
				JOIN cabinet_users u ON u.id = l.user_id WHERE u.email = p.email AND l.used_at IS NULL))
		FROM cabinet_people p WHERE p.email = ?`, email).Scan(context.Background(), &state); err != nil {
		t.Fatalf("the state of %s: %v", email, err)
	}
	return state
}

// TestCabinetInvitationAsksForTheExistingPassword: an invitation from
// another company to an address that has a password asks for that
// password and sets none. Whoever holds the link and not the password (a
// forwarded e-mail) gets 409 for a new password (the page then asks for
// the address's; nothing checked) and 401 for a wrong one, joins nothing
// and changes nothing of the person; the wrong ones are sign-in attempts,
// checked by the same argon2id check and counted in the same budgets (the
// sixth from one client is 429, for signing in too). The
// person, with their password, joins; their other company's session goes
// on and the password stays. A new address still chooses a password.
func TestCabinetInvitationAsksForTheExistingPassword(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	rival := s.Company(t, "Secret Rival Ltd")
	acme := s.Company(t, "Acme")
	srv, users := cabinetServer(t, s)
	const home = "198.51.100.7" // where the person works
	person := newBrowserless(t, srv.URL, fromAddr(home))
	person.setPassword(cabinetUser(t, s, srv.URL, rival, "pat@shared.test"))
	newBrowserless(t, srv.URL, nil).setPassword(cabinetUser(t, s, srv.URL, acme, "owner@acme.test"))
	by, err := users.User(ctx, memberID(t, s, "owner@acme.test"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := users.Invite(ctx, by, "pat@shared.test", organizer.RoleDeveloper)
	if err != nil {
		t.Fatal(err)
	}
	link := srv.URL + inv.Path
	before := personState(t, s, "pat@shared.test")

	// The page asks for the address's password, once, and names nothing
	// of the other company.
	holder := newBrowserless(t, srv.URL, fromAddr("203.0.113.9"))
	if p := holder.get(link); p.Status != 200 || !strings.Contains(p.Body, `id="accept"`) || !strings.Contains(p.Body, `autocomplete="current-password"`) ||
		strings.Contains(p.Body, "password_again") || strings.Contains(p.Body, "Secret Rival") || !strings.Contains(p.Body, "Acme") {
		t.Fatalf("the invitation's page: %d\n%s", p.Status, p.Body)
	}
	// A new password (the form that chooses one, sent by hand): 409, the
	// page asks for the address's password, nothing checked or counted.
	checks := users.PasswordChecks()
	for range 2 {
		if p := holder.post(inv.Path, url.Values{"password": {"a brand new password"}, "password_again": {"a brand new password"}}); p.Status != http.StatusConflict ||
			!strings.Contains(p.Body, `id="accept"`) || p.URL.Path != inv.Path {
			t.Fatalf("a new password for the invitation: %d %s\n%.500s", p.Status, p.URL, p.Body)
		}
	}
	// Wrong ones: refused as a wrong password, nothing joined or changed.
	for i, pw := range []string{"wrong password 1", "wrong password 2", "wrong password 3", "wrong password 4", "wrong password 5"} {
		// post, not send: send's client does not come from the holder's
		// address.
		if p := holder.post(inv.Path, url.Values{"password": {pw}}); p.Status != http.StatusUnauthorized ||
			!strings.Contains(p.Body, "Wrong password") || p.URL.Path != inv.Path {
			t.Fatalf("attempt %d with a password not the address's: %d %s\n%.500s", i, p.Status, p.URL, p.Body)
		}
	}
	if got := users.PasswordChecks() - checks; got != 5 {
		t.Fatalf("%d password checks for 5 attempts, want 5 (the sign-in's check)", got)
	}
	if got := personState(t, s, "pat@shared.test"); got != before {
		t.Fatalf("refused attempts changed the person:\n%s\n%s", before, got)
	}
	// The sixth, even the right password, and a sign-in from that client:
	// the sign-in budget is spent (429 with a wait), no password checked.
	if p := holder.post(inv.Path, url.Values{"password": {cabinetPassword}}); p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
		t.Fatalf("a sixth attempt from one client: %d, want 429 with Retry-After", p.Status)
	}
	if st := signInFrom(t, srv.URL, "203.0.113.9", "pat@shared.test", cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("signing in after the link's failures: %d, want 429 (one budget)", st)
	}
	if got := users.PasswordChecks() - checks; got != 5 || personState(t, s, "pat@shared.test") != before {
		t.Fatalf("refused attempts checked %d passwords or changed the person", got)
	}
	if p := person.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("the person's session after the refused attempts: %d %s", p.Status, p.URL)
	}

	// The person, with their password: joined as a developer of Acme.
	newcomer := newBrowserless(t, srv.URL, fromAddr(home))
	if p := newcomer.post(link, url.Values{"password": {cabinetPassword}}); p.Status != 200 || p.URL.Path != "/cabinet/keys" {
		t.Fatalf("accepting with the password: %d %s", p.Status, p.URL)
	}
	var hashBefore, hashAfter string
	if err := s.DB.NewRaw("SELECT split_part(?, '|', 1), password_hash FROM cabinet_people WHERE email = 'pat@shared.test'", before).
		Scan(ctx, &hashBefore, &hashAfter); err != nil || hashBefore != hashAfter {
		t.Fatalf("accepting changed the password (%v)", err)
	}
	if p := person.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · owner") {
		t.Fatalf("the other company's session after accepting: %d %s", p.Status, p.URL)
	}
	if p := newcomer.get("/cabinet/keys"); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · developer") {
		t.Fatalf("after accepting: %d %s", p.Status, p.URL)
	}
	if p := holder.get(link); p.Status != http.StatusNotFound {
		t.Fatalf("the invitation after it was accepted: %d", p.Status)
	}

	// A new address still chooses its password.
	fresh, err := users.Invite(ctx, by, "new@fresh.test", organizer.RoleSupport)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, srv.URL, nil)
	if p := b.get(fresh.Path); p.Status != 200 || !strings.Contains(p.Body, `id="password_again"`) || strings.Contains(p.Body, `id="accept"`) {
		t.Fatalf("a new address's invitation: %d\n%s", p.Status, p.Body)
	}
	if to := b.accept(srv.URL + fresh.Path); to != "/cabinet/orders" {
		t.Fatalf("the new support user is sent to %s", to)
	}
	if st := signInFrom(t, srv.URL, "192.0.2.10", "new@fresh.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the new person signing in with the password chosen: %d", st)
	}
}

// TestCabinetSecondInvitationAfterThePasswordWasSet: a new address is
// invited by two companies and both pages ask for a new password; the
// first sets one. The second page's form, sent after that, is 409 and asks
// for that password: the new password typed there is not checked as the
// address's, so it counts as no failed sign-in (however often it is sent,
// the person still signs in from that client), and nothing changes. With
// the password set, the second invitation joins.
func TestCabinetSecondInvitationAfterThePasswordWasSet(t *testing.T) {
	s := testenv.NewStack(t)
	a, b := s.Company(t, "A"), s.Company(t, "B")
	srv, users := cabinetServer(t, s)
	const email, client = "new@both.test", "198.51.100.20"
	first := cabinetUserAs(t, s, srv.URL, a, email, organizer.RoleSupport)
	second := cabinetUserAs(t, s, srv.URL, b, email, organizer.RoleSupport)
	late := newBrowserless(t, srv.URL, fromAddr(client))
	if p := late.get(second); p.Status != 200 || !strings.Contains(p.Body, `name="password_again"`) {
		t.Fatalf("the second invitation's page: %d\n%s", p.Status, p.Body)
	}
	newBrowserless(t, srv.URL, nil).accept(first)
	before, checks := personState(t, s, email), users.PasswordChecks()
	for i := range 7 {
		p := late.post(second, url.Values{"password": {"another new password"}, "password_again": {"another new password"}})
		if p.Status != http.StatusConflict || !strings.Contains(p.Body, "has a password now") || !strings.Contains(p.Body, `id="accept"`) ||
			strings.Contains(p.Body, `name="password_again"`) {
			t.Fatalf("sending the second page's form (%d): %d, want 409 asking for the password\n%.1500s", i, p.Status, p.Body)
		}
	}
	if got := users.PasswordChecks() - checks; got != 0 || personState(t, s, email) != before {
		t.Fatalf("the refused forms checked %d passwords or changed the person", got)
	}
	if st := signInFrom(t, srv.URL, client, email, cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("signing in from that client afterwards: %d, want 303 (no failure counted)", st)
	}
	if p := late.post(second, url.Values{"password": {cabinetPassword}}); p.Status != 200 || p.URL.Path != "/cabinet/orders" {
		t.Fatalf("the second invitation with the password set: %d %s", p.Status, p.URL)
	}
}

// TestCabinetForgottenPasswordOnAnInvitation: a person with a password,
// removed and invited back (no company to sign in to), who forgot the
// password: the invitation's page e-mails the address a link that sets a
// new password. Whoever sent the page's form sees no link, and the
// invitation's link stops working; the e-mailed link sets the password
// and joins, and the old password no longer signs in.
func TestCabinetForgottenPasswordOnAnInvitation(t *testing.T) {
	s := testenv.NewStack(t)
	acme := s.Company(t, "Acme")
	base, outbox, logs := teamCabinet(t, s)
	owner := newBrowserless(t, base, nil)
	owner.setPassword(cabinetUser(t, s, base, acme, "owner@acme.test"))
	const email = "pat@acme.test"
	newBrowserless(t, base, nil).accept(cabinetUserAs(t, s, base, acme, email, organizer.RoleSupport))
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", memberID(t, s, email)), url.Values{}); status != http.StatusSeeOther {
		t.Fatalf("removing pat: %d", status)
	}
	if status, _, _ := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {email}, "role": {"support"}}); status != http.StatusSeeOther {
		t.Fatalf("inviting pat back: %d", status)
	}
	invitation := lastInvitation(t, outbox, email)
	sent := len(invitations(t, outbox, email))

	holder := newBrowserless(t, base, nil)
	if p := holder.get(invitation); p.Status != 200 || !strings.Contains(p.Body, `id="accept"`) || !strings.Contains(p.Body, `id="forgot"`) {
		t.Fatalf("the invitation's page: %d\n%s", p.Status, p.Body)
	}
	p := holder.post(invitation, url.Values{"forgot": {"1"}})
	if p.Status != 200 || !strings.Contains(p.Body, "Check your e-mail") || !strings.Contains(p.Body, email) {
		t.Fatalf("asking for a reset link: %d\n%s", p.Status, p.Body)
	}
	links := invitations(t, outbox, email)
	if len(links) != sent+1 {
		t.Fatalf("%d e-mails to the address after asking, want %d", len(links), sent+1)
	}
	reset := links[len(links)-1]
	token := reset[strings.LastIndex(reset, "/")+1:]
	if strings.Contains(p.Body, token) || strings.Contains(logs.String(), token) {
		t.Fatal("the reset link is on the page or in a log line")
	}
	for _, form := range []url.Values{{"forgot": {"1"}}, {"password": {cabinetPassword}}} {
		if p := holder.post(invitation, form); p.Status != http.StatusNotFound {
			t.Fatalf("the invitation's link after the reset link was sent (%v): %d", form, p.Status)
		}
	}

	person := newBrowserless(t, base, nil)
	if p := person.get(reset); p.Status != 200 || !strings.Contains(p.Body, `name="password_again"`) || !strings.Contains(p.Body, "replaces the one you had") {
		t.Fatalf("the reset link's page: %d\n%s", p.Status, p.Body)
	}
	const fresh = "a fresh password of pat"
	if status, loc, body := person.send(http.MethodPost, reset, url.Values{"password": {fresh}, "password_again": {fresh}}); status != http.StatusSeeOther ||
		loc != "/cabinet/orders" {
		t.Fatalf("setting the new password: %d %s\n%.500s", status, loc, body)
	}
	if st := signInFrom(t, base, "192.0.2.30", email, fresh); st != http.StatusSeeOther {
		t.Fatalf("signing in with the new password: %d", st)
	}
	if st := signInFrom(t, base, "192.0.2.30", email, cabinetPassword); st != http.StatusUnauthorized {
		t.Fatalf("signing in with the forgotten password: %d", st)
	}
	if got := memberRow(t, owner, email); !strings.Contains(got, `data-status="active"`) {
		t.Fatalf("pat's row after the reset: %s", got)
	}
}

// TestCabinetNewPasswordSpendsResetLinks: a password changed on Account,
// or set through a lost-password link, spends every pending lost-password
// link of the person, in every company. Another company's pending
// invitation keeps working (its owner would see it go), but it is no
// reset: it asks for the new password, and the old one is refused.
func TestCabinetNewPasswordSpendsResetLinks(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	rival := s.Company(t, "Rival")
	acme := s.Company(t, "Acme")
	third := s.Company(t, "Third")
	srv, users := cabinetServer(t, s)
	person := newBrowserless(t, srv.URL, fromAddr("198.51.100.7"))
	person.setPassword(cabinetUser(t, s, srv.URL, rival, "pat@shared.test"))
	newBrowserless(t, srv.URL, fromAddr("198.51.100.7")).accept(cabinetUserAs(t, s, srv.URL, acme, "pat@shared.test", organizer.RoleDeveloper))
	// A pending invitation of a third company.
	thirdLink := cabinetUserAs(t, s, srv.URL, third, "pat@shared.test", organizer.RoleFinance)
	memberships := map[string]int64{}
	for _, c := range []struct {
		name string
		id   int64
	}{{"rival", rival}, {"acme", acme}} {
		var id int64
		if err := s.DB.NewRaw("SELECT id FROM cabinet_users WHERE email = 'pat@shared.test' AND company_id = ?", c.id).Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		memberships[c.name] = id
	}
	resetLinks := func() (string, string) {
		t.Helper()
		var out []string
		for _, name := range []string{"rival", "acme"} {
			path, err := users.NewLink(ctx, memberships[name])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, srv.URL+path)
		}
		return out[0], out[1]
	}

	// Changed on Account: both lost-password links are spent.
	rivalReset, acmeReset := resetLinks()
	const changed = "a changed password 1"
	if p := person.signIn("pat@shared.test", cabinetPassword); p.Status != 200 {
		t.Fatalf("signing in: %d %s", p.Status, p.URL)
	}
	if p := person.post("/cabinet/account/password", url.Values{"current_password": {cabinetPassword}, "password": {changed},
		"password_again": {changed}}); p.Status != 200 || !strings.Contains(p.Body, "pat@shared.test · ") || strings.Contains(p.Body, `id="message"`) {
		t.Fatalf("changing the password: %d %s", p.Status, p.URL)
	}
	for _, l := range []string{rivalReset, acmeReset} {
		if p := newBrowserless(t, srv.URL, nil).get(l); p.Status != http.StatusNotFound {
			t.Fatalf("a lost-password link after the password changed: %d", p.Status)
		}
	}
	// The third company's invitation still works, with the new password
	// only: it never sets one.
	invitee := newBrowserless(t, srv.URL, fromAddr("198.51.100.7"))
	if p := invitee.get(thirdLink); p.Status != 200 || !strings.Contains(p.Body, `id="accept"`) {
		t.Fatalf("the pending invitation after the change: %d\n%.2000s", p.Status, p.Body)
	}
	before := personState(t, s, "pat@shared.test")
	if p := invitee.post(thirdLink, url.Values{"password": {cabinetPassword}}); p.Status != http.StatusUnauthorized ||
		personState(t, s, "pat@shared.test") != before {
		t.Fatalf("the invitation with the old password: %d (the person changed: %v)", p.Status, personState(t, s, "pat@shared.test") != before)
	}
	if p := invitee.post(thirdLink, url.Values{"password": {changed}}); p.Status != 200 || p.URL.Path != "/cabinet/report" ||
		!strings.Contains(p.Body, "pat@shared.test · finance") {
		t.Fatalf("the invitation with the new password: %d %s", p.Status, p.URL)
	}
	if st := signInFrom(t, srv.URL, "192.0.2.10", "pat@shared.test", changed); st != http.StatusSeeOther {
		t.Fatalf("the changed password after accepting: %d", st)
	}

	// Set through a lost-password link: the other one is spent.
	rivalReset, acmeReset = resetLinks()
	reset := newBrowserless(t, srv.URL, nil)
	if p := reset.get(acmeReset); p.Status != 200 || !strings.Contains(p.Body, `id="password_again"`) {
		t.Fatalf("a lost-password link's page: %d\n%.2000s", p.Status, p.Body)
	}
	reset.accept(acmeReset)
	if p := newBrowserless(t, srv.URL, nil).get(rivalReset); p.Status != http.StatusNotFound {
		t.Fatalf("the other company's lost-password link after a reset: %d", p.Status)
	}
	if st := signInFrom(t, srv.URL, "192.0.2.11", "pat@shared.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the password the reset set: %d", st)
	}
}

// TestCabinetTwoInvitationsOfANewPersonAtOnce: a new address invited by
// two companies accepts both at once, with two passwords: one sets the
// password and joins; the other, which finds a password by then, joins
// nothing and sets nothing (asked for that password: a wrong one, or one
// set while it was hashing its own). Many rounds, so both orders occur.
func TestCabinetTwoInvitationsOfANewPersonAtOnce(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	a, b := s.Company(t, "A"), s.Company(t, "B")
	users := organizer.New(s.DB, nil, organizer.Limits{PasswordChecks: 2})
	for round := range 4 {
		email := fmt.Sprintf("new-%d@both.test", round)
		tokens := []string{}
		for _, company := range []int64{a, b} {
			_, path, err := users.CreateUser(ctx, company, email, organizer.RoleSupport)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, strings.TrimPrefix(path, organizer.LinkPath))
		}
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i := range tokens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = users.UseLink(ctx, fmt.Sprintf("192.0.2.%d", i+1), tokens[i], fmt.Sprintf("password number %d", i))
			}()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won < 0:
				won = i
			case err == nil:
				t.Fatalf("round %d: both invitations set a password", round)
			case !errors.Is(err, organizer.ErrExistingPassword) && !errors.Is(err, organizer.ErrBadCredentials):
				t.Fatalf("round %d: invitation %d: %v", round, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: neither invitation was accepted: %v", round, errs)
		}
		var joined int
		if err := s.DB.NewRaw("SELECT count(*) FROM cabinet_users WHERE email = ? AND joined_at IS NOT NULL", email).Scan(ctx, &joined); err != nil || joined != 1 {
			t.Fatalf("round %d: %d memberships joined (%v), want 1", round, joined, err)
		}
		if _, _, err := users.SignIn(ctx, "198.51.100.1", email, fmt.Sprintf("password number %d", won)); err != nil {
			t.Fatalf("round %d: the winner's password does not sign in: %v", round, err)
		}
		// The other invitation still works, with that password.
		if _, _, err := users.UseLink(ctx, "198.51.100.1", tokens[1-won], fmt.Sprintf("password number %d", won)); err != nil {
			t.Fatalf("round %d: the other invitation with the password set: %v", round, err)
		}
	}
}

package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
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
// accepts, keeps the first company, signs in once with one password and
// moves between the two; each company's team page shows only its own
// membership, and being removed from one leaves the other.
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
	if p := newcomer.get(link); !strings.Contains(p.Body, "Acme") || strings.Contains(p.Body, "Secret Rival") {
		t.Fatalf("the invitation's page:\n%s", p.Body)
	}
	if to := newcomer.accept(link); to != "/cabinet/keys" {
		t.Fatalf("accepting sends to %s", to)
	}
	if p := newcomer.get("/cabinet/keys"); !strings.Contains(p.Body, "pat@shared.test · developer") {
		t.Fatalf("after accepting:\n%.1500s", p.Body)
	}
	// The password chosen is the person's: sessions opened with the old
	// one end, and the old one no longer signs in.
	if p := person.get("/cabinet/report"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("the session of the old password: %d %s", p.Status, p.URL)
	}
	if p := person.signIn("pat@shared.test", cabinetPassword+"-old"); p.Status != http.StatusUnauthorized {
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
// teams sees the other on Account and switches to it; the account page
// fits 1280 and 390 px (screenshots account-two-organizers-*.png).
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
	for _, link := range []string{
		cabinetUserAs(t, s, base, rival, "pat@shared.test", organizer.RoleOwner),
		cabinetUserAs(t, s, base, acme, "pat@shared.test", organizer.RoleDeveloper),
	} {
		run("use a link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password")),
			chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
			chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS(".who")))
	}
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

package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/api/cabinet"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv"

	"github.com/chromedp/chromedp"
)

// teamCabinet serves a cabinet of its own over the stack's database, with
// its log lines kept (at debug level) and its mail in an outbox: the
// invitation tests read both.
func teamCabinet(t *testing.T, s *testenv.Stack) (base, outbox string, logs *syncBuffer) {
	t.Helper()
	outbox, logs = t.TempDir(), new(syncBuffer)
	m, err := mail.New("", outbox, "cabinet@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	base = "http://" + hs.Listener.Addr().String()
	hs.Config.Handler = cabinet.New(cabinet.Deps{DB: s.DB, Users: organizer.New(s.DB, nil, organizer.Limits{}),
		Auth: apikey.NewAuthenticator(s.DB, 0), PublicBaseURL: base, Mail: m,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	hs.Start()
	t.Cleanup(hs.Close)
	return base, outbox, logs
}

// outboxInstance serves another api instance of the stack whose cabinet
// mails into a temporary outbox (every dependency of every page set).
func outboxInstance(t *testing.T, s *testenv.Stack) (base, outbox string) {
	t.Helper()
	outbox = t.TempDir()
	base, _ = s.Instance(t, func(c *config.Config) { c.MailOutbox = outbox }, api.ProcessOptions{})
	return base, outbox
}

var invitationLink = regexp.MustCompile(`https?://[^\s"<>]+/cabinet/link/[A-Za-z0-9_-]{43}`)

// invitations returns the links of the invitations the outbox holds for
// the address, oldest first.
func invitations(t *testing.T, outbox, to string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(outbox, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	type found struct {
		at   time.Time
		link string
	}
	var all []found
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Undo quoted-printable's soft line breaks before looking.
		text := strings.NewReplacer("=\r\n", "", "=\n", "", "=3D", "=").Replace(string(b))
		if !regexp.MustCompile(`(?mi)^To: .*` + regexp.QuoteMeta(to)).MatchString(text) {
			continue
		}
		link := invitationLink.FindString(text)
		if link == "" {
			t.Fatalf("invitation %s has no link:\n%s", f, text)
		}
		st, _ := os.Stat(f)
		all = append(all, found{st.ModTime(), link})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].at.Before(all[j].at) })
	out := make([]string, len(all))
	for i, f := range all {
		out[i] = f.link
	}
	return out
}

// lastInvitation is the newest invitation's link for the address.
func lastInvitation(t *testing.T, outbox, to string) string {
	t.Helper()
	links := invitations(t, outbox, to)
	if len(links) == 0 {
		t.Fatalf("no invitation for %s in the outbox", to)
	}
	return links[len(links)-1]
}

// accept sets the password through a link (on the browser's own server),
// or gives it where the page asks for the address's password, and returns
// where the signed-in user is sent: the first page the role may open.
func (b *browserless) accept(link string) string {
	b.t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		b.t.Fatal(err)
	}
	p := b.get(u.Path)
	if p.Status != 200 {
		b.t.Fatalf("invitation link page: %d %.300s", p.Status, p.Body)
	}
	form := url.Values{"password": {cabinetPassword}}
	if strings.Contains(p.Body, `name="password_again"`) {
		form.Set("password_again", cabinetPassword)
	}
	status, loc, body := b.send(http.MethodPost, u.Path, form)
	if status != http.StatusSeeOther || loc == "" || strings.HasPrefix(loc, "/cabinet/signin") {
		b.t.Fatalf("accepting the invitation: %d %s %.300s", status, loc, body)
	}
	return loc
}

// noFollow is a client of the browser's session that shows redirects.
func (b *browserless) noFollow() *http.Client {
	return &http.Client{Jar: b.c.Jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// send makes a request without following a redirect: its status, its
// Location, its body.
func (b *browserless) send(method, path string, form url.Values) (int, string, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, b.abs(path), body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.noFollow().Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(text)
}

// memberID is the id of the company's user with the e-mail.
func memberID(t *testing.T, s *testenv.Stack, email string) int64 {
	t.Helper()
	var id int64
	if err := s.DB.NewRaw("SELECT id FROM cabinet_users WHERE email = ?", email).Scan(context.Background(), &id); err != nil {
		t.Fatalf("user %s: %v", email, err)
	}
	return id
}

// activeOwners counts the company's owners who can sign in.
func activeOwners(t *testing.T, s *testenv.Stack, company int64) int {
	t.Helper()
	var n int
	if err := s.DB.NewRaw(`SELECT count(*) FROM cabinet_users WHERE company_id = ? AND role = 'owner'
		AND disabled_at IS NULL AND joined_at IS NOT NULL`, company).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCabinetTeamInvitation: the owner invites by e-mail; the e-mail in the
// outbox holds a one-time link which asks for a password and signs the
// person in with the role; the link works once; resending spends the old
// link; bad input and a member's e-mail change nothing (an address of
// another company's user is invited as any other:
// TestCabinetAddressInTwoCompanies); no log line holds a link's token.
func TestCabinetTeamInvitation(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	company := s.Company(t, "Acme")
	other := s.Company(t, "Secret Rival Ltd")
	base, outbox, logs := teamCabinet(t, s)
	owner := newBrowserless(t, base, nil)
	owner.setPassword(cabinetUser(t, s, base, company, "owner@acme.test"))
	cabinetUser(t, s, base, other, "taken@rival.test")

	users := func() int {
		var n int
		if err := s.DB.NewRaw("SELECT count(*) FROM cabinet_users").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := users()
	for _, c := range []struct {
		email, role string
		status      int
		says        string
	}{
		{"not an address", "support", 422, "not an e-mail address"},
		{"x@acme.test", "boss", 422, "Choose one of the roles"},
		{"owner@acme.test", "support", 409, "already in your team"},
	} {
		p := owner.post("/cabinet/team/invite", url.Values{"email": {c.email}, "role": {c.role}})
		if p.Status != c.status || !strings.Contains(p.Body, c.says) {
			t.Fatalf("invite %q as %q: %d, want %d saying %q\n%.2000s", c.email, c.role, p.Status, c.status, c.says, p.Body)
		}
		if strings.Contains(p.Body, "Secret Rival") || strings.Contains(p.Body, fmt.Sprintf(">%d<", other)) {
			t.Fatal("the refusal names the company that has the e-mail")
		}
	}
	if n := users(); n != before {
		t.Fatalf("refused invitations made users: %d, before %d", n, before)
	}
	if links := invitations(t, outbox, "@"); len(links) != 0 {
		t.Fatalf("refused invitations sent e-mail: %v", links)
	}

	// Invite; the answer redirects (a reload repeats nothing) to the list.
	status, loc, _ := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {"Door.Keeper@Acme.test"}, "role": {"door"}})
	if status != http.StatusSeeOther || loc != "/cabinet/team" {
		t.Fatalf("invite: %d %s", status, loc)
	}
	list := owner.get("/cabinet/team")
	id := memberID(t, s, "door.keeper@acme.test")
	row := regexp.MustCompile(fmt.Sprintf(`(?s)<tr data-member-id="%d" data-status="invited" data-role="door">.*?</tr>`, id)).FindString(list.Body)
	if !strings.Contains(list.Body, "Invitation sent to door.keeper@acme.test as door") || row == "" || !strings.Contains(row, "valid until") ||
		!strings.Contains(row, "by owner@acme.test") {
		t.Fatalf("the team page after inviting:\n%s", list.Body)
	}
	first := lastInvitation(t, outbox, "door.keeper@acme.test")
	if !strings.HasPrefix(first, base+"/cabinet/link/") {
		t.Fatalf("the invitation's link %s is not on the cabinet's public address %s", first, base)
	}

	// Resend: the first link stops working, the new one works.
	if status, loc, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/resend", id), url.Values{}); status != http.StatusSeeOther || loc != "/cabinet/team" {
		t.Fatalf("resend: %d %s", status, loc)
	}
	links := invitations(t, outbox, "door.keeper@acme.test")
	if len(links) != 2 || links[1] == first {
		t.Fatalf("after resending, the outbox holds %d invitations: %v", len(links), links)
	}
	invitee := newBrowserless(t, base, nil)
	if p := invitee.get(first); p.Status != http.StatusNotFound {
		t.Fatalf("the first link after resending: %d", p.Status)
	}
	if p := invitee.get(links[1]); p.Status != 200 || !strings.Contains(p.Body, `id="invitation"`) || !strings.Contains(p.Body, "Acme") ||
		!strings.Contains(p.Body, "<strong>door</strong>") {
		t.Fatalf("the invitation's page: %d\n%s", p.Status, p.Body)
	}
	if to := invitee.accept(links[1]); to != "/cabinet/checkin" {
		t.Fatalf("the door keeper is sent to %s", to)
	}
	landed := invitee.get("/cabinet/checkin")
	if landed.Status != 200 || !strings.Contains(landed.Body, "door.keeper@acme.test · door") {
		t.Fatalf("the door keeper landed on %s:\n%.1000s", landed.URL, landed.Body)
	}
	for _, hidden := range []string{`href="/cabinet/report"`, `href="/cabinet/keys"`, `href="/cabinet/team"`, `href="/cabinet/catalog"`} {
		if strings.Contains(landed.Body, hidden) {
			t.Errorf("the door keeper's menu links %s", hidden)
		}
	}
	if p := invitee.get("/cabinet/team"); p.Status != http.StatusForbidden {
		t.Fatalf("the door keeper on the team page: %d", p.Status)
	}
	// The link worked once.
	if p := newBrowserless(t, base, nil).get(links[1]); p.Status != http.StatusNotFound {
		t.Fatalf("the invitation link used again: %d", p.Status)
	}
	if p := newBrowserless(t, base, nil).post(links[1], url.Values{"password": {"another password 1"}, "password_again": {"another password 1"}}); p.Status != http.StatusNotFound {
		t.Fatalf("the invitation link posted again: %d", p.Status)
	}
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/resend", id), url.Values{}); status != http.StatusConflict {
		t.Fatalf("resending to a member who accepted: %d", status)
	}
	list = owner.get("/cabinet/team")
	if !regexp.MustCompile(fmt.Sprintf(`<tr data-member-id="%d" data-status="active" data-role="door">`, id)).MatchString(list.Body) {
		t.Fatalf("the accepted member is not active on the team page:\n%s", list.Body)
	}

	// No log line holds a token.
	for _, l := range append(links, first) {
		token := l[strings.LastIndex(l, "/")+1:]
		if strings.Contains(logs.String(), token) {
			t.Fatalf("a log line holds an invitation's token:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "action=invite") || !strings.Contains(logs.String(), fmt.Sprintf("user_id=%d", id)) {
		t.Fatalf("the invitation is not logged with who did it:\n%s", logs.String())
	}
}

// TestCabinetTeamRoleChangeAndRemoval: a role change counts from the
// member's next request; removing a member ends their session at once and
// they cannot sign in; the last active owner cannot leave, be removed or
// be demoted; another company's user is 404 as an unknown one; a removed
// member invited again comes back with a new password only.
func TestCabinetTeamRoleChangeAndRemoval(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	other := s.Company(t, "Other")
	base, outbox, _ := teamCabinet(t, s)
	owner := newBrowserless(t, base, nil)
	owner.setPassword(cabinetUser(t, s, base, company, "owner@acme.test"))
	ownerID := memberID(t, s, "owner@acme.test")
	cabinetUser(t, s, base, other, "stranger@other.test")
	strangerID := memberID(t, s, "stranger@other.test")

	dev := newBrowserless(t, base, nil)
	if status, _, _ := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {"dev@acme.test"}, "role": {"developer"}}); status != 303 {
		t.Fatalf("invite: %d", status)
	}
	if to := dev.accept(lastInvitation(t, outbox, "dev@acme.test")); to != "/cabinet/keys" {
		t.Fatalf("the developer is sent to %s", to)
	}
	devID := memberID(t, s, "dev@acme.test")

	// Another company's user: 404, nothing changed.
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", strangerID)},
		{http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", strangerID)},
		{http.MethodGet, fmt.Sprintf("/cabinet/team/%d/remove", strangerID)},
		{http.MethodPost, fmt.Sprintf("/cabinet/team/%d/resend", strangerID)},
		{http.MethodPost, "/cabinet/team/999999999/role"},
		{http.MethodPost, "/cabinet/team/abc/remove"},
	} {
		if status, _, _ := owner.send(c.method, c.path, url.Values{"role": {"door"}}); status != http.StatusNotFound {
			t.Fatalf("%s %s: %d, want 404", c.method, c.path, status)
		}
	}
	var role string
	var disabled bool
	if err := s.DB.NewRaw("SELECT role, disabled_at IS NOT NULL FROM cabinet_users WHERE id = ?", strangerID).Scan(context.Background(), &role, &disabled); err != nil || role != "owner" || disabled {
		t.Fatalf("another company's user after the refused changes: %s disabled=%v %v", role, disabled, err)
	}

	// The role counts from the member's next request.
	if p := dev.get("/cabinet/keys"); p.Status != 200 {
		t.Fatalf("developer on keys: %d", p.Status)
	}
	if status, loc, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", devID), url.Values{"role": {"door"}}); status != 303 || loc != "/cabinet/team" {
		t.Fatalf("change the role: %d %s", status, loc)
	}
	if p := dev.get("/cabinet/keys"); p.Status != http.StatusForbidden {
		t.Fatalf("keys after the role became door: %d", p.Status)
	}
	if p := dev.get("/cabinet/checkin"); p.Status != 200 || !strings.Contains(p.Body, "dev@acme.test · door") {
		t.Fatalf("check-in after the role became door: %d", p.Status)
	}
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", devID), url.Values{"role": {"admin"}}); status != 422 {
		t.Fatalf("an unknown role: %d", status)
	}

	// The last active owner: not demoted, not removed, cannot leave.
	if status, _, body := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", ownerID), url.Values{"role": {"finance"}}); status != http.StatusConflict ||
		!strings.Contains(body, "at least one active owner") {
		t.Fatalf("demoting the last owner: %d", status)
	}
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", ownerID), url.Values{}); status != http.StatusConflict {
		t.Fatalf("removing the last owner: %d", status)
	}
	if status, _, body := owner.send(http.MethodPost, "/cabinet/account/leave", url.Values{}); status != http.StatusConflict || !strings.Contains(body, "last active owner") {
		t.Fatalf("the last owner leaving: %d", status)
	}
	// An invited owner who has not accepted is no active owner yet.
	if status, _, _ := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {"owner2@acme.test"}, "role": {"owner"}}); status != 303 {
		t.Fatalf("invite a second owner: %d", status)
	}
	if status, _, _ := owner.send(http.MethodPost, "/cabinet/account/leave", url.Values{}); status != http.StatusConflict {
		t.Fatalf("leaving with only an invited owner beside: %d", status)
	}
	if n := activeOwners(t, s, company); n != 1 {
		t.Fatalf("active owners: %d", n)
	}

	// Remove the member: asked first, then signed out at once.
	confirm := owner.get(fmt.Sprintf("/cabinet/team/%d/remove", devID))
	if confirm.Status != 200 || !strings.Contains(confirm.Body, `id="confirm-remove"`) || !strings.Contains(confirm.Body, "dev@acme.test") {
		t.Fatalf("the removal's confirmation: %d\n%s", confirm.Status, confirm.Body)
	}
	if status, loc, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", devID), url.Values{}); status != 303 || loc != "/cabinet/team" {
		t.Fatalf("remove: %d %s", status, loc)
	}
	if p := dev.get("/cabinet/checkin"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("the removed member's next request: %d %s", p.Status, p.URL)
	}
	if p := dev.signIn("dev@acme.test", cabinetPassword); p.Status != http.StatusUnauthorized {
		t.Fatalf("the removed member signing in: %d", p.Status)
	}
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", devID), url.Values{}); status != 303 {
		t.Fatalf("removing again: %d (safe to run twice)", status)
	}
	if status, _, _ := owner.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", devID), url.Values{"role": {"owner"}}); status != http.StatusConflict {
		t.Fatalf("a role for a removed member: %d", status)
	}
	if !regexp.MustCompile(fmt.Sprintf(`<tr data-member-id="%d" data-status="disabled"`, devID)).MatchString(owner.get("/cabinet/team").Body) {
		t.Fatal("the removed member is not listed as disabled")
	}

	// Invited again, the member comes back only through the new link.
	if status, _, _ := owner.send(http.MethodPost, "/cabinet/team/invite", url.Values{"email": {"dev@acme.test"}, "role": {"finance"}}); status != 303 {
		t.Fatalf("invite the removed member again: %d", status)
	}
	if p := dev.signIn("dev@acme.test", cabinetPassword); p.Status != http.StatusUnauthorized {
		t.Fatalf("the old password after the new invitation: %d", p.Status)
	}
	if to := dev.accept(lastInvitation(t, outbox, "dev@acme.test")); to != "/cabinet/report" {
		t.Fatalf("back as finance, sent to %s", to)
	}
	if p := dev.get("/cabinet/report"); p.Status != 200 || !strings.Contains(p.Body, "dev@acme.test · finance") {
		t.Fatalf("back as finance: %d", p.Status)
	}

	// With a second active owner, the first may leave: the session ends.
	owner2 := newBrowserless(t, base, nil)
	owner2.accept(lastInvitation(t, outbox, "owner2@acme.test"))
	if p := owner.get("/cabinet/account/leave"); p.Status != 200 || !strings.Contains(p.Body, `id="confirm-leave"`) {
		t.Fatalf("the leave confirmation: %d", p.Status)
	}
	if status, loc, _ := owner.send(http.MethodPost, "/cabinet/account/leave", url.Values{}); status != 303 || loc != "/cabinet/signin?left=1" {
		t.Fatalf("leave: %d %s", status, loc)
	}
	if p := owner.get("/cabinet/team"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("after leaving: %s", p.URL)
	}
	if n := activeOwners(t, s, company); n != 1 {
		t.Fatalf("active owners after one left: %d", n)
	}
	// owner2 is now the last: removing themselves is leaving, refused.
	if status, _, _ := owner2.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/remove", memberID(t, s, "owner2@acme.test")), url.Values{}); status != http.StatusConflict {
		t.Fatalf("the last owner removing themselves: %d", status)
	}
}

// TestCabinetOwnersDemoteEachOtherAtOnce: two owners demote each other at
// the same moment, over and over, through the cabinet and through the
// service: one of them wins each time, never both: the company keeps
// exactly one active owner.
func TestCabinetOwnersDemoteEachOtherAtOnce(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	base, _, _ := teamCabinet(t, s)
	a, b := newBrowserless(t, base, nil), newBrowserless(t, base, nil)
	a.setPassword(cabinetUser(t, s, base, company, "a@acme.test"))
	b.setPassword(cabinetUser(t, s, base, company, "b@acme.test"))
	ids := map[*browserless]int64{a: memberID(t, s, "a@acme.test"), b: memberID(t, s, "b@acme.test")}

	for round := range 8 {
		statuses := map[*browserless]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for me, other := range map[*browserless]*browserless{a: b, b: a} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				status, _, _ := me.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", ids[other]), url.Values{"role": {"support"}})
				mu.Lock()
				statuses[me] = status
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
		if n := activeOwners(t, s, company); n != 1 {
			t.Fatalf("round %d: %d active owners after both demoted each other (%v)", round, n, statuses)
		}
		won := 0
		for me, st := range statuses {
			switch st {
			case http.StatusSeeOther:
				won++
				// Make the other an owner again for the next round.
				if status, _, _ := me.send(http.MethodPost, fmt.Sprintf("/cabinet/team/%d/role", ids[map[*browserless]*browserless{a: b, b: a}[me]]),
					url.Values{"role": {"owner"}}); status != http.StatusSeeOther {
					t.Fatalf("round %d: promote back: %d", round, status)
				}
			case http.StatusConflict, http.StatusForbidden:
			default:
				t.Fatalf("round %d: a demotion answered %d", round, st)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d demotions won (%v)", round, won, statuses)
		}
	}

	// The same race straight at the service, many times.
	users := organizer.New(s.DB, nil, organizer.Limits{})
	ctx := context.Background()
	idA, idB := ids[a], ids[b]
	for round := range 40 {
		var wg sync.WaitGroup
		errsOf := make([]error, 2)
		for i, target := range []int64{idA, idB} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errsOf[i] = users.ChangeRole(ctx, company, target, organizer.RoleFinance)
			}()
		}
		wg.Wait()
		if n := activeOwners(t, s, company); n != 1 {
			t.Fatalf("service round %d: %d active owners (%v)", round, n, errsOf)
		}
		for i, err := range errsOf {
			if err == nil {
				continue
			}
			if !strings.Contains(err.Error(), organizer.ErrLastOwner.Error()) {
				t.Fatalf("service round %d: %v", round, err)
			}
			// i kept the role: the other was demoted; promote it back.
			if _, err := users.ChangeRole(ctx, company, []int64{idA, idB}[1-i], organizer.RoleOwner); err != nil {
				t.Fatal(err)
			}
		}
		if errsOf[0] == nil && errsOf[1] == nil {
			t.Fatalf("service round %d: both demotions succeeded", round)
		}
	}
}

// TestCabinetPasswordChangeEndsOtherSessions: the account page changes
// the password with the current one and the new one twice; the user's
// other sessions end, this one stays; the old password no longer signs
// in; wrong input changes nothing.
func TestCabinetPasswordChangeEndsOtherSessions(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	base, _, logs := teamCabinet(t, s)
	here, there := newBrowserless(t, base, nil), newBrowserless(t, base, nil)
	link := cabinetUserAs(t, s, base, company, "sam@acme.test", organizer.RoleSupport)
	here.accept(link)
	if status, loc, _ := there.send(http.MethodPost, "/cabinet/signin", url.Values{"email": {"sam@acme.test"}, "password": {cabinetPassword}}); status != 303 || loc == "/cabinet/signin" {
		t.Fatalf("the second session: %d %s", status, loc)
	}
	account := here.get("/cabinet/account")
	if account.Status != 200 || !strings.Contains(account.Body, `<dd id="account-role">support</dd>`) || !strings.Contains(account.Body, "Acme") {
		t.Fatalf("the account page: %d\n%s", account.Status, account.Body)
	}
	const next = "a much newer passphrase"
	for _, c := range []struct {
		current, pw, again string
		status             int
		says               string
	}{
		{"wrong password!", next, next, 422, "current password is wrong"},
		{cabinetPassword, next, next + "x", 422, "differ"},
		{cabinetPassword, "short", "short", 422, "at least 10 characters"},
	} {
		p := here.post("/cabinet/account/password", url.Values{"current_password": {c.current}, "password": {c.pw}, "password_again": {c.again}})
		if p.Status != c.status || !strings.Contains(p.Body, c.says) {
			t.Fatalf("change with %+v: %d\n%.1500s", c, p.Status, p.Body)
		}
	}
	if p := there.get("/cabinet/account"); p.Status != 200 || p.URL.Path != "/cabinet/account" {
		t.Fatalf("the other session after refused changes: %s", p.URL)
	}
	status, loc, _ := here.send(http.MethodPost, "/cabinet/account/password",
		url.Values{"current_password": {cabinetPassword}, "password": {next}, "password_again": {next}})
	if status != http.StatusSeeOther || loc != "/cabinet/account" {
		t.Fatalf("change the password: %d %s", status, loc)
	}
	if p := here.get("/cabinet/account"); p.URL.Path != "/cabinet/account" || !strings.Contains(p.Body, "Your password is changed") {
		t.Fatalf("this session after the change: %s\n%.1000s", p.URL, p.Body)
	}
	if p := there.get("/cabinet/account"); p.URL.Path != "/cabinet/signin" {
		t.Fatalf("the other session after the change: %s", p.URL)
	}
	if p := newBrowserless(t, base, nil).signIn("sam@acme.test", cabinetPassword); p.Status != http.StatusUnauthorized {
		t.Fatalf("the old password: %d", p.Status)
	}
	if status, loc, _ := newBrowserless(t, base, nil).send(http.MethodPost, "/cabinet/signin", url.Values{"email": {"sam@acme.test"}, "password": {next}}); status != 303 || loc == "/cabinet/signin" {
		t.Fatalf("the new password: %d %s", status, loc)
	}
	if strings.Contains(logs.String(), next) || strings.Contains(logs.String(), cabinetPassword) {
		t.Fatal("a log line holds a password")
	}
}

// teamRoute is how the role test exercises one cabinet route: perm is the
// permission the route needs ("" for every signed-in user), request makes
// a fresh request for it (a new target each time, so allowed actions do
// not use each other up). public routes need no session.
type teamRoute struct {
	perm    organizer.Perm
	public  bool
	request func(t *testing.T) (path string, form url.Values)
}

var cabinetRoutePattern = regexp.MustCompile(`mux\.Handle(?:Func)?\("((?:GET|POST|PUT|PATCH|DELETE) )?(/cabinet/[^"]*)",\s*(c\.allow\(organizer\.(Perm\w+)|c\.signedIn\()?`)

// cabinetRouteGuards reads the routes the cabinet's source registers, each
// with the permission its code names ("signedIn" for any signed-in user,
// "" for none).
func cabinetRouteGuards(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("cabinet", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("cabinet sources: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cabinetRoutePattern.FindAllStringSubmatch(string(src), -1) {
			guard := ""
			switch {
			case m[4] != "":
				guard = m[4]
			case m[3] != "":
				guard = "signedIn"
			}
			out[m[1]+m[2]] = guard
		}
	}
	return out
}

var permNames = map[organizer.Perm]string{
	organizer.PermReport: "PermReport", organizer.PermOrders: "PermOrders", organizer.PermRefund: "PermRefund",
	organizer.PermResend: "PermResend", organizer.PermCancel: "PermCancel", organizer.PermCheckIn: "PermCheckIn",
	organizer.PermKeys: "PermKeys", organizer.PermRequests: "PermRequests", organizer.PermWebhooks: "PermWebhooks",
	organizer.PermCatalog: "PermCatalog", organizer.PermTeam: "PermTeam", organizer.PermDistribution: "PermDistribution", organizer.PermNotes: "PermNotes",
	organizer.PermDoorDesk: "PermDoorDesk",
	organizer.PermAudit:    "PermAudit",
}

// TestCabinetRoleLimits: for every role, every cabinet page and action
// the source registers answers 403 and changes nothing where the role
// lacks the permission (organizer.Role.Can), and is served otherwise. A
// route without an entry here fails the test.
func TestCabinetRoleLimits(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	key, _ := s.Key(t, company, apikey.Sandbox)
	f := &fixture{Stack: s, companyA: company, keyA: key}
	ctx := context.Background()
	base, _ := outboxInstance(t, f.Stack)
	owner := newBrowserless(t, base, nil)
	owner.setPassword(cabinetUser(t, f.Stack, base, f.companyA, "owner@a.test"))
	users := organizer.New(f.DB, nil, organizer.Limits{})
	n := 0
	fresh := func(t *testing.T) int64 { // a new invited member to act on
		n++
		u, _, err := users.CreateUser(ctx, f.companyA, fmt.Sprintf("target-%d@a.test", n), organizer.RoleSupport)
		if err != nil {
			t.Fatal(err)
		}
		return u.ID
	}
	r := newReceiver(t)
	endpoint := f.subscribe(t, f.keyA, r)
	// A delivery to show and send again (no worker runs here to make one).
	if _, err := f.DB.ExecContext(ctx, `INSERT INTO webhook_events (id, type, company_id, is_test, endpoint_id) VALUES ('evt_role_test', 'webhook.test', ?, true, ?);
		INSERT INTO webhook_deliveries (event_id, endpoint_id) VALUES ('evt_role_test', ?)`, f.companyA, endpoint, endpoint); err != nil {
		t.Fatal(err)
	}
	endpointPath := fmt.Sprintf("/cabinet/webhooks/%d", endpoint)
	post := func(path string, form url.Values) func(*testing.T) (string, url.Values) {
		return func(*testing.T) (string, url.Values) { return path, form }
	}
	fixed := func(path string) func(*testing.T) (string, url.Values) {
		return func(*testing.T) (string, url.Values) { return path, nil }
	}
	routes := map[string]teamRoute{
		"GET /cabinet/signin":                           {public: true},
		"POST /cabinet/signin":                          {public: true},
		"GET /cabinet/link/{token}":                     {public: true},
		"POST /cabinet/link/{token}":                    {public: true},
		"POST /cabinet/signout":                         {public: true},
		"GET /cabinet/signin/code":                      {public: true},
		"POST /cabinet/signin/code":                     {public: true},
		"/cabinet/":                                     {public: true},
		"GET /cabinet/{$}":                              {request: fixed("/cabinet/")},
		"GET /cabinet/report":                           {perm: organizer.PermReport, request: fixed("/cabinet/report")},
		"GET /cabinet/report.csv":                       {perm: organizer.PermReport, request: fixed("/cabinet/report.csv")},
		"GET /cabinet/orders":                           {perm: organizer.PermOrders, request: fixed("/cabinet/orders")},
		"GET /cabinet/orders/{id}":                      {perm: organizer.PermOrders, request: fixed("/cabinet/orders/1")}, // no order sold here: 404 when allowed
		"GET /cabinet/orders/{id}/refund":               {perm: organizer.PermRefund, request: fixed("/cabinet/orders/1/refund")},
		"POST /cabinet/orders/{id}/refund":              {perm: organizer.PermRefund, request: post("/cabinet/orders/1/refund", url.Values{})},
		"GET /cabinet/orders/{id}/resend":               {perm: organizer.PermResend, request: fixed("/cabinet/orders/1/resend")},
		"POST /cabinet/orders/{id}/resend":              {perm: organizer.PermResend, request: post("/cabinet/orders/1/resend", url.Values{})},
		"GET /cabinet/orders/{id}/cancel":               {perm: organizer.PermCancel, request: fixed("/cabinet/orders/1/cancel")},
		"POST /cabinet/orders/{id}/cancel":              {perm: organizer.PermCancel, request: post("/cabinet/orders/1/cancel", url.Values{})},
		"POST /cabinet/orders/{id}/notes":               {perm: organizer.PermNotes, request: post("/cabinet/orders/1/notes", url.Values{"note": {"Позвонить покупателю"}})},
		"POST /cabinet/orders/{id}/email":               {perm: organizer.PermResend, request: post("/cabinet/orders/1/email", url.Values{"email": {"new@example.com"}})},
		"POST /cabinet/report/timezone":                 {perm: organizer.PermTeam, request: post("/cabinet/report/timezone", url.Values{"timezone": {"Europe/Moscow"}})},
		"GET /cabinet/keys":                             {perm: organizer.PermKeys, request: fixed("/cabinet/keys")},
		"GET /cabinet/keys/created":                     {perm: organizer.PermKeys, request: fixed("/cabinet/keys/created")},
		"GET /cabinet/requests":                         {perm: organizer.PermRequests, request: fixed("/cabinet/requests")},
		"GET /cabinet/webhooks":                         {perm: organizer.PermWebhooks, request: fixed("/cabinet/webhooks")},
		"GET /cabinet/webhooks/{id}":                    {perm: organizer.PermWebhooks, request: fixed(endpointPath)},
		"GET /cabinet/webhooks/{id}/deliveries/{event}": {perm: organizer.PermWebhooks, request: fixed(endpointPath + "/deliveries/evt_role_test")},
		"POST /cabinet/webhooks": {perm: organizer.PermWebhooks, request: post("/cabinet/webhooks", // no form token: nothing is added
			url.Values{"environment": {"sandbox"}, "url": {r.URL()}})},
		"POST /cabinet/webhooks/{id}": {perm: organizer.PermWebhooks, request: post(endpointPath,
			url.Values{"url": {r.URL()}, "description": {"edited by the role test"}})},
		"POST /cabinet/webhooks/{id}/disable":       {perm: organizer.PermWebhooks, request: post(endpointPath+"/disable", url.Values{})},
		"POST /cabinet/webhooks/{id}/enable":        {perm: organizer.PermWebhooks, request: post(endpointPath+"/enable", url.Values{})},
		"POST /cabinet/webhooks/{id}/rotate-secret": {perm: organizer.PermWebhooks, request: post(endpointPath+"/rotate-secret", url.Values{})},
		"POST /cabinet/webhooks/{id}/test":          {perm: organizer.PermWebhooks, request: post(endpointPath+"/test", url.Values{})},
		"POST /cabinet/webhooks/{id}/deliveries/{event}/redeliver": {perm: organizer.PermWebhooks,
			request: post(endpointPath+"/deliveries/evt_role_test/redeliver", url.Values{})},
		"GET /cabinet/checkin": {perm: organizer.PermCheckIn, request: fixed("/cabinet/checkin")},
		"GET /cabinet/catalog": {perm: organizer.PermCatalog, request: fixed("/cabinet/catalog")},
		// Company A has no events here: the desk's forms are 404 when
		// allowed; a door key is replaced.
		"GET /cabinet/door":              {perm: organizer.PermDoorDesk, request: fixed("/cabinet/door")},
		"GET /cabinet/door/keys/created": {perm: organizer.PermDoorDesk, request: fixed("/cabinet/door/keys/created")},
		"POST /cabinet/door/admit":       {perm: organizer.PermDoorDesk, request: post("/cabinet/door/admit", url.Values{"ticket": {"1"}, "reason": {"сканер сломался"}})},
		"POST /cabinet/door/undo":        {perm: organizer.PermDoorDesk, request: post("/cabinet/door/undo", url.Values{"ticket": {"1"}, "reason": {"по ошибке"}})},
		"GET /cabinet/door/keys/{id}/replace": {perm: organizer.PermDoorDesk, request: func(t *testing.T) (string, url.Values) {
			_, id := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
			return fmt.Sprintf("/cabinet/door/keys/%d/replace", id), nil
		}},
		"POST /cabinet/door/keys/{id}/replace": {perm: organizer.PermDoorDesk, request: func(t *testing.T) (string, url.Values) {
			_, id := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
			prefix, _ := keyState(t, f.Stack, id)
			n++
			return fmt.Sprintf("/cabinet/door/keys/%d/replace", id), url.Values{"confirm": {prefix}, "token": {fmt.Sprintf("%032x", n)}}
		}},
		"GET /cabinet/catalog/format":       {perm: organizer.PermCatalog, request: fixed("/cabinet/catalog/format")},
		"GET /cabinet/catalog/example.json": {perm: organizer.PermCatalog, request: fixed("/cabinet/catalog/example.json")},
		"GET /cabinet/team":                 {perm: organizer.PermTeam, request: fixed("/cabinet/team")},
		// Exports: company A has no orders or events here, each file is its header.
		"GET /cabinet/export/orders.xlsx":         {perm: organizer.PermOrders, request: fixed("/cabinet/export/orders.xlsx")},
		"GET /cabinet/export/orders-excel.csv":    {perm: organizer.PermOrders, request: fixed("/cabinet/export/orders-excel.csv")},
		"GET /cabinet/export/orders.csv":          {perm: organizer.PermOrders, request: fixed("/cabinet/export/orders.csv")},
		"GET /cabinet/export/attendees.xlsx":      {perm: organizer.PermOrders, request: fixed("/cabinet/export/attendees.xlsx")},
		"GET /cabinet/export/attendees-excel.csv": {perm: organizer.PermOrders, request: fixed("/cabinet/export/attendees-excel.csv")},
		"GET /cabinet/export/attendees.csv":       {perm: organizer.PermOrders, request: fixed("/cabinet/export/attendees.csv")},
		"GET /cabinet/export/checkins.xlsx":       {perm: organizer.PermCheckIn, request: fixed("/cabinet/export/checkins.xlsx")},
		"GET /cabinet/export/checkins-excel.csv":  {perm: organizer.PermCheckIn, request: fixed("/cabinet/export/checkins-excel.csv")},
		"GET /cabinet/export/checkins.csv":        {perm: organizer.PermCheckIn, request: fixed("/cabinet/export/checkins.csv")},
		"GET /cabinet/export/report.xlsx":         {perm: organizer.PermReport, request: fixed("/cabinet/export/report.xlsx")},
		"GET /cabinet/export/report-excel.csv":    {perm: organizer.PermReport, request: fixed("/cabinet/export/report-excel.csv")},
		"GET /cabinet/export/report.csv":          {perm: organizer.PermReport, request: fixed("/cabinet/export/report.csv")},
		// Company A has no events here: an event's page and forms are 404
		// when allowed; the others' empty forms are refused as bad input.
		"GET /cabinet/channels":                           {perm: organizer.PermDistribution, request: fixed("/cabinet/channels")},
		"POST /cabinet/channels":                          {perm: organizer.PermDistribution, request: post("/cabinet/channels", url.Values{})},
		"POST /cabinet/channels/applications":             {perm: organizer.PermDistribution, request: post("/cabinet/channels/applications", url.Values{})},
		"GET /cabinet/channels/events/{id}":               {perm: organizer.PermDistribution, request: fixed("/cabinet/channels/events/1")},
		"POST /cabinet/channels/events/{id}/general-sale": {perm: organizer.PermDistribution, request: post("/cabinet/channels/events/1/general-sale", url.Values{})},
		"POST /cabinet/channels/events/{id}/terms":        {perm: organizer.PermDistribution, request: post("/cabinet/channels/events/1/terms", url.Values{})},
		"POST /cabinet/channels/events/{id}/allocate":     {perm: organizer.PermDistribution, request: post("/cabinet/channels/events/1/allocate", url.Values{})},
		"POST /cabinet/channels/events/{id}/release":      {perm: organizer.PermDistribution, request: post("/cabinet/channels/events/1/release", url.Values{})},
		"GET /cabinet/channels/events/{id}/map":           {perm: organizer.PermDistribution, request: fixed("/cabinet/channels/events/1/map")},
		"POST /cabinet/channels/events/{id}/map":          {perm: organizer.PermDistribution, request: post("/cabinet/channels/events/1/map", url.Values{})},
		"GET /cabinet/audit":                              {perm: organizer.PermAudit, request: fixed("/cabinet/audit")},
		"GET /cabinet/account/two-factor":                 {request: fixed("/cabinet/account/two-factor")},
		// A wrong code changes nothing (no authenticator begun is
		// confirmed, none on is turned off).
		"POST /cabinet/account/two-factor":         {request: post("/cabinet/account/two-factor", url.Values{"code": {"000000"}})},
		"POST /cabinet/account/two-factor/disable": {request: post("/cabinet/account/two-factor/disable", url.Values{"code": {"000000"}})},
		"POST /cabinet/team/two-factor":            {perm: organizer.PermTeam, request: post("/cabinet/team/two-factor", url.Values{})},
		"POST /cabinet/team/{id}/two-factor/reset": {perm: organizer.PermTeam, request: func(t *testing.T) (string, url.Values) {
			return fmt.Sprintf("/cabinet/team/%d/two-factor/reset", fresh(t)), url.Values{}
		}},
		"GET /cabinet/account":       {request: fixed("/cabinet/account")},
		"GET /cabinet/account/leave": {request: fixed("/cabinet/account/leave")},
		"GET /cabinet/team/{id}/remove": {perm: organizer.PermTeam, request: func(t *testing.T) (string, url.Values) {
			return fmt.Sprintf("/cabinet/team/%d/remove", fresh(t)), nil
		}},
		"POST /cabinet/keys": {perm: organizer.PermKeys, request: func(*testing.T) (string, url.Values) {
			n++ // each form its own one-time token, as each page gives
			return "/cabinet/keys", url.Values{"token": {fmt.Sprintf("%032x", n)}, "environment": {"sandbox"}, "name": {"role test"},
				"kind": {"partner"}, "scopes": {"orders:read"}}
		}},
		"GET /cabinet/keys/{id}/revoke": {perm: organizer.PermKeys, request: func(t *testing.T) (string, url.Values) {
			_, id := f.Key(t, f.companyA, apikey.Sandbox)
			return fmt.Sprintf("/cabinet/keys/%d/revoke", id), nil
		}},
		"POST /cabinet/keys/{id}/revoke": {perm: organizer.PermKeys, request: func(t *testing.T) (string, url.Values) {
			_, id := f.Key(t, f.companyA, apikey.Sandbox)
			prefix, _ := keyState(t, f.Stack, id) // the confirmation page's field
			return fmt.Sprintf("/cabinet/keys/%d/revoke", id), url.Values{"confirm": {prefix}}
		}},
		"POST /cabinet/catalog": {perm: organizer.PermCatalog, request: func(*testing.T) (string, url.Values) {
			return "/cabinet/catalog", url.Values{} // no file: refused as bad input when allowed
		}},
		"POST /cabinet/team/invite": {perm: organizer.PermTeam, request: func(*testing.T) (string, url.Values) {
			n++
			return "/cabinet/team/invite", url.Values{"email": {fmt.Sprintf("invitee-%d@a.test", n)}, "role": {"door"}}
		}},
		"POST /cabinet/team/{id}/resend": {perm: organizer.PermTeam, request: func(t *testing.T) (string, url.Values) {
			return fmt.Sprintf("/cabinet/team/%d/resend", fresh(t)), url.Values{}
		}},
		"POST /cabinet/team/{id}/role": {perm: organizer.PermTeam, request: func(t *testing.T) (string, url.Values) {
			return fmt.Sprintf("/cabinet/team/%d/role", fresh(t)), url.Values{"role": {"finance"}}
		}},
		"POST /cabinet/team/{id}/remove": {perm: organizer.PermTeam, request: func(t *testing.T) (string, url.Values) {
			return fmt.Sprintf("/cabinet/team/%d/remove", fresh(t)), url.Values{}
		}},
		"POST /cabinet/account/password": {request: func(*testing.T) (string, url.Values) {
			return "/cabinet/account/password", url.Values{"current_password": {cabinetPassword}, "password": {cabinetPassword}, "password_again": {cabinetPassword}}
		}},
		"POST /cabinet/account/leave": {request: func(*testing.T) (string, url.Values) { return "/cabinet/account/leave", url.Values{} }},
		// The member is in no other team: any id is 404, nothing changes.
		"POST /cabinet/account/switch": {request: post("/cabinet/account/switch", url.Values{"user_id": {"999999999"}})},
	}

	// The table and the source agree: every route has an entry, and each
	// entry's permission is the one the code guards the route with.
	source := cabinetRouteGuards(t)
	for pattern, guard := range source {
		rt, ok := routes[pattern]
		switch {
		case !ok:
			t.Errorf("route %q (%s) has no entry in TestCabinetRoleLimits", pattern, guard)
		case rt.public && guard != "":
			t.Errorf("route %q is guarded by %s but listed as public", pattern, guard)
		case !rt.public && rt.perm == "" && guard != "signedIn":
			t.Errorf("route %q: the test expects every signed-in user, the code says %q", pattern, guard)
		case rt.perm != "" && guard != permNames[rt.perm]:
			t.Errorf("route %q: the test expects %s, the code says %q", pattern, permNames[rt.perm], guard)
		}
	}
	for pattern := range routes {
		if _, ok := source[pattern]; !ok {
			t.Errorf("the test lists %q, which the cabinet does not register", pattern)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// What a refused request must leave as it was.
	fingerprint := func() string {
		var sum string
		err := f.DB.NewRaw(`SELECT md5(concat_ws('|',
			(SELECT string_agg(ROW(id, role, disabled_at, session_version, joined_at)::text, ',' ORDER BY id) FROM cabinet_users),
			(SELECT string_agg(ROW(email, password_hash)::text, ',' ORDER BY email) FROM cabinet_people),
			(SELECT string_agg(ROW(email, confirmed_at, last_step)::text, ',' ORDER BY email) FROM cabinet_two_factor),
			(SELECT string_agg(ROW(encode(token_hash, 'hex'), used_at)::text, ',' ORDER BY token_hash) FROM cabinet_signin_links),
			(SELECT string_agg(ROW(id, revoked_at)::text, ',' ORDER BY id) FROM api_keys),
			(SELECT string_agg(ROW(id, status, customer_email)::text, ',' ORDER BY id) FROM orders),
			(SELECT count(*) FROM order_notes),
			(SELECT string_agg(ROW(id, status)::text, ',' ORDER BY id) FROM tickets),
			(SELECT count(*) FROM refunds),
			(SELECT string_agg(e::text, ',' ORDER BY e.id) FROM events e),
			(SELECT string_agg(ROW(id, url, description, event_types, enabled, secret, previous_secret, disabled_at)::text, ',' ORDER BY id) FROM webhook_endpoints),
			(SELECT count(*) FROM webhook_events),
			(SELECT string_agg(c::text, ',' ORDER BY c.id) FROM companies c),
			(SELECT string_agg(ch::text, ',' ORDER BY ch.id) FROM channels ch),
			(SELECT string_agg(ca::text, ',' ORDER BY ca.application_id) FROM channel_applications ca)))`).Scan(ctx, &sum)
		if err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		return sum
	}

	patterns := make([]string, 0, len(routes))
	for p, rt := range routes {
		if !rt.public {
			patterns = append(patterns, p)
		}
	}
	// Leaving ends the session: last.
	sort.Slice(patterns, func(i, j int) bool {
		li, lj := patterns[i] == "POST /cabinet/account/leave", patterns[j] == "POST /cabinet/account/leave"
		if li != lj {
			return lj
		}
		return patterns[i] < patterns[j]
	})
	for _, role := range organizer.Roles {
		t.Run(string(role), func(t *testing.T) {
			b := newBrowserless(t, base, nil)
			email := "member-" + string(role) + "@a.test"
			b.accept(cabinetUserAs(t, f.Stack, base, f.companyA, email, role))
			for _, pattern := range patterns {
				rt := routes[pattern]
				method, _, _ := strings.Cut(pattern, " ")
				path, form := rt.request(t)
				allowed := rt.perm == "" || role.Can(rt.perm)
				before := fingerprint()
				status, loc, body := b.send(method, path, form)
				if !allowed {
					if status != http.StatusForbidden || !strings.Contains(body, "does not allow") {
						t.Errorf("%s as %s: %d %s, want 403", pattern, role, status, loc)
					}
					if after := fingerprint(); after != before {
						t.Errorf("%s as %s was refused but changed the data", pattern, role)
					}
					continue
				}
				ok := []int{http.StatusOK, http.StatusSeeOther}
				switch pattern {
				case "GET /cabinet/orders/{id}", "GET /cabinet/orders/{id}/refund", "POST /cabinet/orders/{id}/refund", "GET /cabinet/orders/{id}/resend",
					"POST /cabinet/orders/{id}/resend", "GET /cabinet/orders/{id}/cancel", "POST /cabinet/orders/{id}/cancel",
					"POST /cabinet/orders/{id}/notes", "POST /cabinet/orders/{id}/email":
					ok = []int{http.StatusNotFound}
				case "GET /cabinet/channels/events/{id}", "POST /cabinet/channels/events/{id}/general-sale", "POST /cabinet/channels/events/{id}/terms",
					"POST /cabinet/channels/events/{id}/allocate", "POST /cabinet/channels/events/{id}/release",
					"GET /cabinet/channels/events/{id}/map", "POST /cabinet/channels/events/{id}/map":
					ok = []int{http.StatusNotFound}
				case "POST /cabinet/channels", "POST /cabinet/channels/applications":
					ok = []int{http.StatusUnprocessableEntity}
				case "POST /cabinet/catalog":
					ok = []int{http.StatusBadRequest, http.StatusUnprocessableEntity}
				case "POST /cabinet/account/switch", "POST /cabinet/door/admit", "POST /cabinet/door/undo", "POST /cabinet/team/{id}/two-factor/reset":
					ok = []int{http.StatusNotFound}
				case "POST /cabinet/account/two-factor":
					ok = []int{http.StatusUnprocessableEntity}
				}
				if !slices.Contains(ok, status) {
					t.Errorf("%s as %s: %d %s, want one of %v\n%.500s", pattern, role, status, loc, ok, body)
				}
				if status == http.StatusSeeOther && strings.HasPrefix(loc, "/cabinet/signin") && pattern != "POST /cabinet/account/leave" {
					t.Errorf("%s as %s signed the user out (%s)", pattern, role, loc)
				}
			}
			if p := b.get("/cabinet/account"); p.URL.Path != "/cabinet/signin" {
				t.Errorf("%s still signed in after leaving", role)
			}
		})
	}
}

// TestCabinetTeamInBrowser: the owner invites a door keeper from the team
// page; the door keeper opens the e-mailed link in another browser
// profile, sets a password and sees only the check-in and their account;
// other pages answer 403. Screenshots at 1280 and 390 px.
func TestCabinetTeamInBrowser(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme Concerts")
	base, outbox, _ := teamCabinet(t, s)
	link := cabinetUser(t, s, base, company, "owner@acme.test")
	owner := newBrowser(t, 2*time.Minute)
	run := func(ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	submit := func(ctx context.Context, step, button string, want int64) {
		t.Helper()
		res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(button)))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if res.Status != want {
			t.Fatalf("%s: %d %s, want %d", step, res.Status, res.URL, want)
		}
	}
	text := func(ctx context.Context, sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}

	run(owner, "the owner's link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword))
	submit(owner, "set the owner's password", "#set-password", 200)
	run(owner, "the team page", chromedp.Navigate(base+"/cabinet/team"), chromedp.WaitVisible(chromedp.CSS("#invite-form")),
		chromedp.SendKeys(chromedp.CSS("#invite-email"), "door@acme.test"), chromedp.SetValue(chromedp.CSS("#invite-role"), "door"))
	submit(owner, "invite", "#invite", 200)
	if got := text(owner, "#notice"); !strings.Contains(got, "Invitation sent to door@acme.test as door") {
		t.Fatalf("after inviting: %q", got)
	}
	doorID := memberID(t, s, "door@acme.test")
	if got := text(owner, fmt.Sprintf(`tr[data-member-id="%d"]`, doorID)); !strings.Contains(got, "invited") || !strings.Contains(got, "valid until") {
		t.Fatalf("the invited member's row: %q", got)
	}
	pageFits(t, owner, "team", nil)

	// The invitee, in a browser profile of their own.
	door, cancel := chromedp.NewContext(owner, chromedp.WithNewBrowserContext())
	defer cancel()
	run(door, "the invitation's link", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(lastInvitation(t, outbox, "door@acme.test")),
		chromedp.WaitVisible(chromedp.CSS("#invitation")))
	if got := text(door, "#invitation"); !strings.Contains(got, "Acme Concerts") || !strings.Contains(got, "door") {
		t.Fatalf("the invitation says %q", got)
	}
	pageFits(t, door, "invitation", nil)
	run(door, "choose a password", chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword),
		chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword))
	submit(door, "accept", "#set-password", 200)
	menu, err := chromedp.Run(door, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('header nav a'), a => a.getAttribute('href'))`))
	if err != nil || !slices.Equal(menu, []string{"/cabinet/checkin", "/cabinet/door", "/cabinet/account"}) {
		t.Fatalf("the door keeper's menu: %v %v", menu, err)
	}
	if got := text(door, ".who"); got != "door@acme.test · door" {
		t.Fatalf("signed in as %q", got)
	}
	pageFits(t, door, "door-checkin", nil)
	run(door, "the account", chromedp.Navigate(base+"/cabinet/account"), chromedp.WaitVisible(chromedp.CSS("#password-form")))
	if got := text(door, "#account-role"); got != "door" {
		t.Fatalf("the account's role: %q", got)
	}
	pageFits(t, door, "account", nil)
	for _, path := range []string{"/cabinet/report", "/cabinet/team", "/cabinet/keys", "/cabinet/catalog"} {
		res, err := chromedp.RunResponse(door, chromedp.Navigate(base+path))
		if err != nil || res.Status != http.StatusForbidden {
			t.Fatalf("the door keeper opening %s: %v %v", path, res, err)
		}
	}

	// The owner sees the member active.
	run(owner, "the team page again", chromedp.Navigate(base+"/cabinet/team"), chromedp.WaitVisible(chromedp.CSS("#members")))
	if st, err := chromedp.Run(owner, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('tr[data-member-id="%d"]').dataset.status`, doorID))); err != nil || st != "active" {
		t.Fatalf("the member's status after accepting: %q %v", st, err)
	}
}

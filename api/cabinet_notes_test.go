package api_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv/smtptest"
)

var (
	noteTokenRE  = regexp.MustCompile(`action="/cabinet/orders/\d+/notes"[^>]*>\s*<input type="hidden" name="token" value="([A-Za-z0-9]+)"`)
	emailTokenRE = regexp.MustCompile(`action="/cabinet/orders/\d+/email"[^>]*>\s*<input type="hidden" name="token" value="([A-Za-z0-9]+)"`)
)

// formToken opens the order's page and reads the token of one of its
// forms (noteTokenRE, emailTokenRE).
func formToken(t *testing.T, b *browserless, path string, re *regexp.Regexp) (string, page) {
	t.Helper()
	p := b.get(path)
	m := re.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("the form on %s: %d\n%.3000s", path, p.Status, p.Body)
	}
	return m[1], p
}

func (f *fixture) noteRows(t *testing.T, order int64) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM order_notes WHERE order_id = ?", order).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) buyerEmail(t *testing.T, order int64) string {
	t.Helper()
	var s string
	if err := f.DB.NewRaw("SELECT customer_email FROM orders WHERE id = ?", order).Scan(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCabinetOrderNotes: support adds a note, shown with its author and
// time, once however often the form is sent; notes list newest first; a
// Cyrillic note of 2000 letters is accepted, one of 2001 refused with why
// (what was typed kept, nothing added), as is an empty one.
func TestCabinetOrderNotes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-5")
	path := fmt.Sprintf("/cabinet/orders/%d?env=sandbox", id)
	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "desk@a.test", organizer.RoleSupport))

	token, _ := formToken(t, b, path, noteTokenRE)
	for i := range 2 {
		p := b.post(fmt.Sprintf("/cabinet/orders/%d/notes", id), url.Values{"token": {token}, "note": {"  Buyer called: <b>late</b> arrival  "}})
		if p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) || p.Status != http.StatusOK {
			t.Fatalf("note %d: %d %s %q", i, p.Status, p.URL, noticeOf(p))
		}
		want := map[int]string{0: "note is added", 1: "added already"}[i]
		if n := noticeOf(p); !strings.Contains(n, want) {
			t.Fatalf("notice after note %d: %q, want %q", i, n, want)
		}
	}
	if n := f.noteRows(t, id); n != 1 {
		t.Fatalf("%d notes after the same form twice", n)
	}
	p := b.get(path)
	list := regexp.MustCompile(`(?s)<ol class="notes" id="note-list">(.*?)</ol>`).FindStringSubmatch(p.Body)
	if list == nil || !strings.Contains(list[1], "desk@a.test") || !strings.Contains(list[1], "Buyer called: &lt;b&gt;late&lt;/b&gt; arrival</p>") ||
		!strings.Contains(list[1], "<time datetime=") {
		t.Fatalf("the order's notes:\n%s", p.Body)
	}

	long := strings.Repeat("Ж", 2000)
	token, _ = formToken(t, b, path, noteTokenRE)
	p = b.post(fmt.Sprintf("/cabinet/orders/%d/notes", id), url.Values{"token": {token}, "note": {long + "я"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(noticeOf(p), "at most 2000 characters; this one has 2001") ||
		!strings.Contains(p.Body, long+"я</textarea>") {
		t.Fatalf("a note of 2001 letters: %d %q", p.Status, noticeOf(p))
	}
	if p = b.post(fmt.Sprintf("/cabinet/orders/%d/notes", id), url.Values{"token": {token}, "note": {"   "}}); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("an empty note: %d %q", p.Status, noticeOf(p))
	}
	if n := f.noteRows(t, id); n != 1 {
		t.Fatalf("refused notes were added: %d", n)
	}
	// The same form, fixed, is still one note.
	p = b.post(fmt.Sprintf("/cabinet/orders/%d/notes", id), url.Values{"token": {token}, "note": {long}})
	if !strings.Contains(noticeOf(p), "note is added") {
		t.Fatalf("a note of 2000 letters: %d %q", p.Status, noticeOf(p))
	}
	if n := f.noteRows(t, id); n != 2 {
		t.Fatalf("%d notes, want 2", n)
	}
	body := b.get(path).Body
	if i, j := strings.Index(body, long+"</p>"), strings.Index(body, "Buyer called"); i < 0 || j < 0 || i > j {
		t.Fatalf("notes are not newest first (%d, %d)", i, j)
	}
}

// TestCabinetCorrectEmailThenResend: support corrects the buyer's e-mail
// on the order's page (a bad address refused, nothing changed); the
// timeline shows who changed it from what to what, and the resend goes
// to the new address.
func TestCabinetCorrectEmailThenResend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	be := &smtptest.Backend{}
	mailer, err := mail.New("smtp://"+smtptest.Start(t, be)+"?tls=none", "", "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = mailer
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	id := f.paidOrder(t, prod, "parterre-3-6")
	awaitMail := func(n int) []smtptest.Message {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(be.All()) < n; time.Sleep(100 * time.Millisecond) {
		}
		return be.All()
	}
	if got := awaitMail(1); len(got) != 1 {
		t.Fatalf("the first tickets e-mail: %d messages", len(got))
	}

	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "help@a.test", organizer.RoleSupport))
	path := fmt.Sprintf("/cabinet/orders/%d", id)
	token, p := formToken(t, b, path, emailTokenRE)
	if i, j := strings.Index(p.Body, `id="email-form"`), strings.Index(p.Body, `id="act-resend"`); i < 0 || j < 0 || i > j {
		t.Fatalf("the e-mail form is not before the resend button (%d, %d)", i, j)
	}
	for _, bad := range []string{"anna at example.com", "Anna <anna@example.com>", "anna@example.com"} {
		p := b.post(path+"/email", url.Values{"token": {token}, "email": {bad}})
		if p.Status != http.StatusUnprocessableEntity || noticeOf(p) == "" {
			t.Fatalf("e-mail %q: %d %q", bad, p.Status, noticeOf(p))
		}
	}
	if got := f.buyerEmail(t, id); got != "anna@example.com" || f.actionRows(t, id, "email") != 0 {
		t.Fatalf("refused corrections changed the order: %s", got)
	}
	for i := range 2 {
		p := b.post(path+"/email", url.Values{"token": {token}, "email": {" boris@example.org "}})
		want := map[int]string{0: "it was anna@example.com", 1: "sent already"}[i]
		if p.URL.Path != path || !strings.Contains(noticeOf(p), want) {
			t.Fatalf("correction %d: %d %s %q", i, p.Status, p.URL, noticeOf(p))
		}
	}
	if got := f.buyerEmail(t, id); got != "boris@example.org" || f.actionRows(t, id, "email") != 1 {
		t.Fatalf("after the correction the buyer's e-mail is %s (%d records)", got, f.actionRows(t, id, "email"))
	}
	tl := html.UnescapeString(b.get(path).Body)
	if !strings.Contains(tl, "Buyer's e-mail corrected by help@a.test") || !strings.Contains(tl, "from anna@example.com to boris@example.org") {
		t.Fatalf("the timeline does not show the change:\n%s", tl)
	}
	if !regexp.MustCompile(`Tickets e-mailed</strong> <span class="detail">to anna@example.com</span>`).MatchString(tl) {
		t.Fatalf("the first e-mail's line does not name the address it went to:\n%s", tl)
	}

	token, _ = actionToken(t, b, id, "resend")
	if p := b.post(path+"/resend", url.Values{"token": {token}}); p.URL.Path != path {
		t.Fatalf("resend: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	got := awaitMail(2)
	if len(got) != 2 || len(got[1].Rcpt) != 1 || got[1].Rcpt[0] != "boris@example.org" {
		t.Fatalf("the resent e-mail: %d messages, to %v", len(got), got[len(got)-1].Rcpt)
	}
}

// TestCabinetNotesAndEmailRoles: roles without the permission get 403,
// another company's owner 404, and nothing changes.
func TestCabinetNotesAndEmailRoles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-7")
	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	as := func(company int64, email string, role organizer.Role) *browserless {
		b := newBrowserless(t, f.URL, nil)
		joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, company, email, role))
		return b
	}
	const token = "ROLETESTTOKEN234567ABCDEFG"
	for _, tc := range []struct {
		who    *browserless
		name   string
		status int
	}{
		{as(f.companyA, "finance@a.test", organizer.RoleFinance), "finance", http.StatusForbidden},
		{as(f.companyA, "door@a.test", organizer.RoleDoor), "door", http.StatusForbidden},
		{as(f.companyA, "dev@a.test", organizer.RoleDeveloper), "developer", http.StatusForbidden},
		{as(companyB, "owner@b.test", organizer.RoleOwner), "another company's owner", http.StatusNotFound},
	} {
		if p := tc.who.post(fmt.Sprintf("/cabinet/orders/%d/notes", id), url.Values{"token": {token}, "note": {"hello"}}); p.Status != tc.status {
			t.Errorf("%s adds a note: %d, want %d", tc.name, p.Status, tc.status)
		}
		if p := tc.who.post(fmt.Sprintf("/cabinet/orders/%d/email", id), url.Values{"token": {token}, "email": {"eve@example.org"}}); p.Status != tc.status {
			t.Errorf("%s corrects the e-mail: %d, want %d", tc.name, p.Status, tc.status)
		}
	}
	// Finance reads the order (and its notes) but is offered neither form.
	finance := as(f.companyA, "finance2@a.test", organizer.RoleFinance)
	if p := finance.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", id)); p.Status != http.StatusOK ||
		strings.Contains(p.Body, `id="note-form"`) || strings.Contains(p.Body, `id="email-form"`) {
		t.Fatalf("finance's order page: %d", p.Status)
	}
	if n := f.noteRows(t, id); n != 0 || f.buyerEmail(t, id) != "anna@example.com" || f.actionRows(t, id, "email") != 0 {
		t.Fatalf("refused requests changed the order: %d notes, e-mail %s", n, f.buyerEmail(t, id))
	}
}

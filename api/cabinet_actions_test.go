package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/api/cabinet"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/test/testenv/smtptest"
)

var tokenRE = regexp.MustCompile(`name="token" value="([A-Za-z0-9]+)"`)

// actionToken opens an action's confirm page and reads its one-time token.
func actionToken(t *testing.T, b *browserless, order int64, kind string) (string, page) {
	t.Helper()
	p := b.get(fmt.Sprintf("/cabinet/orders/%d/%s", order, kind))
	m := tokenRE.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil {
		t.Fatalf("the %s page of order %d: %d\n%.2000s", kind, order, p.Status, p.Body)
	}
	return m[1], p
}

// joinAs follows a sign-in link and sets the password: the user is signed
// in, on the first page the role may open (which may not be served yet).
func joinAs(t *testing.T, b *browserless, link string) {
	t.Helper()
	p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	if strings.HasPrefix(p.URL.Path, "/cabinet/link/") || p.URL.Path == "/cabinet/signin" {
		t.Fatalf("after setting the password: %d %s", p.Status, p.URL)
	}
}

// noticeOf is the notice (or message) a page shows.
func noticeOf(p page) string {
	m := regexp.MustCompile(`(?s)<p class="(?:notice|message)"[^>]*>(.*?)</p>`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// flashAfter is the notice an action left for the next page: the order's
// page it redirected to, or (where that page is not served) the next page
// the user opens.
func flashAfter(t *testing.T, b *browserless, p page, next string) string {
	t.Helper()
	if p.Status == http.StatusOK {
		return noticeOf(p)
	}
	return noticeOf(b.get(next))
}

// actionRows counts the cabinet's recorded actions of an order.
func (f *fixture) actionRows(t *testing.T, order int64, action string) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM cabinet_actions WHERE order_id = ? AND action = ?", order, action).
		Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) refundCount(t *testing.T, order int64) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM refunds WHERE order_id = ?", order).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) cabinetUserID(t *testing.T, email string) int64 {
	t.Helper()
	var id int64
	if err := f.DB.NewRaw("SELECT id FROM cabinet_users WHERE email = ?", email).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCabinetRefundSomeTickets: the owner refunds one ticket of a paid
// gateway order on the confirm page; the refund is the API's (its id from
// the form's token, the money back through the gateway, the seat on sale,
// the partner's view and webhook), recorded with who did it. The same form
// sent again, and a form raced by 10 requests, each make one refund.
func TestCabinetRefundSomeTickets(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	// A sandbox gateway order: paid on the test gateway, whose refunds
	// the refund workflow asks for as a production gateway's.
	prod := f.keyA
	hooks := newReceiver(t)
	f.subscribe(t, prod, hooks, "order.refunded")

	var rb reservationBody
	if res := f.reserve(t, prod, "parterre-2-1", "parterre-2-2", "parterre-2-3"); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &rb)
	}
	var ob orderBody
	if res := f.orderFromReservation(t, prod, rb.Data.ID, "gateway"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ob)
	}
	id := ob.Data.ID
	payOnTestGateway(t, ob.Data.PaymentURL, "pay")
	f.awaitOrderStatus(t, prod, id, "paid")
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), prod).Decode(t, &tb)
	if len(tb.Data) != 3 {
		t.Fatalf("tickets: %+v", tb.Data)
	}
	first := tb.Data[0]

	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "alice@a.test"))
	token, form := actionToken(t, b, id, "refund")
	for _, tk := range tb.Data {
		if !strings.Contains(form.Body, fmt.Sprintf(`value="%d" id="ticket-%d" checked`, tk.ID, tk.ID)) {
			t.Fatalf("the refund page does not list ticket %d ticked:\n%s", tk.ID, form.Body)
		}
	}
	post := url.Values{"token": {token}, "ticket": {fmt.Sprint(first.ID)}, "reason": {"buyer is ill"}}
	p := b.post(fmt.Sprintf("/cabinet/orders/%d/refund", id), post)
	if p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
		t.Fatalf("after the refund: %d %s", p.Status, p.URL)
	}
	if n := flashAfter(t, b, p, fmt.Sprintf("/cabinet/orders/%d/refund", id)); !strings.Contains(n, "1 ticket(s) of order") {
		t.Fatalf("the notice after the refund: %q", n)
	}

	// The refund the API would have made: its id from the token, the
	// ticket's price returned through the gateway.
	wantID := refunds.OrganizerRefundID(id, token, []int64{first.ID})
	var status, by string
	var amount int64
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := f.DB.NewRaw("SELECT status, amount, money_returned_by FROM refunds WHERE id = ?", wantID).
			Scan(context.Background(), &status, &amount, &by); err != nil {
			t.Fatalf("refund %s: %v", wantID, err)
		}
		if status == "completed" || time.Now().After(deadline) {
			break
		}
	}
	if status != "completed" || amount != first.Price.Amount || by != "gateway" {
		t.Fatalf("refund: %s %d by %s, want completed %d by gateway", status, amount, by, first.Price.Amount)
	}
	if o := f.orderStatus2(t, prod, id); o.Status != "partially_refunded" {
		t.Fatalf("the partner sees order %d %s", id, o.Status)
	}
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), prod).Decode(t, &tb)
	for _, tk := range tb.Data {
		if want := map[bool]string{true: "refunded", false: "active"}[tk.ID == first.ID]; tk.Status != want {
			t.Fatalf("ticket %d is %s, want %s", tk.ID, tk.Status, want)
		}
	}
	if st := f.awaitSeatStatus(t, f.URL, "parterre-2-1", "sold"); st != "free" {
		t.Fatalf("the refunded seat is %s", st)
	}
	if st := f.seatStatusOn(t, f.URL, "parterre-2-2"); st != "sold" {
		t.Fatalf("a kept seat is %s", st)
	}
	hooks.await("order.refunded", idIs(wantID))
	var who int64
	var refundID, reason string
	if err := f.DB.NewRaw("SELECT user_id, detail->>'refund_id', detail->>'reason' FROM cabinet_actions WHERE order_id = ? AND action = 'refund'", id).
		Scan(context.Background(), &who, &refundID, &reason); err != nil {
		t.Fatal(err)
	}
	if who != f.cabinetUserID(t, "alice@a.test") || refundID != wantID || reason != "buyer is ill" {
		t.Fatalf("the action's record: user %d refund %s reason %q", who, refundID, reason)
	}

	// The order's page: the refund in its timeline with who did it, and
	// the actions the order still allows.
	orderPage := b.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", id))
	if orderPage.Status != http.StatusOK || !strings.Contains(orderPage.Body, "Refund by alice@a.test") ||
		!strings.Contains(orderPage.Body, "refund "+wantID+"; reason: buyer is ill") ||
		!strings.Contains(orderPage.Body, `id="act-refund"`) || strings.Contains(orderPage.Body, `id="act-cancel"`) ||
		strings.Contains(orderPage.Body, `id="act-resend"`) {
		t.Fatalf("the order's page after the refund: %d\n%s", orderPage.Status, orderPage.Body)
	}

	// The same form again (a reload of the POST, a double click): nothing.
	p = b.post(fmt.Sprintf("/cabinet/orders/%d/refund", id), post)
	if p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
		t.Fatalf("the form sent again: %d %s", p.Status, p.URL)
	}
	if n := flashAfter(t, b, p, fmt.Sprintf("/cabinet/orders/%d/refund", id)); !strings.Contains(n, "sent already") {
		t.Fatalf("the notice after the form sent again: %q", n)
	}
	if n, a := f.refundCount(t, id), f.actionRows(t, id, "refund"); n != 1 || a != 1 {
		t.Fatalf("after the form sent twice: %d refunds, %d actions", n, a)
	}

	// Ten requests racing one form: one refund, one record.
	token2, _ := actionToken(t, b, id, "refund")
	second := tb.Data[1]
	race := url.Values{"token": {token2}, "ticket": {fmt.Sprint(second.ID)}}
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/cabinet/orders/%d/refund", f.URL, id), strings.NewReader(race.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := b.c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			if res.Request.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
				t.Errorf("a racing POST ended at %d %s", res.StatusCode, res.Request.URL)
			}
		}()
	}
	wg.Wait()
	if n, a := f.refundCount(t, id), f.actionRows(t, id, "refund"); n != 2 || a != 2 {
		t.Fatalf("after 10 racing POSTs of one form: %d refunds, %d actions (want 2 and 2 in all)", n, a)
	}
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), prod).Decode(t, &tb)
	if tb.Data[1].Status != "refunded" || tb.Data[2].Status != "active" {
		t.Fatalf("tickets after the race: %+v", tb.Data)
	}
}

// TestCabinetRefundShowsTheRefundsRules: the cabinet checks nothing of a
// refund's request itself: the refunds' own rules refuse a form with no
// ticket chosen or a reason over 500 characters, the page says so in their
// words, and nothing is refunded or recorded; a reason of 500 Cyrillic
// characters (1,000 bytes) is taken.
func TestCabinetRefundShowsTheRefundsRules(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	id, ts := f.paidTickets(t, f.keyA, "parterre-3-3")
	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "alice@a.test"))
	token, _ := actionToken(t, b, id, "refund")
	path := fmt.Sprintf("/cabinet/orders/%d/refund", id)
	for _, c := range []struct {
		post url.Values
		want string
	}{
		{url.Values{"token": {token}}, "Choose at least one ticket to refund. Nothing was refunded."},
		{url.Values{"token": {token}, "ticket": {fmt.Sprint(ts[0].ID)}, "reason": {strings.Repeat("я", 501)}},
			"The reason must be 0 to 500 characters long. Nothing was refunded."},
	} {
		if p := b.post(path, c.post); p.Status != http.StatusUnprocessableEntity || noticeOf(p) != c.want {
			t.Errorf("%v: %d %q, want 422 %q", c.post, p.Status, noticeOf(p), c.want)
		}
	}
	if n, a := f.refundCount(t, id), f.actionRows(t, id, "refund"); n != 0 || a != 0 {
		t.Fatalf("the refused forms left %d refunds, %d actions", n, a)
	}
	post := url.Values{"token": {token}, "ticket": {fmt.Sprint(ts[0].ID)}, "reason": {strings.Repeat("я", 500)}}
	if p := b.post(path, post); p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
		t.Fatalf("a reason of 500 Cyrillic characters: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if n, a := f.refundCount(t, id), f.actionRows(t, id, "refund"); n != 1 || a != 1 {
		t.Fatalf("after the form with a long reason: %d refunds, %d actions", n, a)
	}
}

// TestCabinetRefundCheckedInTicket: a ticket admitted at the door is
// refused without the explicit override, and nothing is refunded (nor
// recorded); with it, it is refunded.
func TestCabinetRefundCheckedInTicket(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id, ts := f.paidTickets(t, f.keyA, "parterre-3-1", "parterre-3-2")
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	f.scan(t, door, f.ids["swan-lake"], ts[0].Barcode, "main")

	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "fin@a.test", organizer.RoleFinance))
	token, form := actionToken(t, b, id, "refund")
	if !strings.Contains(form.Body, "<strong>admitted</strong>") || !strings.Contains(form.Body, `id="checked-in"`) {
		t.Fatalf("the refund page does not show the admitted ticket and the override:\n%s", form.Body)
	}
	// The admitted ticket is not ticked; the other is, and the page says
	// its money before the button: its price, the fee staying.
	if strings.Contains(form.Body, fmt.Sprintf(`id="ticket-%d" checked`, ts[0].ID)) ||
		!strings.Contains(form.Body, fmt.Sprintf(`id="ticket-%d" checked`, ts[1].ID)) {
		t.Fatalf("the refund page ticks the admitted ticket or not the other:\n%s", form.Body)
	}
	amount := func(body string) string {
		t.Helper()
		i := strings.Index(body, `id="refund-amount"`)
		j := strings.Index(body, `id="confirm"`)
		if i < 0 || j < i {
			t.Fatalf("no amount before the button:\n%s", body)
		}
		return pageText(body[i:j])
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if got, want := amount(form.Body), norm("Money back: "+money(ts[1].Price.Amount)+" for 1 ticket."); !strings.Contains(got, want) ||
		!strings.Contains(got, "service fee is not returned now") {
		t.Fatalf("the amount for the ticket not admitted: %q, want %q", got, want)
	}
	// Both ticked (the page's "Show the amount"): the order's whole amount,
	// the fee with it, by the same rule the refund applies.
	o := f.orderStatus(t, id)
	both := b.get(fmt.Sprintf("/cabinet/orders/%d/refund?pick=1&ticket=%d&ticket=%d", id, ts[0].ID, ts[1].ID))
	fee := o.Amount.Amount - ts[0].Price.Amount - ts[1].Price.Amount
	if got := amount(both.Body); !strings.Contains(got, norm("Money back: "+money(o.Amount.Amount)+" for 2 tickets.")) ||
		!strings.Contains(got, norm("the service fee of "+money(fee)+" included")) || fee <= 0 {
		t.Fatalf("the amount for both tickets: %q (order %d, fee %d)", got, o.Amount.Amount, fee)
	}
	if none := b.get(fmt.Sprintf("/cabinet/orders/%d/refund?pick=1", id)); !strings.Contains(amount(none.Body), "No ticket chosen") {
		t.Fatalf("the amount for no ticket: %q", amount(none.Body))
	}
	post := url.Values{"token": {token}, "ticket": {fmt.Sprint(ts[0].ID), fmt.Sprint(ts[1].ID)}, "reason": {"show moved"}}
	p := b.post(fmt.Sprintf("/cabinet/orders/%d/refund", id), post)
	if p.Status != http.StatusConflict || !strings.Contains(noticeOf(p), "Nothing was refunded") ||
		!strings.Contains(noticeOf(p), "ticket "+ts[0].Number+" was already admitted at the door") {
		t.Fatalf("a refund of an admitted ticket without the override: %d %q", p.Status, noticeOf(p))
	}
	if n, a := f.refundCount(t, id), f.actionRows(t, id, "refund"); n != 0 || a != 0 {
		t.Fatalf("the refused refund left %d refunds, %d actions", n, a)
	}
	if o := f.orderStatus(t, id); o.Status != "paid" {
		t.Fatalf("order after the refused refund: %s", o.Status)
	}
	// The page keeps the choice and the token: confirmed with the override.
	if !strings.Contains(p.Body, `value="`+token+`"`) || !strings.Contains(p.Body, `class="refused"`) {
		t.Fatalf("the page after the refusal:\n%s", p.Body)
	}
	post.Set("checked_in", "yes")
	if p = b.post(fmt.Sprintf("/cabinet/orders/%d/refund", id), post); p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
		t.Fatalf("with the override: %d %s %q", p.Status, p.URL, noticeOf(p))
	}
	if o := f.orderStatus(t, id); o.Status != "refunded" {
		t.Fatalf("order after the refund with the override: %s", o.Status)
	}
	var override bool
	if err := f.DB.NewRaw("SELECT (detail->>'checked_in_override')::boolean FROM cabinet_actions WHERE order_id = ?", id).
		Scan(context.Background(), &override); err != nil || !override {
		t.Fatalf("the record of the override: %v %v", override, err)
	}
}

// TestCabinetResendTickets: support sends a paid production order's
// tickets again: exactly one more e-mail, however often the form is sent;
// a sandbox order's is refused.
func TestCabinetResendTickets(t *testing.T) {
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
	id := f.paidOrder(t, prod, "parterre-3-5")
	awaitMail := func(n int) []smtptest.Message {
		t.Helper()
		var got []smtptest.Message
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(got) < n; time.Sleep(100 * time.Millisecond) {
			got = be.All()
		}
		time.Sleep(time.Second) // a further e-mail would have come by now
		return be.All()
	}
	if got := awaitMail(1); len(got) != 1 {
		t.Fatalf("the first tickets e-mail: %d messages", len(got))
	}

	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "help@a.test", organizer.RoleSupport))
	token, form := actionToken(t, b, id, "resend")
	if !strings.Contains(form.Body, "anna@example.com") {
		t.Fatalf("the resend page does not name the buyer's address:\n%s", form.Body)
	}
	// Confirmed while Temporal cannot be reached: an error, and no record
	// of a resend that did not happen; the same form later sends it.
	dead, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: app.TemporalLogger(testenv.Log())})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	o, err := store.GetOrderByID(context.Background(), f.DB, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	unreachable := &organizer.Orders{DB: f.DB, Orders: &orders.Service{TaskQueue: "orders"}, Temporal: dead}
	if _, err := unreachable.Resend(ctx, organizer.Actor{CompanyID: f.companyA, UserID: 1}, o, token); err == nil || errors.Is(err, organizer.ErrRepeated) {
		t.Fatalf("a resend with Temporal unreachable: %v", err)
	}
	cancel()
	if a := f.actionRows(t, id, "resend"); a != 0 {
		t.Fatalf("a resend that never started was recorded (%d rows)", a)
	}
	for i := range 2 {
		p := b.post(fmt.Sprintf("/cabinet/orders/%d/resend", id), url.Values{"token": {token}})
		if p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
			t.Fatalf("resend %d: %d %s %q", i, p.Status, p.URL, noticeOf(p))
		}
	}
	got := awaitMail(2)
	if len(got) != 2 {
		t.Fatalf("after the resend sent twice: %d messages, want 2 (the first and one again)", len(got))
	}
	if len(got[1].Rcpt) != 1 || got[1].Rcpt[0] != "anna@example.com" || bytes.Equal(messageID(got[0].Data), messageID(got[1].Data)) {
		t.Fatalf("the resent e-mail: to %v, Message-IDs %s and %s", got[1].Rcpt, messageID(got[0].Data), messageID(got[1].Data))
	}
	if a := f.actionRows(t, id, "resend"); a != 1 {
		t.Fatalf("%d resend records", a)
	}

	sandbox := f.paidOrder(t, f.keyA, "parterre-3-6")
	if p := b.get(fmt.Sprintf("/cabinet/orders/%d/resend", sandbox)); !strings.Contains(p.Body, `id="not-possible"`) || strings.Contains(p.Body, `id="resend-form"`) {
		t.Fatalf("the resend page of a sandbox order:\n%s", p.Body)
	}
	if p := b.post(fmt.Sprintf("/cabinet/orders/%d/resend", sandbox), url.Values{"token": {token + "x"}}); p.Status != http.StatusConflict {
		t.Fatalf("resend of a sandbox order: %d %q", p.Status, noticeOf(p))
	}
	if a := f.actionRows(t, sandbox, "resend"); a != 0 {
		t.Fatalf("a refused resend was recorded")
	}
}

func messageID(data []byte) []byte {
	m := regexp.MustCompile(`(?mi)^Message-Id:\s*(.+?)\r?$`).FindSubmatch(data)
	if m == nil {
		return nil
	}
	return m[1]
}

// TestCabinetCancelUnpaidOrder: support cancels an unpaid order (its
// seats back on sale, the partner sees it cancelled), once however often
// the form is sent; a paid order is refused and unchanged.
func TestCabinetCancelUnpaidOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	unpaid := f.externalOrder(t, f.keyA, "parterre-3-7", "parterre-3-8")
	paid := f.paidOrder(t, f.keyA, "parterre-3-9")

	b := newBrowserless(t, f.URL, nil)
	joinAs(t, b, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "desk@a.test", organizer.RoleSupport))
	token, _ := actionToken(t, b, unpaid.ID, "cancel")
	for i := range 2 {
		p := b.post(fmt.Sprintf("/cabinet/orders/%d/cancel", unpaid.ID), url.Values{"token": {token}})
		if p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", unpaid.ID) {
			t.Fatalf("cancel %d: %d %s %q", i, p.Status, p.URL, noticeOf(p))
		}
		want := map[int]string{0: "is cancelled", 1: "sent already"}[i]
		if n := flashAfter(t, b, p, fmt.Sprintf("/cabinet/orders/%d/cancel", unpaid.ID)); !strings.Contains(n, want) {
			t.Fatalf("notice after cancel %d: %q, want %q", i, n, want)
		}
	}
	if o := f.orderStatus(t, unpaid.ID); o.Status != "cancelled" {
		t.Fatalf("the unpaid order is %s", o.Status)
	}
	for _, seat := range []string{"parterre-3-7", "parterre-3-8"} {
		if st := f.awaitSeatStatus(t, f.URL, seat, "reserved"); st != "free" {
			t.Fatalf("seat %s of the cancelled order is %s", seat, st)
		}
	}
	if a := f.actionRows(t, unpaid.ID, "cancel"); a != 1 {
		t.Fatalf("%d cancel records", a)
	}

	if p := b.get(fmt.Sprintf("/cabinet/orders/%d/cancel", paid)); !strings.Contains(noticeOf(p), "Refund its tickets instead") ||
		strings.Contains(p.Body, `id="cancel-form"`) {
		t.Fatalf("the cancel page of a paid order:\n%s", p.Body)
	}
	p := b.post(fmt.Sprintf("/cabinet/orders/%d/cancel", paid), url.Values{"token": {"PAIDORDERTOKEN234567ABCDEF"}})
	if p.Status != http.StatusConflict || !strings.Contains(noticeOf(p), "is paid") {
		t.Fatalf("cancel of a paid order: %d %q", p.Status, noticeOf(p))
	}
	if o := f.orderStatus(t, paid); o.Status != "paid" {
		t.Fatalf("the paid order is %s", o.Status)
	}
	if st := f.seatStatusOn(t, f.URL, "parterre-3-9"); st != "sold" {
		t.Fatalf("the paid order's seat is %s", st)
	}
	if a := f.actionRows(t, paid, "cancel"); a != 0 {
		t.Fatalf("a refused cancel was recorded")
	}
}

// TestCabinetActionRoles: each role acts only as it may (403 otherwise),
// another company's order is 404, and nothing changes.
func TestCabinetActionRoles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	paid := f.paidOrder(t, f.keyA, "parterre-3-11")
	unpaid := f.externalOrder(t, f.keyA, "parterre-3-12").ID
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
	actions := map[string]int64{"refund": paid, "resend": paid, "cancel": unpaid}
	for _, tc := range []struct {
		who     *browserless
		name    string
		allowed []string
		status  int // of the others
	}{
		{as(f.companyA, "support@a.test", organizer.RoleSupport), "support", []string{"resend", "cancel"}, http.StatusForbidden},
		{as(f.companyA, "finance@a.test", organizer.RoleFinance), "finance", []string{"refund"}, http.StatusForbidden},
		{as(f.companyA, "door@a.test", organizer.RoleDoor), "door", nil, http.StatusForbidden},
		{as(f.companyA, "dev@a.test", organizer.RoleDeveloper), "developer", nil, http.StatusForbidden},
		{as(companyB, "owner@b.test", organizer.RoleOwner), "another company's owner", nil, http.StatusNotFound},
	} {
		for kind, order := range actions {
			path := fmt.Sprintf("/cabinet/orders/%d/%s", order, kind)
			allowed := false
			for _, a := range tc.allowed {
				allowed = allowed || a == kind
			}
			if allowed {
				if p := tc.who.get(path); p.Status != http.StatusOK {
					t.Errorf("%s GET %s: %d, want 200", tc.name, path, p.Status)
				}
				continue
			}
			if p := tc.who.get(path); p.Status != tc.status {
				t.Errorf("%s GET %s: %d, want %d", tc.name, path, p.Status, tc.status)
			}
			form := url.Values{"token": {token}, "ticket": {fmt.Sprint(f.tickets(t, paid)[0].ID)}, "checked_in": {"yes"}}
			if p := tc.who.post(path, form); p.Status != tc.status {
				t.Errorf("%s POST %s: %d, want %d", tc.name, path, p.Status, tc.status)
			}
		}
	}
	// The order's page offers each role only its actions, and only those
	// the order allows.
	buttons := func(b *browserless, order int64) string {
		t.Helper()
		p := b.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", order))
		if p.Status != http.StatusOK {
			t.Fatalf("order %d's page: %d", order, p.Status)
		}
		var got []string
		for _, id := range []string{"act-refund", "act-resend", "act-cancel"} {
			if strings.Contains(p.Body, `id="`+id+`"`) {
				got = append(got, id)
			}
		}
		return strings.Join(got, " ")
	}
	finance, support := as(f.companyA, "finance2@a.test", organizer.RoleFinance), as(f.companyA, "support2@a.test", organizer.RoleSupport)
	for _, tc := range []struct {
		who         *browserless
		name        string
		order       int64
		wantButtons string
	}{
		{finance, "finance, paid", paid, "act-refund"}, {finance, "finance, unpaid", unpaid, ""},
		{support, "support, paid (sandbox: never e-mailed)", paid, ""}, {support, "support, unpaid", unpaid, "act-cancel"},
	} {
		if got := buttons(tc.who, tc.order); got != tc.wantButtons {
			t.Errorf("%s: buttons %q, want %q", tc.name, got, tc.wantButtons)
		}
	}

	if o := f.orderStatus(t, paid); o.Status != "paid" {
		t.Fatalf("the paid order is %s", o.Status)
	}
	if o := f.orderStatus(t, unpaid); o.Status != "pending_payment" {
		t.Fatalf("the unpaid order is %s", o.Status)
	}
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM cabinet_actions").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("refused actions recorded: %d %v", n, err)
	}
}

// TestCabinetKeyShownOnce: creating a key answers 303 to the page that
// shows it; a reload of that page shows it no more and makes no key. A
// catalog upload redirects too.
func TestCabinetKeyShownOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "keys@a.test"))
	countKeys := func() int {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM api_keys WHERE name = 'box office'").Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	noFollow := &http.Client{Jar: b.c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := b.withKeyFormToken(url.Values{"environment": {"production"}, "name": {"box office"}, "kind": {"partner"}, "scopes": apikey.PartnerScopes})
	// A double click and then some: ten submissions of one form at once
	// make one key, and every answer leads to the page that shows it.
	var wg sync.WaitGroup
	answers := make([]string, 10)
	for i := range answers {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, f.URL+"/cabinet/keys", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := noFollow.Do(req)
			if err != nil {
				answers[i] = err.Error()
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			answers[i] = fmt.Sprintf("%d %s", res.StatusCode, res.Header.Get("Location"))
			if res.StatusCode != http.StatusSeeOther {
				answers[i] += " " + string(body)
			}
		})
	}
	wg.Wait()
	for i, a := range answers {
		if a != "303 /cabinet/keys/created" {
			t.Fatalf("POST /cabinet/keys #%d: %s", i, a)
		}
	}
	if n := countKeys(); n != 1 {
		t.Fatalf("%d keys from one form sent 10 times", n)
	}
	// The one key made is shown, whichever answer the browser kept.
	created := b.get("/cabinet/keys/created")
	first := newKeyOn(t, created)
	reload := b.get("/cabinet/keys/created")
	if reload.URL.Path != "/cabinet/keys" || strings.Contains(reload.Body, first) || strings.Contains(reload.Body, `id="new-key"`) ||
		!strings.Contains(noticeOf(reload), "shown only once") {
		t.Fatalf("the created page opened again: %d %s %q", reload.Status, reload.URL, noticeOf(reload))
	}
	// The same form sent after its key was shown makes nothing and
	// shows nothing.
	if p := b.post("/cabinet/keys", form); p.URL.Path != "/cabinet/keys" || strings.Contains(p.Body, `id="new-key"`) ||
		!strings.Contains(noticeOf(p), "shown only once") {
		t.Fatalf("the form resent after its key was shown: %d %s %q", p.Status, p.URL, noticeOf(p))
	}

	// A second key, while it waits: another browser with the session's
	// cookie but not the form's sees nothing of it, and leaves it to the
	// browser that made it.
	again := b.withKeyFormToken(url.Values{"environment": {"production"}, "name": {"box office"}, "kind": {"partner"}, "scopes": apikey.PartnerScopes})
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/cabinet/keys", strings.NewReader(again.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var waitingSessions, waitingKeys [][]byte
	if err := f.DB.NewRaw("SELECT data FROM cabinet_sessions").Scan(context.Background(), &waitingSessions); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw("SELECT reveal FROM api_keys WHERE reveal IS NOT NULL").Scan(context.Background(), &waitingKeys); err != nil || len(waitingKeys) != 1 {
		t.Fatalf("sealed keys waiting: %d (%v)", len(waitingKeys), err)
	}
	other := newBrowserless(t, f.URL, nil)
	base, _ := url.Parse(f.URL)
	for _, c := range b.c.Jar.Cookies(&url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/cabinet/keys"}) {
		if c.Name == cabinet.CookieName {
			other.c.Jar.SetCookies(&url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/cabinet"}, []*http.Cookie{c})
		}
	}
	if p := other.get("/cabinet/keys/created"); strings.Contains(p.Body, `id="new-key"`) || p.URL.Path != "/cabinet/keys" {
		t.Fatalf("the created page without the form's cookie: %d %s", p.Status, p.URL)
	}
	second := newKeyOn(t, b.get(res.Header.Get("Location")))
	if second == first || !strings.HasPrefix(second, "tk_production_") {
		t.Fatalf("the second key shown: %q", second)
	}
	if n := countKeys(); n != 2 {
		t.Fatalf("%d keys after two forms, reloads and a resend", n)
	}
	// The plaintext never reached the database: not the session store,
	// not the key's row, while it waited or after.
	var afterSessions [][]byte
	if err := f.DB.NewRaw("SELECT data FROM cabinet_sessions").Scan(context.Background(), &afterSessions); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := f.DB.NewRaw("SELECT count(*) FROM api_keys WHERE reveal IS NOT NULL").Scan(context.Background(), &left); err != nil || left != 0 {
		t.Fatalf("sealed keys left after being shown: %d (%v)", left, err)
	}
	for _, key := range []string{first, second} {
		secret := strings.TrimPrefix(key, "tk_production_")
		for _, d := range slices.Concat(waitingSessions, waitingKeys, afterSessions) {
			if bytes.Contains(d, []byte(secret)) {
				t.Fatal("a row holds a key's plaintext")
			}
		}
	}

	// A catalog upload that succeeded redirects to the catalog.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "catalog.json")
	_, _ = fw.Write(catalogfile.Demo(time.Now()))
	_ = mw.Close()
	req, _ = http.NewRequest(http.MethodPost, f.URL+"/cabinet/catalog", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if res, err = noFollow.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/cabinet/catalog" {
		t.Fatalf("catalog upload: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	if p := b.get("/cabinet/catalog"); !strings.Contains(p.Body, `id="import-result"`) || !strings.Contains(noticeOf(p), "Imported:") {
		t.Fatalf("the catalog after the upload:\n%.2000s", p.Body)
	}
	if p := b.get("/cabinet/catalog"); strings.Contains(p.Body, `id="import-result"`) {
		t.Fatal("the upload's result shown again on a reload")
	}
}

// TestCabinetRefundInBrowser: in Chromium, the owner opens an order's
// refund page, unticks all but one ticket and confirms; the order's page
// says what was done, and the pages fit at 1280 and 390 px.
func TestCabinetRefundInBrowser(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	id, ts := f.paidTickets(t, f.keyA, "parterre-3-13", "parterre-3-14")
	ctx, run := f.ownerInBrowser(t, "chromium@a.test")
	fits := func(name string) { t.Helper(); pageFits(t, ctx, name, nil) }
	run("open the refund page", chromedp.Navigate(fmt.Sprintf("%s/cabinet/orders/%d/refund", f.URL, id)),
		chromedp.WaitVisible(chromedp.CSS("#refund-form")))
	fits("order-refund")
	run("keep the second ticket", chromedp.Click(chromedp.CSS(fmt.Sprintf("#ticket-%d", ts[1].ID))),
		chromedp.SendKeys(chromedp.CSS("#reason"), "cannot come"))
	// The money back follows the ticks before the button is pressed: the
	// first ticket's price, the fee staying with the order.
	want := strings.Join(strings.Fields("Money back: "+money(ts[0].Price.Amount)+" for 1 ticket."), " ")
	var got string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#refund-amount")))
		if err != nil {
			t.Fatalf("the amount line: %v", err)
		}
		if got = strings.Join(strings.Fields(s), " "); strings.Contains(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after unticking, the amount says %q, want %q", got, want)
		}
	}
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#confirm")))
	if err != nil {
		t.Fatalf("confirm the refund: %v", err)
	}
	if u, err := url.Parse(res.URL); err != nil || u.Path != fmt.Sprintf("/cabinet/orders/%d", id) || u.Query().Get("env") != "sandbox" {
		t.Fatalf("after the refund the browser is at %s, want the order's page", res.URL)
	}
	if res.Status == http.StatusOK {
		notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#notice")))
		if err != nil || !strings.Contains(notice, "1 ticket(s) of order") {
			t.Fatalf("the order's page after the refund: %q %v", notice, err)
		}
		fits("order-refunded")
	} else {
		// The order's page is not served by this build: the notice waits
		// for the next page, the refund page, which lists what is left.
		run("the refund page again", chromedp.Navigate(fmt.Sprintf("%s/cabinet/orders/%d/refund", f.URL, id)),
			chromedp.WaitVisible(chromedp.CSS("#notice")))
		notice, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#notice")))
		if err != nil || !strings.Contains(notice, "1 ticket(s) of order") {
			t.Fatalf("the notice after the refund: %q %v", notice, err)
		}
		status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#order-status")))
		if err != nil || strings.TrimSpace(status) != "partially refunded" {
			t.Fatalf("the order's status after the refund: %q %v", status, err)
		}
		fits("order-refunded")
	}
	if got := f.tickets(t, id); got[0].Status != "refunded" || got[1].Status != "active" {
		t.Fatalf("tickets after the refund in Chromium: %s %s", got[0].Status, got[1].Status)
	}
}

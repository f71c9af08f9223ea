package api_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/organizer"
)

// buyerOrder reserves seats with key and orders them for the buyer
// (payment external), then confirms it with the external payment id
// "ext-<order id>"; it returns the order id.
func (f *fixture) buyerOrder(t *testing.T, key, buyer string, seats ...string) int64 {
	t.Helper()
	var r reservationBody
	if res := f.reserve(t, key, seats...); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &r)
	}
	var ob orderBody
	res := f.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"}`,
		f.ids["swan-lake"], r.Data.ID, buyer), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &ob)
	if res := f.confirm(t, key, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	return ob.Data.ID
}

// orderIDsOn are the orders a list page shows, in its order.
func orderIDsOn(t *testing.T, p page) []int64 {
	t.Helper()
	var ids []int64
	for _, m := range regexp.MustCompile(`<tr data-order="(\d+)"`).FindAllStringSubmatch(p.Body, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		ids = append(ids, id)
	}
	return ids
}

// pageText is a page's text without its tags, spaces collapsed.
func pageText(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " "))), " ")
}

// TestCabinetOrders: production orders sold through the API and the
// aggregator are found by every kind of search and nothing else, filtered
// by status, channel, key, event and date, and paged newest first; sandbox
// orders only under the switch, marked TEST; another company's orders
// neither found nor opened. The order page shows the buyer, the tickets
// (refunded, checked in), the money and a timeline of payment, issue,
// e-mail, refund and check-in in the company's time zone. A finance user
// reads orders; a door keeper gets 403.
func TestCabinetOrders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// The company's days are Moscow's, as its events' (the list's dates
	// and the page's times are the company's).
	if _, err := f.DB.NewRaw("UPDATE companies SET timezone = 'Europe/Moscow' WHERE id = ?", f.companyA).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	outbox, err := mail.New("", t.TempDir(), "tickets@ticketsales.test")
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = outbox // production orders are e-mailed: the timeline shows it
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	prod, prodID := f.Key(t, f.companyA, apikey.Production)
	shop, shopID := f.Key(t, f.companyA, apikey.Production)
	door, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)

	maria := f.buyerOrder(t, prod, `{"email": "Maria.Ivanova@shop.test", "first_name": "Maria", "last_name": "Ivanova", "phone": "+7 912 000-11-22"}`,
		"parterre-3-11", "parterre-3-12")
	boris := f.buyerOrder(t, shop, `{"email": "boris@petrov.test", "first_name": "Boris", "last_name": "Petrov", "phone": "+7 900 111-22-33"}`, "parterre-3-13")
	// The aggregator sells with the same production key: channel aggregator.
	var agg aggOrder
	if res := f.Do(t, http.MethodPost, "/aggregator/v1/reserve", prod,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["parterre|parterre-3-14"], "ttl": 900}`, event)); res.Status != http.StatusCreated {
		t.Fatalf("aggregator reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &agg)
	}
	if res := f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+agg.OrderID+"/confirm", prod,
		`{"customer": {"email": "olga@agg.test", "name": "Olga Sidorova"}, "paymentId": "agg-pay-77"}`); res.Status != http.StatusOK {
		t.Fatalf("aggregator confirm: %d %s", res.Status, res.Body)
	}
	var aggID int64
	if err := f.DB.NewRaw("SELECT id FROM orders WHERE payment_id = 'agg-pay-77'").Scan(ctx, &aggID); err != nil {
		t.Fatal(err)
	}
	sandboxOrder := f.paidOrder(t, f.keyA, "parterre-3-15")
	var foreignCats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.foreignID), f.keyB).Decode(t, &foreignCats)
	var fob orderBody
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyB, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}],
		"customer": {"email": "maria.ivanova@shop.test", "first_name": "Maria", "last_name": "Ivanova", "phone": "+7 900 111-22-55"}, "payment": "external"}`,
		f.foreignID, foreignCats.Data[0].ID), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("company B's order: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &fob)
	foreign := fob.Data.ID
	if res := f.confirm(t, f.keyB, foreign, fob.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("company B's confirm: %d %s", res.Status, res.Body)
	}

	// Maria's first ticket is refunded, her second admitted at the door.
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", maria), prod).Decode(t, &ts)
	if len(ts.Data) != 2 {
		t.Fatalf("Maria's tickets: %+v", ts.Data)
	}
	slices.SortFunc(ts.Data, func(a, b ticket) int { return strings.Compare(a.Number, b.Number) })
	refunded, admitted := ts.Data[0], ts.Data[1]
	var rb refundBody
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", maria), prod,
		fmt.Sprintf(`{"ticket_ids": [%d], "reason": "cannot come"}`, refunded.ID), idemKey(t)); res.Status != http.StatusOK && res.Status != http.StatusCreated && res.Status != http.StatusAccepted {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &rb)
	}
	if got := f.scan(t, door, event, admitted.Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	var foreignBarcode string
	if err := f.DB.NewRaw("SELECT barcode FROM tickets WHERE order_id = ?", foreign).Scan(ctx, &foreignBarcode); err != nil {
		t.Fatal(err)
	}
	// The refund completes and the e-mail goes out in the order's workflows.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var done bool
		if err := f.DB.NewRaw(`SELECT (SELECT status = 'completed' FROM refunds WHERE id = ?) AND (SELECT emailed_at IS NOT NULL FROM orders WHERE id = ?)`,
			rb.Data.ID, maria).Scan(ctx, &done); err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the refund did not complete, or the tickets were not e-mailed")
		}
	}

	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@orders.test"))
	list := func(query string) []int64 {
		t.Helper()
		p := b.get("/cabinet/orders?" + query)
		if p.Status != http.StatusOK {
			t.Fatalf("GET /cabinet/orders?%s: %d %.2000s", query, p.Status, p.Body)
		}
		return orderIDsOn(t, p)
	}
	want := func(query string, ids ...int64) {
		t.Helper()
		if got := list(query); !slices.Equal(got, ids) {
			t.Errorf("?%s lists %v, want %v", query, got, ids)
		}
	}
	all := []int64{aggID, boris, maria} // newest first
	want("", all...)
	q := func(s string) string { return url.Values{"q": {s}}.Encode() }
	// Each kind of search finds its order and nothing else.
	// An exact key naming one order opens it.
	opens := func(query string, id int64) {
		t.Helper()
		if p := b.get("/cabinet/orders?" + query); p.Status != http.StatusOK || p.URL.Path != fmt.Sprintf("/cabinet/orders/%d", id) {
			t.Errorf("?%s: %d at %s, want order %d", query, p.Status, p.URL, id)
		}
	}
	opens(q(strconv.FormatInt(maria, 10)), maria)
	opens(q(admitted.Barcode), maria)
	opens(q(strings.ToLower(admitted.Number)), maria)
	opens(q(fmt.Sprintf("ext-%d", boris)), boris)
	opens(q("agg-pay-77"), aggID)
	want(q("maria.ivanova@shop.test"), maria) // e-mails are matched whatever their case
	want(q("MARIA.IV"), maria)
	want(q("boris"), boris)
	want(q("Petrov  Boris"), boris)
	want(q("olga sido"), aggID)
	want(q("Ivanova"), maria) // not company B's Maria Ivanova
	want(q("nobody@nowhere.test"))
	// Another company's order is found by none of its own keys.
	want(q(strconv.FormatInt(foreign, 10)))
	want(q(foreignBarcode))
	// The sandbox order only under the switch, marked TEST.
	want(q(strconv.FormatInt(sandboxOrder, 10)))
	sp := b.get("/cabinet/orders?env=sandbox")
	if got := orderIDsOn(t, sp); !slices.Equal(got, []int64{sandboxOrder}) || !strings.Contains(sp.Body, `id="sandbox-banner"`) ||
		!strings.Contains(sp.Body, fmt.Sprintf(`<a href="/cabinet/orders/%d?env=sandbox">%d</a> <span class="badge test">TEST</span>`, sandboxOrder, sandboxOrder)) {
		t.Errorf("the sandbox list shows %v:\n%s", got, sp.Body)
	}
	// Filters.
	want("status=partially_refunded", maria)
	want("channel=aggregator", aggID)
	want("channel=api", boris, maria)
	want(fmt.Sprintf("channel=key:%d", shopID), boris)
	want(fmt.Sprintf("channel=key:%d", prodID), aggID, maria)
	want(fmt.Sprintf("event=%d&status=paid", event), aggID, boris)
	today := time.Now().In(moscow(t)).Format(time.DateOnly)
	want("from="+today+"&to="+today, all...)
	want("from=" + time.Now().In(moscow(t)).AddDate(0, 0, 1).Format(time.DateOnly))
	want("to=" + time.Now().In(moscow(t)).AddDate(0, 0, -1).Format(time.DateOnly))
	if p := b.get("/cabinet/orders?" + strings.Join([]string{"q=" + strconv.FormatInt(maria, 10), "channel=aggregator"}, "&")); len(orderIDsOn(t, p)) != 0 ||
		!strings.Contains(p.Body, "0 orders match.") {
		t.Errorf("a search and a filter that exclude each other: %v", orderIDsOn(t, p))
	}
	for query, msg := range map[string]string{
		"from=26.11.2026": "must be a date", "status=lost": "Choose a status", "channel=key:999999": "Choose a channel",
		"q=x": "at least two letters", "from=2026-11-20&to=2026-11-19": "is before",
	} {
		if p := b.get("/cabinet/orders?" + query); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, msg) || len(orderIDsOn(t, p)) != 0 {
			t.Errorf("?%s: %d, want 422 with %q", query, p.Status, msg)
		}
	}
	for _, path := range []string{fmt.Sprintf("/cabinet/orders?event=%d", f.foreignID), "/cabinet/orders?env=staging",
		fmt.Sprintf("/cabinet/orders/%d", foreign), fmt.Sprintf("/cabinet/orders/%d?env=sandbox", foreign),
		fmt.Sprintf("/cabinet/orders/%d", sandboxOrder), fmt.Sprintf("/cabinet/orders/%d?env=sandbox", maria), "/cabinet/orders/x"} {
		if p := b.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, p.Status)
		}
	}
	if p := b.get(fmt.Sprintf("/cabinet/orders/%d?env=sandbox", sandboxOrder)); p.Status != http.StatusOK ||
		!strings.Contains(p.Body, "(TEST)") || !strings.Contains(p.Body, `id="sandbox-banner"`) {
		t.Errorf("the sandbox order under the switch: %d", p.Status)
	}

	// Paging: 60 more orders (copies of Boris's, each a minute older than
	// the one before: ids rise as they get older), 50 a page, newest first.
	if _, err := f.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, created_at, expires_at, channel)
		SELECT company_id, api_key_id, is_test, event_id, 'cancelled', payment, currency, total, service_fee, amount,
			'page-' || g || '@pages.test', 'Page', 'Turner', '', access_token_hash, created_at - g * interval '1 minute', expires_at, channel
		FROM orders, generate_series(1, 60) g WHERE id = ?`, boris).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	first := b.get("/cabinet/orders?q=page-")
	firstIDs := orderIDsOn(t, first)
	if len(firstIDs) != 50 || !strings.Contains(first.Body, "60 orders match.") || !slices.IsSorted(firstIDs) ||
		strings.Contains(first.Body, `id="newer"`) {
		t.Fatalf("the first page: %d orders, %v", len(firstIDs), firstIDs)
	}
	older := regexp.MustCompile(`<a href="([^"]+)" rel="next" id="older">`).FindStringSubmatch(first.Body)
	if older == nil {
		t.Fatal("no link to older orders")
	}
	second := b.get(html.UnescapeString(older[1]))
	secondIDs := orderIDsOn(t, second)
	if len(secondIDs) != 10 || !slices.IsSorted(secondIDs) || secondIDs[0] <= firstIDs[49] || strings.Contains(second.Body, `id="older"`) {
		t.Fatalf("the second page: %v after %v", secondIDs, firstIDs[49])
	}
	newer := regexp.MustCompile(`<a href="([^"]+)" rel="prev" id="newer">`).FindStringSubmatch(second.Body)
	if newer == nil {
		t.Fatal("no link to newer orders")
	}
	if back := orderIDsOn(t, b.get(html.UnescapeString(newer[1]))); !slices.Equal(back, firstIDs) {
		t.Fatalf("back to the newer page: %v, want %v", back, firstIDs)
	}

	// The order page.
	p := b.get(fmt.Sprintf("/cabinet/orders/%d", maria))
	if p.Status != http.StatusOK {
		t.Fatalf("Maria's order: %d %s", p.Status, p.Body)
	}
	text := pageText(p.Body)
	var o struct {
		PaidAt, CreatedAt, EmailedAt time.Time
		Amount                       int64
	}
	if err := f.DB.NewRaw("SELECT paid_at, created_at, emailed_at, amount FROM orders WHERE id = ?", maria).Scan(ctx, &o.PaidAt, &o.CreatedAt, &o.EmailedAt, &o.Amount); err != nil {
		t.Fatal(err)
	}
	var refundAmount int64
	var completedAt, scannedAt time.Time
	if err := f.DB.NewRaw("SELECT amount, completed_at FROM refunds WHERE id = ?", rb.Data.ID).Scan(ctx, &refundAmount, &completedAt); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.NewRaw("SELECT scanned_at FROM check_ins WHERE barcode = ?", admitted.Barcode).Scan(ctx, &scannedAt); err != nil {
		t.Fatal(err)
	}
	local := func(at time.Time) string { return at.In(moscow(t)).Format("2006-01-02 15:04:05") + " MSK" }
	money := func(minor int64) string { return fmt.Sprintf("%d.%02d RUB", minor/100, minor%100) }
	for _, w := range []string{
		"The event's times (its start, session, and the scans at its door) are in the venue's time zone, Europe/Moscow",
		"the rest in the company's, Europe/Moscow",
		"Status Partly refunded", "Name Maria Ivanova", "E-mail Maria.Ivanova@shop.test", "Phone +7 912 000-11-22",
		"Event Swan Lake", "Venue Grand Hall",
		refunded.Seat.Label, admitted.Seat.Label, refunded.Barcode + " refunded", admitted.Barcode + " checked in",
		"gate North", fmt.Sprintf("external payment id ext-%d", maria),
		local(o.CreatedAt) + " Order created",
		local(o.PaidAt) + " Paid",
		"Tickets issued 2 ticket(s)",
		local(o.EmailedAt) + " Tickets e-mailed to Maria.Ivanova@shop.test",
		"Refund " + rb.Data.ID + " requested",
		local(completedAt) + " Refund " + rb.Data.ID + " completed",
		local(scannedAt) + " Ticket " + admitted.Number + " admitted gate North",
		fmt.Sprintf("Workflow order/%d : open it in the Temporal UI", maria),
	} {
		if !strings.Contains(strings.ReplaceAll(text, "\u202f", ""), w) {
			t.Errorf("the order page lacks %q:\n%s", w, text)
		}
	}
	paid := regexp.MustCompile(`id="m-paid">([^<]+)<`).FindStringSubmatch(p.Body)
	ref := regexp.MustCompile(`id="m-refunded">([^<]+)<`).FindStringSubmatch(p.Body)
	if paid == nil || ref == nil || strings.ReplaceAll(paid[1], "\u202f", "") != money(o.Amount) ||
		strings.ReplaceAll(ref[1], "\u202f", "") != money(refundAmount) || refundAmount == 0 {
		t.Errorf("money: paid %q refunded %q, want %s and %s", paid, ref, money(o.Amount), money(refundAmount))
	}
	if !strings.Contains(p.Body, fmt.Sprintf(`/namespaces/default/workflows/order%%2F%d" id="workflow-link"`, maria)) {
		t.Errorf("no link to the order's workflow:\n%s", p.Body)
	}
	// Times are the event's, not UTC's (Moscow is UTC+3).
	if strings.Contains(text, o.PaidAt.UTC().Format("2006-01-02 15:04:05")) {
		t.Errorf("the page shows a time in UTC")
	}

	// Roles: finance (and support, by the same permission) read orders; a
	// door keeper (and a developer) do not.
	for _, role := range []organizer.Role{organizer.RoleFinance, organizer.RoleDoor} {
		ub := newBrowserless(t, f.URL, nil)
		link := cabinetUserAs(t, f.Stack, f.URL, f.companyA, string(role)+"@orders.test", role)
		ub.get(link)
		ub.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
		wantStatus := http.StatusOK
		if !role.Can(organizer.PermOrders) {
			wantStatus = http.StatusForbidden
		}
		for _, path := range []string{"/cabinet/orders", fmt.Sprintf("/cabinet/orders/%d", maria)} {
			if p := ub.get(path); p.Status != wantStatus || (wantStatus == http.StatusForbidden && strings.Contains(p.Body, "Maria")) {
				t.Errorf("%s on %s: %d, want %d", role, path, p.Status, wantStatus)
			}
		}
	}
	// Company B's owner sees none of A's orders, and opens none.
	bb := newBrowserless(t, f.URL, nil)
	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(ctx, &companyB); err != nil {
		t.Fatal(err)
	}
	bb.setPassword(cabinetUser(t, f.Stack, f.URL, companyB, "owner@b-orders.test"))
	if got := orderIDsOn(t, bb.get("/cabinet/orders?q=ivanova")); !slices.Equal(got, []int64{foreign}) {
		t.Errorf("company B's search for Ivanova: %v, want only %d", got, foreign)
	}
	if p := bb.get(fmt.Sprintf("/cabinet/orders/%d", maria)); p.Status != http.StatusNotFound {
		t.Errorf("company B opens A's order: %d", p.Status)
	}
}

func moscow(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestCabinetOrdersInBrowser: in Chromium, an organizer signs in, finds an
// order by the buyer's e-mail and opens it: its tickets, money and
// timeline, with no sideways scroll at 1280 and 390 px.
func TestCabinetOrdersInBrowser(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	id := f.buyerOrder(t, prod, `{"email": "konstantin.konstantinopolsky@a-very-long-domain-name.test", "first_name": "Konstantin",
		"last_name": "Konstantinopolsky", "phone": "+7 900 000-00-00"}`, "parterre-3-16", "parterre-3-17")
	f.buyerOrder(t, prod, `{"email": "other@buyer.test", "first_name": "Other", "last_name": "Buyer", "phone": "+7 900 111-22-44"}`, "parterre-3-18")

	ctx, run := f.ownerInBrowser(t, "chromium@orders.test")
	run("open orders", chromedp.Click(chromedp.CSS(`nav a[href="/cabinet/orders"]`)), chromedp.WaitVisible(chromedp.CSS("#orders")))
	run("search by e-mail", chromedp.SendKeys(chromedp.CSS("#q"), "Konstantin.Konstantinopolsky@a-very-long-domain-name.test"),
		chromedp.Click(chromedp.CSS("#find")))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		searched, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`location.search.includes('q=') && document.readyState === 'complete' && !!document.querySelector('#count')`))
		if err == nil && searched {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the search did not load (%v)", err)
		}
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#orders tr[data-order]'), r => r.dataset.order)`))
	if err != nil || !slices.Equal(rows, []string{strconv.FormatInt(id, 10)}) {
		t.Fatalf("the search lists %v (%v), want only %d", rows, err, id)
	}
	fits := func(name string) {
		t.Helper()
		pageFits(t, ctx, name, func(t *testing.T, width int64) {
			t.Helper()
			// The table's first row is laid out inside its box, and its
			// cells keep their words whole (no letter-per-line column).
			cells, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
				const row = document.querySelector('table tbody tr');
				if (!row || row.getBoundingClientRect().height < 10) return false;
				return Array.from(row.cells).every(c => c.scrollWidth <= c.clientWidth + 1 && c.clientWidth >= 24);
			})()`))
			if err != nil || !cells {
				t.Fatalf("the %s page's table at %d px: a row not laid out or a cell spilling (%v)", name, width, err)
			}
			// Let the resized page paint before it is captured.
			run("paint", chromedp.Sleep(300*time.Millisecond))
		})
	}
	fits("orders")
	run("open the order", chromedp.Click(chromedp.CSS(fmt.Sprintf(`#orders a[href="/cabinet/orders/%d"]`, id))), chromedp.WaitVisible(chromedp.CSS("#timeline")))
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`({
		title: document.querySelector('h1').textContent,
		tickets: document.querySelectorAll('#tickets tbody tr').length,
		barcodes: Array.from(document.querySelectorAll('#tickets code'), c => c.textContent),
		buyer: document.querySelector('#buyer').textContent,
		paid: document.querySelector('#m-paid').textContent,
		kinds: Array.from(document.querySelectorAll('#timeline li'), li => li.dataset.kind),
		zone: document.querySelector('#zone').textContent,
	})`))
	if err != nil {
		t.Fatal(err)
	}
	if got["title"] != fmt.Sprintf("Order %d", id) || got["tickets"] != float64(2) || len(got["barcodes"].([]any)) != 2 ||
		!strings.Contains(got["buyer"].(string), "Konstantin Konstantinopolsky") || !strings.HasSuffix(got["paid"].(string), " RUB") ||
		!strings.Contains(got["zone"].(string), "Europe/Moscow") {
		t.Fatalf("the order page in Chromium: %+v", got)
	}
	kinds := fmt.Sprint(got["kinds"])
	for _, k := range []string{"created", "payment", "paid", "issued"} {
		if !strings.Contains(kinds, k) {
			t.Errorf("the timeline lacks %s: %s", k, kinds)
		}
	}
	fits("order")
}

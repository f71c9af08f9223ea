package api_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"

	"github.com/chromedp/chromedp"
)

// TestCabinetReportWhatTheOrganizerEarns sells through the real API in both
// fee modes (separate: Swan Lake and the exhibition; included: the stand-up
// night), refunds some tickets and whole orders, sells two sessions of the
// scheduled exhibition and one order over the aggregator adapter. The
// report's figures equal the money as it moved, in currency units with the
// currency in the CSV; a sale paid at 22:30 UTC lands on the next day once
// the owner sets the company's zone to Moscow; finance may read the report
// but not set the zone.
func TestCabinetReportWhatTheOrganizerEarns(t *testing.T) {
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	ctx := context.Background()
	prod, _ := f.Key(t, f.companyA, apikey.Production)

	get := func(id int64) order {
		t.Helper()
		var ob orderBody
		f.Get(t, fmt.Sprintf("/v1/orders/%d", id), prod).Decode(t, &ob)
		return ob.Data
	}
	refund := func(id int64, ticketIDs ...int64) int64 {
		t.Helper()
		body := `{"reason": "cannot come"}`
		if len(ticketIDs) > 0 {
			body = fmt.Sprintf(`{"ticket_ids": [%d], "reason": "cannot come"}`, ticketIDs[0])
		}
		res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", id), prod, body, idemKey(t))
		var rb refundBody
		res.Decode(t, &rb)
		if res.Status != 201 || rb.Data.Status != "completed" {
			t.Fatalf("refund of %d: %d %s", id, res.Status, res.Body)
		}
		return rb.Data.Amount.Amount
	}
	ticketsOf := func(id int64) []ticket {
		t.Helper()
		var tb struct{ Data []ticket }
		f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), prod).Decode(t, &tb)
		return tb.Data
	}
	categoryOf := func(event int64) int64 {
		t.Helper()
		var cats struct{ Data []category }
		f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), prod).Decode(t, &cats)
		return cats.Data[0].ID
	}
	// quantity orders n tickets of an event without seats (of a session).
	quantity := func(event, session int64, n int) int64 {
		t.Helper()
		slot := ""
		if session != 0 {
			slot = fmt.Sprintf(`"schedule_slot_id": %d,`, session)
		}
		res := f.Do(t, http.MethodPost, "/v1/orders", prod, fmt.Sprintf(`{"event_id": %d, %s
			"items": [{"ticket_category_id": %d, "quantity": %d}], "customer": %s, "payment": "external"}`,
			event, slot, categoryOf(event), n, customer), idemKey(t))
		var ob orderBody
		res.Decode(t, &ob)
		if res.Status != http.StatusCreated {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		if res := f.confirm(t, prod, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
			t.Fatalf("confirm: %d %s", res.Status, res.Body)
		}
		return ob.Data.ID
	}

	// Separate fee (10%, at least 50.00): two stalls, one refunded; a
	// balcony seat refunded whole.
	a := f.paidOrder(t, prod, "parterre-3-1", "parterre-3-2")
	b := f.paidOrder(t, prod, "balcony-1-3")
	// Included fee (8%): three standing tickets, one refunded; two refunded whole.
	c := quantity(f.ids["standup"], 0, 3)
	d := quantity(f.ids["standup"], 0, 2)
	// The exhibition's two sessions.
	var sessions struct{ Data []struct{ ID int64 } }
	f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", f.ids["expo"]), prod).Decode(t, &sessions)
	if len(sessions.Data) != 2 {
		t.Fatalf("expo's sessions: %+v", sessions)
	}
	e1 := quantity(f.ids["expo"], sessions.Data[0].ID, 1)
	e2 := quantity(f.ids["expo"], sessions.Data[1].ID, 2)
	// The aggregator adapter, with the production key.
	var ag aggOrder
	if res := f.Do(t, http.MethodPost, "/aggregator/v1/reserve", prod,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["parterre|parterre-3-4"], "ttl": 900}`, f.ids["swan-lake"])); res.Status != 201 {
		t.Fatalf("aggregator reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ag)
	}
	if res := f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+ag.OrderID+"/confirm", prod,
		`{"customer": {"email": "ivan@example.com", "name": "Ivan Petrov"}, "paymentId": "agg-pay-report"}`); res.Status != 200 {
		t.Fatalf("aggregator confirm: %d %s", res.Status, res.Body)
	}
	var agID int64
	if err := f.DB.NewRaw("SELECT id FROM orders WHERE channel = 'aggregator' AND NOT is_test").Scan(ctx, &agID); err != nil {
		t.Fatal(err)
	}
	f.paidOrder(t, f.keyA, "parterre-3-6") // sandbox: never counted

	rA := refund(a, ticketsOf(a)[0].ID)
	rB := refund(b)
	rC := refund(c, ticketsOf(c)[0].ID)
	rD := refund(d)
	rE := refund(e2, ticketsOf(e2)[0].ID)

	orders := map[string]order{}
	for name, id := range map[string]int64{"a": a, "b": b, "c": c, "d": d, "e1": e1, "e2": e2, "ag": agID} {
		orders[name] = get(id)
	}
	// The fee modes as the API quoted them: on top, or inside the prices.
	for _, n := range []string{"a", "b", "e1", "e2", "ag"} {
		if o := orders[n]; o.Amount.Amount != o.Total.Amount+o.ServiceFee.Amount {
			t.Fatalf("order %s is not fee-on-top: %+v", n, o)
		}
	}
	for _, n := range []string{"c", "d"} {
		if o := orders[n]; o.Amount.Amount != o.Total.Amount || o.ServiceFee.Amount == 0 {
			t.Fatalf("order %s is not fee-inside: %+v", n, o)
		}
	}
	// A partial refund returns a ticket's price; a whole refund the rest
	// of what the buyer paid, the fee with it.
	price := func(o order, n int64) int64 { return o.Total.Amount / n }
	if rA != price(orders["a"], 2) || rC != price(orders["c"], 3) || rE != price(orders["e2"], 2) ||
		rB != orders["b"].Amount.Amount || rD != orders["d"].Amount.Amount {
		t.Fatalf("refunds %d %d %d %d %d of %+v", rA, rB, rC, rD, rE, orders)
	}

	var want report.SalesFigures
	for _, o := range orders {
		want.FaceValue += o.Total.Amount
		want.ServiceFees += o.ServiceFee.Amount
		want.Gross += o.Amount.Amount
	}
	want.FeesInPrice = orders["c"].ServiceFee.Amount + orders["d"].ServiceFee.Amount
	want.Refunds = rA + rB + rC + rD + rE
	want.FeeRefunded = orders["b"].ServiceFee.Amount // the only fee on top refunded: b's
	want.FaceValueRefunded = want.Refunds - want.FeeRefunded
	want.FeesReturned = orders["b"].ServiceFee.Amount + orders["d"].ServiceFee.Amount
	want.FeesKept = want.ServiceFees - want.FeesReturned
	// What the organizer earns, order by order: the prices kept, less a fee
	// inside them; nothing of an order refunded whole.
	want.NetToOrganizer = (orders["a"].Total.Amount - rA) + 0 + (orders["c"].Total.Amount - rC - orders["c"].ServiceFee.Amount) + 0 +
		orders["e1"].Total.Amount + (orders["e2"].Total.Amount - rE) + orders["ag"].Total.Amount
	want.TicketsSold, want.TicketsRefunded, want.Orders = 2+1+3+2+1+2+1, 1+1+1+2+1, 7
	want.TicketsNet = want.TicketsSold - want.TicketsRefunded

	owner := newBrowserless(t, f.URL, nil)
	owner.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))
	rows := reportCSV(t, owner, "")
	total := rows[0]
	for col, v := range map[string]int64{"face_value": want.FaceValue, "service_fees": want.ServiceFees, "fees_in_price": want.FeesInPrice,
		"gross": want.Gross, "face_value_refunded": want.FaceValueRefunded, "fee_refunded": want.FeeRefunded, "refunds": want.Refunds,
		"fees_returned": want.FeesReturned, "fees_kept": want.FeesKept, "net_to_organizer": want.NetToOrganizer} {
		if total[col] != report.Units(v) {
			t.Errorf("CSV total %s = %q, want %q", col, total[col], report.Units(v))
		}
	}
	for col, v := range map[string]int64{"tickets_sold": want.TicketsSold, "tickets_refunded": want.TicketsRefunded,
		"tickets_net": want.TicketsNet, "orders": want.Orders} {
		if total[col] != fmt.Sprint(v) {
			t.Errorf("CSV total %s = %q, want %d", col, total[col], v)
		}
	}
	if total["currency"] != "RUB" || total["time_zone"] != "UTC" || !strings.Contains(total["gross"], ".") {
		t.Errorf("CSV total row: %v", total)
	}
	// The exhibition's sessions, each with its own figures.
	var sessionRows []map[string]string
	for _, r := range rows {
		if r["section"] == "session" {
			sessionRows = append(sessionRows, r)
		}
	}
	if len(sessionRows) != 2 || sessionRows[0]["session_id"] != fmt.Sprint(sessions.Data[0].ID) ||
		sessionRows[0]["gross"] != report.Units(orders["e1"].Amount.Amount) || sessionRows[1]["refunds"] != report.Units(rE) ||
		sessionRows[1]["net_to_organizer"] != report.Units(orders["e2"].Total.Amount-rE) || !strings.HasSuffix(sessionRows[0]["session_starts_at"], "+03:00") {
		t.Errorf("session rows: %v", sessionRows)
	}
	page := owner.get("/cabinet/report")
	for _, s := range []string{fmt.Sprintf(`id="t-net-organizer" data-minor="%d"`, want.NetToOrganizer),
		fmt.Sprintf(`id="t-fees-kept" data-minor="%d"`, want.FeesKept), fmt.Sprintf(`data-session="%d"`, sessions.Data[1].ID)} {
		if !strings.Contains(page.Body, s) {
			t.Fatalf("report page lacks %s:\n%.3000s", s, page.Body)
		}
	}

	// Days in the company's zone: the exhibition's first order paid at
	// 22:30 UTC two days ago is on the next day in Moscow.
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	if _, err := f.DB.NewRaw("UPDATE orders SET paid_at = ? WHERE id = ?", day.Add(22*time.Hour+30*time.Minute), e1).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	dayRows := func() map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, r := range reportCSV(t, owner, "") {
			if r["section"] == "day" {
				m[r["day"]] = r
			}
		}
		return m
	}
	d0, d1 := day.Format(time.DateOnly), day.AddDate(0, 0, 1).Format(time.DateOnly)
	if got := dayRows(); got[d0]["orders"] != "1" || got[d1] != nil {
		t.Fatalf("UTC days: %v", got)
	}
	// Finance reads the report but does not set the zone; a name that is
	// no zone is refused, nothing changed.
	finance := newBrowserless(t, f.URL, nil)
	finance.setPassword(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "finance@a.test", organizer.RoleFinance))
	if p := finance.post("/cabinet/report/timezone", url.Values{"timezone": {"Europe/Moscow"}}); p.Status != http.StatusForbidden {
		t.Fatalf("finance sets the zone: %d", p.Status)
	}
	if strings.Contains(finance.get("/cabinet/report").Body, `id="tz-form"`) {
		t.Fatal("finance is offered the zone form")
	}
	if p := owner.post("/cabinet/report/timezone", url.Values{"timezone": {"Mars/Olympus"}}); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(p.Body, "not an IANA time zone") {
		t.Fatalf("an unknown zone: %d %.500s", p.Status, p.Body)
	}
	if p := owner.post("/cabinet/report/timezone", url.Values{"timezone": {"Europe/Moscow"}}); p.Status != 200 ||
		p.URL.Path != "/cabinet/report" || !strings.Contains(p.Body, `id="report-tz">Europe/Moscow<`) {
		t.Fatalf("set the zone: %d %s %.500s", p.Status, p.URL, p.Body)
	}
	got := dayRows()
	if got[d1]["orders"] != "1" || got[d1]["gross"] != report.Units(orders["e1"].Amount.Amount) || got[d1]["time_zone"] != "Europe/Moscow" ||
		got[d0] != nil {
		t.Fatalf("Moscow days: %v", got)
	}
	// A range of one Moscow day holds that sale and nothing else.
	one := reportCSV(t, owner, "from="+d1+"&to="+d1)[0]
	if one["orders"] != "1" || one["gross"] != report.Units(orders["e1"].Amount.Amount) {
		t.Fatalf("Moscow's %s: %v", d1, one)
	}

	// In Chromium, at desktop and phone width: the statement's net and the
	// session rows are there, the zone is named, and the page does not
	// scroll sideways (wide tables scroll in their own boxes).
	bctx := newBrowser(t, 2*time.Minute)
	link := cabinetUser(t, f.Stack, f.URL, f.companyA, "browser@a.test")
	if err := chromedp.Do(bctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#earnings"))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	artifacts := filepath.Join("..", ".data", "artifacts", "cabinet")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(f.URL+"/cabinet/report"),
			chromedp.WaitVisible(chromedp.CSS("#earnings"))); err != nil {
			t.Fatal(err)
		}
		net, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#t-net-organizer').dataset.minor`))
		if err != nil || net != fmt.Sprint(want.NetToOrganizer) {
			t.Fatalf("net to the organizer at %d px: %q (%v)", width, net, err)
		}
		shown, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#t-net-organizer').textContent`))
		if err != nil || !strings.HasSuffix(strings.TrimSpace(shown), " RUB") {
			t.Fatalf("net shown as %q (%v)", shown, err)
		}
		sessionsShown, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#by-event tr.session').length`))
		if err != nil || sessionsShown != 2 {
			t.Fatalf("session rows at %d px: %d (%v)", width, sessionsShown, err)
		}
		zone, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('#by-day thead th').textContent`))
		if err != nil || !strings.Contains(zone, "Europe/Moscow") {
			t.Fatalf("the day column is %q (%v)", zone, err)
		}
		overflow, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
		if err != nil || overflow {
			t.Fatalf("the report scrolls sideways at %d px (%v)", width, err)
		}
		shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(artifacts, fmt.Sprintf("report-earnings-%d.png", width))
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil || distinctColours(img) <= 10 {
			t.Fatalf("%s is blank (%v)", name, err)
		}
	}
}

// reportCSV reads the cabinet's CSV as rows keyed by its header, the total
// first.
func reportCSV(t *testing.T, b *browserless, query string) []map[string]string {
	t.Helper()
	p := b.get("/cabinet/report.csv?" + query)
	if p.Status != 200 || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("report csv: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	rows, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
	if err != nil || len(rows) < 2 || rows[1][0] != "total" {
		t.Fatalf("report csv: %v\n%s", err, p.Body)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// TestCabinetReportSeveralCurrencies: a report over events in two
// currencies would be no sum: the page says so with 422 and keeps the
// filter (the CSV too, instead of a file); one event's report is shown in
// its currency.
func TestCabinetReportSeveralCurrencies(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	owner := newBrowserless(t, f.URL, nil)
	owner.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))
	if _, err := f.DB.NewRaw("UPDATE events SET currency = 'USD' WHERE id = ?", f.ids["standup"]).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/cabinet/report", "/cabinet/report.csv"} {
		p := owner.get(path)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "several currencies (RUB, USD)") ||
			!strings.Contains(p.Body, `id="event"`) || strings.Contains(p.Body, `id="totals"`) {
			t.Fatalf("%s over RUB and USD events: %d %.600s", path, p.Status, p.Body)
		}
	}
	p := owner.get(fmt.Sprintf("/cabinet/report?event=%d", f.ids["standup"]))
	if p.Status != 200 || !strings.Contains(p.Body, "Money is in USD") || !strings.Contains(p.Body, `id="totals"`) {
		t.Fatalf("the USD event's report: %d %.600s", p.Status, p.Body)
	}
}

// TestCabinetReportZoneRefusedByPostgres: "Europe//Moscow" loads in Go
// (from the system's zone files) but Postgres does not know it; the form
// answers 422 with why, as for a name Go refuses, and the zone stays.
func TestCabinetReportZoneRefusedByPostgres(t *testing.T) {
	t.Parallel()
	const odd = "Europe//Moscow"
	if _, err := time.LoadLocation(odd); err != nil {
		t.Skipf("Go does not load %q here (no system zone files): %v", odd, err)
	}
	f := newFixture(t)
	owner := newBrowserless(t, f.URL, nil)
	owner.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))
	p := owner.post("/cabinet/report/timezone", url.Values{"timezone": {odd}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "not a time zone name the database knows") {
		t.Fatalf("a zone Postgres refuses: %d %.500s", p.Status, p.Body)
	}
	if p := owner.get("/cabinet/report"); !strings.Contains(p.Body, `id="report-tz">UTC<`) {
		t.Fatalf("the zone changed: %.500s", p.Body)
	}
}

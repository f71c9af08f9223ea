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
)

// timesCatalog: a company's two events, a night concert at 01:30 Moscow
// time on 29 January (22:30 UTC on the 28th) and an evening in
// Yekaterinburg (+05), with Cyrillic titles and prices in the thousands.
const timesCatalog = `{"cities": [{"ref": "msk", "name": "Москва"}, {"ref": "ekb", "name": "Екатеринбург"}],
  "venues": [{"ref": "msk-hall", "name": "Концертный зал имени П. И. Чайковского", "city": "msk", "timezone": "Europe/Moscow"},
    {"ref": "ekb-hall", "name": "Свердловская государственная академическая филармония", "city": "ekb", "timezone": "Asia/Yekaterinburg"}],
  "events": [
    {"ref": "night", "title": "Ночной концерт: Рахманинов, Скрябин и Прокофьев при свечах в Большом зале", "slug": "night",
      "status": "published", "starts_at": "2027-01-29T01:30:00+03:00", "venue": "msk-hall",
      "fee": {"mode": "included", "rate_bp": 500, "min_fee": 0},
      "categories": [{"ref": "ga", "name": "Партер", "price": 1250000, "capacity": 100}]},
    {"ref": "ural", "title": "Уральский филармонический оркестр: Шостакович, Симфония № 7 «Ленинградская»", "slug": "ural",
      "status": "published", "starts_at": "2027-02-05T20:00:00+05:00", "venue": "ekb-hall",
      "fee": {"mode": "included", "rate_bp": 500, "min_fee": 0},
      "categories": [{"ref": "ga", "name": "Партер", "price": 980000, "capacity": 100}]}]}`

// TestCabinetTimesOneRule: a company in Europe/Moscow with events in
// Moscow and Yekaterinburg. Every event picker shows the 01:30 MSK event
// on the 29th (its own date); an order made at 23:30 UTC on the 28th shows
// created on the 29th MSK in the order list, on its page and on its refund
// form, while its event's start stays in the event's zone; keys, the team
// and the request log are in MSK; and a day of the report (orders counted
// the day they were paid) equals the order list filtered to orders paid
// that day, which the report's day links to.
func TestCabinetTimesOneRule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	company := f.Company(t, "Филармония")
	f.Import(t, company, []byte(timesCatalog))
	events := map[string]int64{}
	for _, ref := range []string{"night", "ural"} {
		var id int64
		if err := f.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND ref = ?", company, ref).Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		events[ref] = id
	}
	prod, _ := f.Key(t, company, apikey.Production)

	buy := func(event int64) int64 {
		t.Helper()
		var cats struct{ Data []category }
		f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), prod).Decode(t, &cats)
		res := f.Do(t, http.MethodPost, "/v1/orders", prod, fmt.Sprintf(`{"event_id": %d,
			"items": [{"ticket_category_id": %d, "quantity": 1}], "customer": {"email": "olga@example.com",
			"first_name": "Ольга", "last_name": "Константинопольская", "phone": "+7 999 123-45-67"}, "payment": "external"}`,
			event, cats.Data[0].ID), idemKey(t))
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
	utc := func(day, hm string) time.Time {
		at, err := time.Parse("2006-01-02 15:04", day+" "+hm)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	// When each order was made and paid, in UTC; Moscow is three hours
	// ahead.
	type when struct {
		id            int64
		created, paid time.Time
	}
	made := map[string]when{
		// Made 02:30 and paid 02:31 MSK on the 29th.
		"a": {buy(events["night"]), utc("2026-11-28", "23:30"), utc("2026-11-28", "23:31")},
		// Made 22:00, paid 23:00 MSK on the 28th.
		"b": {buy(events["ural"]), utc("2026-11-28", "19:00"), utc("2026-11-28", "20:00")},
		// Made at midnight MSK (the 29th's first moment), paid 00:10.
		"c": {buy(events["night"]), utc("2026-11-28", "21:00"), utc("2026-11-28", "21:10")},
		// Made 23:00 MSK on the 27th, paid 11:00 MSK on the 28th.
		"d": {buy(events["ural"]), utc("2026-11-27", "20:00"), utc("2026-11-28", "08:00")},
	}
	for _, o := range made {
		if _, err := f.DB.NewRaw(`UPDATE orders SET created_at = ?, paid_at = ?, payment_accepted_at = ?, expires_at = ? WHERE id = ?`,
			o.created, o.paid, o.paid, o.created.Add(15*time.Minute), o.id).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, company, "owner@philharmonia.test"))
	if p := b.post("/cabinet/report/timezone", url.Values{"timezone": {"Europe/Moscow"}}); p.Status != http.StatusOK {
		t.Fatalf("set the zone: %d", p.Status)
	}

	// Event pickers: the night concert on the 29th, its own date.
	night := fmt.Sprintf(`<option value="%d"`, events["night"])
	for _, path := range []string{"/cabinet/orders", "/cabinet/report", "/cabinet/checkin", "/cabinet/keys"} {
		p := b.get(path)
		i := strings.Index(p.Body, night)
		if p.Status != http.StatusOK || i < 0 {
			t.Fatalf("%s: %d, no option of the night concert", path, p.Status)
		}
		option := p.Body[i : i+strings.Index(p.Body[i:], "</option>")]
		if !strings.Contains(option, "2027-01-29") || strings.Contains(option, "2027-01-28") {
			t.Errorf("%s lists the night concert as %q", path, option)
		}
	}
	if got := pageText(b.get("/cabinet/channels").Body); !strings.Contains(got, "2027-01-29 01:30 MSK") || !strings.Contains(got, "2027-02-05 20:00 +05") {
		t.Errorf("the channels page shows the events' starts not in their zones:\n%s", got)
	}

	// Order a: made 23:30 UTC on the 28th, the 29th in Moscow, everywhere.
	a := made["a"].id
	const createdA = "2026-11-29 02:30:00 MSK"
	list := b.get("/cabinet/orders")
	if row := rowOf(list.Body, a); !strings.Contains(row, createdA) {
		t.Errorf("the order list shows order a as:\n%s", row)
	}
	op := b.get(fmt.Sprintf("/cabinet/orders/%d", a))
	text := pageText(op.Body)
	for _, w := range []string{"Created " + createdA, "Paid 2026-11-29 02:31:00 MSK", "Starts 2027-01-29 01:30:00 MSK",
		createdA + " Order created", "the company's, Europe/Moscow"} {
		if !strings.Contains(text, w) {
			t.Errorf("the order page lacks %q:\n%s", w, text)
		}
	}
	if strings.Contains(text, "2026-11-28 23:30") || strings.Contains(text, " UTC") {
		t.Errorf("the order page shows UTC:\n%s", text)
	}
	// The Yekaterinburg order: its event starts at 20:00 +05, it was made
	// at 22:00 MSK.
	ural := pageText(b.get(fmt.Sprintf("/cabinet/orders/%d", made["b"].id)).Body)
	if !strings.Contains(ural, "Starts 2027-02-05 20:00:00 +05") || !strings.Contains(ural, "Created 2026-11-28 22:00:00 MSK") ||
		!strings.Contains(ural, "venue's time zone, Asia/Yekaterinburg") {
		t.Errorf("the Yekaterinburg order's page:\n%s", ural)
	}
	rf := b.get(fmt.Sprintf("/cabinet/orders/%d/refund", a))
	if got := regexp.MustCompile(`id="order-created">([^<]*)<`).FindStringSubmatch(rf.Body); rf.Status != http.StatusOK || got == nil || got[1] != createdA {
		t.Errorf("the refund form shows the order made at %q (%d)", got, rf.Status)
	}

	// Keys, the team, the request log: in MSK.
	stamp := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? MSK`)
	if p := b.get("/cabinet/keys"); !stamp.MatchString(p.Body) || strings.Contains(pageText(p.Body), " UTC") {
		t.Errorf("the keys page does not show MSK:\n%s", pageText(p.Body))
	}
	if p := b.get("/cabinet/team"); !stamp.MatchString(p.Body) || strings.Contains(pageText(p.Body), " UTC") {
		t.Errorf("the team page does not show MSK:\n%s", pageText(p.Body))
	}
	rid := f.Get(t, "/v1/events", prod).Header.Get("X-Request-Id")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		p := b.get("/cabinet/requests?request_id=" + rid)
		if row := regexp.MustCompile(`<tr data-request-id="` + rid + `"><td>([^<]*)</td>`).FindStringSubmatch(p.Body); row != nil {
			if !stamp.MatchString(row[1]) || !strings.Contains(p.Body, "From (Europe/Moscow)") {
				t.Errorf("the request log shows %q", row[1])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the log")
		}
	}

	// The report's days are the days orders were paid; the order list
	// filtered to orders paid on a day shows the same orders, and the
	// report's day links to it. Created on the 28th are fewer.
	rep := b.get("/cabinet/report?from=2026-11-27&to=2026-11-29")
	for day, want := range map[string][]int64{
		"2026-11-27": nil,
		"2026-11-28": {made["b"].id, made["d"].id},
		"2026-11-29": {made["a"].id, made["c"].id},
	} {
		slices.Sort(want)
		cell := regexp.MustCompile(`<tr data-day="` + day + `">.*?<td class="orders">(.*?)</td>`).FindStringSubmatch(rep.Body)
		if cell == nil && len(want) == 0 {
			continue // a day of no sales has no row
		}
		if cell == nil {
			t.Fatalf("the report has no day %s", day)
		}
		count := pageText(cell[1])
		if count != strconv.Itoa(len(want)) {
			t.Errorf("the report's %s: %s orders paid, want %d", day, count, len(want))
		}
		paid := b.get("/cabinet/orders?by=paid&from=" + day + "&to=" + day)
		got := orderIDsOn(t, paid)
		slices.Sort(got)
		if !slices.Equal(got, want) || !strings.Contains(paid.Body, fmt.Sprintf("%d orders match.", len(want))) {
			t.Errorf("orders paid on %s: %v, want %v", day, got, want)
		}
		if len(want) == 0 {
			continue
		}
		link := regexp.MustCompile(`href="([^"]+)"`).FindStringSubmatch(cell[1])
		if link == nil {
			t.Fatalf("the report's %s links nowhere: %s", day, cell[1])
		}
		linked := orderIDsOn(t, b.get(html.UnescapeString(link[1])))
		slices.Sort(linked)
		if !slices.Equal(linked, want) {
			t.Errorf("the report's %s links to orders %v, want %v", day, linked, want)
		}
	}
	for day, want := range map[string][]int64{
		"2026-11-27": {made["d"].id},
		"2026-11-28": {made["b"].id},
		"2026-11-29": {made["a"].id, made["c"].id},
	} {
		got := orderIDsOn(t, b.get("/cabinet/orders?from="+day+"&to="+day))
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("orders created on %s (MSK): %v, want %v", day, got, want)
		}
	}
	if p := b.get("/cabinet/orders?by=sold"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "creation or of payment") {
		t.Errorf("?by=sold: %d", p.Status)
	}
	// The report's tables say which "refunded" each column is.
	if strings.Count(rep.Body, `<th scope="col">Refunded</th>`) != 0 || !strings.Contains(rep.Body, "Money refunded") ||
		!strings.Contains(rep.Body, "Tickets refunded") {
		t.Errorf("the report still has columns headed just Refunded")
	}

	// Chromium at 390 and 1280 px: the sales chart's labels at least 11 px
	// tall as drawn, over a scale of 2 to 4 labelled gridlines; the report,
	// the orders and an order's page fit.
	bctx := newBrowser(t, 2*time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(cabinetUser(t, f.Stack, f.URL, company, "chromium@philharmonia.test")),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#totals"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(f.URL+"/cabinet/report?from=2026-11-01&to=2026-11-30"), chromedp.WaitVisible(chromedp.CSS("#chart"))); err != nil {
		t.Fatal(err)
	}
	pageFits(t, bctx, "times-report", func(t *testing.T, width int64) {
		chartReadable(t, bctx, "#chart", "#chart-scale", "#chart-days", width)
	})
	if err := chromedp.Do(bctx, chromedp.Navigate(f.URL+"/cabinet/orders?by=paid&from=2026-11-28&to=2026-11-29"), chromedp.WaitVisible(chromedp.CSS("#orders"))); err != nil {
		t.Fatal(err)
	}
	pageFits(t, bctx, "times-orders", nil)
	if err := chromedp.Do(bctx, chromedp.Navigate(fmt.Sprintf("%s/cabinet/orders/%d", f.URL, made["b"].id)), chromedp.WaitVisible(chromedp.CSS("#timeline"))); err != nil {
		t.Fatal(err)
	}
	pageFits(t, bctx, "times-order", nil)
}

// rowOf is the order list's row of an order ("" none).
func rowOf(body string, id int64) string {
	i := strings.Index(body, fmt.Sprintf(`<tr data-order="%d"`, id))
	if i < 0 {
		return ""
	}
	return pageText(body[i : i+strings.Index(body[i:], "</tr>")])
}

// chartMeasure is what chartReadable measures of a chart in Chromium.
type chartMeasure struct {
	MinFont float64  `json:"minFont"`
	MinBox  float64  `json:"minBox"`
	Labels  int      `json:"labels"`
	Lines   int      `json:"lines"`
	Scale   []string `json:"scale"`
}

// chartReadable checks a chart (its plot's SVG, its scale's and its axis
// labels') as drawn at width: every label at least 11 px tall on screen, a
// scale of 2 to 4 gridlines each labelled with a value.
func chartReadable(t *testing.T, ctx context.Context, chart, scale, axis string, width int64) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[chartMeasure](fmt.Sprintf(`(() => {
		const texts = [%[1]q, %[2]q, %[3]q].flatMap(s => [...document.querySelectorAll(s + ' text')]);
		// The size as drawn: the font's computed size times the SVG's
		// scale on screen (1 without a viewBox).
		const drawn = t => {
			const m = t.getScreenCTM();
			return parseFloat(getComputedStyle(t).fontSize) * (m ? Math.hypot(m.a, m.b) : 1);
		};
		return {
			minFont: Math.min(...texts.map(drawn)),
			minBox: Math.min(...texts.map(t => t.getBoundingClientRect().height)),
			labels: texts.length,
			lines: document.querySelectorAll(%[1]q + ' line.grid').length,
			scale: Array.from(document.querySelectorAll(%[2]q + ' text'), t => t.textContent),
		};
	})()`, chart, scale, axis)))
	if err != nil {
		t.Fatalf("measure %s at %d px: %v", chart, width, err)
	}
	if got.Labels == 0 || got.MinFont < 11 || got.MinBox < 11 {
		t.Errorf("%s at %d px: labels %d, smallest %.1f px (box %.1f px)", chart, width, got.Labels, got.MinFont, got.MinBox)
	}
	if got.Lines < 2 || got.Lines > 4 || len(got.Scale) != got.Lines {
		t.Errorf("%s at %d px: %d gridlines, scale %q", chart, width, got.Lines, got.Scale)
	}
	for _, s := range got.Scale {
		if !regexp.MustCompile(`^\d+(\.\d+)?[kM]?$`).MatchString(s) {
			t.Errorf("%s at %d px: a scale label %q is no amount", chart, width, s)
		}
	}
}

package api_test

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/ticketsales/ticketsales/api/seatmapjs"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// bigHallCatalog is a 10,000-seat hall with Cyrillic names: stalls of
// 50 rows and a circle of 30 of 100 seats, two balconies of 10 rows; two
// categories, one priced with kopecks.
func bigHallCatalog() []byte {
	var b strings.Builder
	b.WriteString(`{"cities": [{"ref": "msk", "name": "Москва"}], "venues": [{"ref": "arena", "name": "Дворец", "city": "msk",
	  "timezone": "Europe/Moscow", "schemes": [{"ref": "big", "name": "Большой зал", "stage": {"label": "Сцена"}, "zones": [`)
	zones := []struct {
		id, name string
		rows     int
	}{{"parter", "Партер", 50}, {"amfi", "Амфитеатр", 30}, {"bl", "Балкон, левая сторона", 10}, {"br", "Балкон, правая сторона", 10}}
	for i, z := range zones {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id": %q, "name": %q, "rows": [`, z.id, z.name)
		for r := 1; r <= z.rows; r++ {
			if r > 1 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"row": "%d", "seats": 100}`, r)
		}
		b.WriteString("]}")
	}
	b.WriteString(`]}]}], "events": [{"ref": "gala", "title": "Гала-концерт", "slug": "gala", "status": "published",
	  "starts_at": "2030-01-01T19:00:00+03:00", "venue": "arena", "scheme": "big",
	  "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
	  "categories": [{"ref": "p", "name": "Партер", "price": 1250050, "zones": ["parter"]},
	    {"ref": "r", "name": "Остальные", "price": 350000, "zones": ["amfi", "bl", "br"]}]}]}`)
	return []byte(b.String())
}

// shopPage is the partner's test page: the component loaded from the
// service, its base-url the shop itself (the partner's own proxy), every
// event it sends recorded in window.seatmapEvents. Unstyled, under a
// policy that allows no styles: the component's own must still apply.
var shopPage = template.Must(template.New("shop").Parse(`<!doctype html>
<html lang="ru"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Магазин билетов: {{.Title}}</title>
<script>window.seatmapEvents = [];
for (const type of ['seatmap:ready', 'seatmap:change', 'seatmap:best-available', 'seatmap:error'])
  document.addEventListener(type, (e) => window.seatmapEvents.push({type, detail: e.detail, at: performance.now()}));
window.t0 = performance.now();</script>
<script src="{{.Script}}"></script></head>
<body><main><h1>{{.Title}}</h1>
<ticket-seat-map base-url="{{.Base}}" event-id="{{.Event}}" poll-interval="{{.Poll}}" max-seats="6"{{with .Token}} token="{{.}}"{{end}}></ticket-seat-map>
</main></body></html>`))

// seatMapShop serves the shop's page and proxies the component's two
// paths to /v1 with the shop's key, as a partner's server may: ETag and
// If-None-Match pass through, so a poll of an unchanged hall is a 304; a
// query string (since) is refused, counted in refused.
func seatMapShop(t *testing.T, service string, keys map[string]string, titles map[string]string, poll string, notModified, refused *atomic.Int64) string {
	t.Helper()
	mux := http.NewServeMux()
	var shop *httptest.Server
	// /shop/{event}: the component reads through this shop's proxy;
	// /shop/{event}?token=smt_…: from the service, with a seat map token.
	mux.HandleFunc("GET /shop/{event}", func(w http.ResponseWriter, r *http.Request) {
		ev, token := r.PathValue("event"), r.URL.Query().Get("token")
		base := shop.URL
		if token != "" {
			base = service
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// A strict policy: the component's styles must not need inline
		// <style>, and it may connect only to base-url.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline' "+service+"; connect-src "+base+"; style-src 'none'")
		_ = shopPage.Execute(w, map[string]string{"Title": titles[ev], "Script": service + seatmapjs.Path, "Base": base, "Event": ev, "Poll": poll, "Token": token})
	})
	mux.HandleFunc("GET /seat-map/v1/events/{event}/{what}", func(w http.ResponseWriter, r *http.Request) {
		ev, what := r.PathValue("event"), r.PathValue("what")
		key, ok := keys[ev]
		if !ok || (what != "scheme" && what != "availability") {
			http.NotFound(w, r)
			return
		}
		// A page may still pass a token to its own proxy: this one takes
		// "fresh" and refuses any other as the service refuses an expired one.
		if a := r.Header.Get("Authorization"); a != "" && a != "Bearer fresh" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"status": 401, "code": "unauthorized", "title": "Unauthorized"}`)
			return
		}
		// This proxy knows no query parameter and refuses them, as a
		// strict one may: the component must fall back to whole answers.
		if r.URL.RawQuery != "" {
			refused.Add(1)
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusUnprocessableEntity)
			_, _ = io.WriteString(w, `{"status": 422, "code": "validation_error", "title": "Unknown query parameter"}`)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, service+"/v1/events/"+ev+"/"+what, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if v := r.Header.Get("If-None-Match"); v != "" {
			req.Header.Set("If-None-Match", v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for _, h := range []string{"Content-Type", "ETag", "Cache-Control"} {
			if v := res.Header.Get(h); v != "" {
				w.Header().Set(h, v)
			}
		}
		if res.StatusCode == http.StatusNotModified {
			notModified.Add(1)
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	})
	shop = httptest.NewServer(mux)
	t.Cleanup(shop.Close)
	return shop.URL
}

// mapState is what the test reads of the component.
type mapState struct {
	Seats     int      `json:"seats"`
	Unnamed   int      `json:"unnamed"`
	Free      int      `json:"free"`
	Disabled  int      `json:"disabled"`
	Names     []string `json:"names"`
	Legend    []string `json:"legend"`
	Focused   string   `json:"focused"`
	Tabbable  int      `json:"tabbable"`
	Overflow  bool     `json:"overflow"`
	MapHeight float64  `json:"mapHeight"`
}

const readMap = `(() => {
  const m = document.querySelector('ticket-seat-map'), r = m.shadowRoot;
  const seats = r.querySelectorAll('circle[role=checkbox]');
  const a = r.activeElement;
  return {
    seats: seats.length,
    unnamed: Array.from(seats).filter(c => !/, \S+ \S+, \S+ \S+/.test(c.getAttribute('aria-label') || '')).length,
    free: r.querySelectorAll('circle.f').length,
    disabled: r.querySelectorAll('circle[aria-disabled=true]').length,
    names: Array.from(seats).slice(0, 3).map(c => c.getAttribute('aria-label')),
    legend: Array.from(r.querySelectorAll('.legend li'), li => li.textContent),
    focused: document.activeElement === m && a ? (a.getAttribute('aria-label') || a.tagName) : '',
    tabbable: r.querySelectorAll('[tabindex="0"]').length,
    overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
    mapHeight: r.querySelector('svg').getBoundingClientRect().height,
  };
})()`

// seatLabel is a seat's accessible name, by seat_id.
func seatLabel(seatID string) string {
	return `(Array.from(document.querySelector('ticket-seat-map').shadowRoot.querySelectorAll('circle'))
	  .find(c => c._seat && c._seat.id === ` + strconv.Quote(seatID) + `) || {getAttribute: () => ''}).getAttribute('aria-label')`
}

type seatMapEvent struct {
	Type   string `json:"type"`
	Detail struct {
		Seats []struct {
			ZoneID     string `json:"zone_id"`
			SeatID     string `json:"seat_id"`
			Label      string `json:"label"`
			CategoryID int64  `json:"category_id"`
			Price      struct {
				Amount   int64  `json:"amount"`
				Currency string `json:"currency"`
			} `json:"price"`
		} `json:"seats"`
		Total struct {
			Amount int64 `json:"amount"`
		} `json:"total"`
		Reason  string `json:"reason"`
		Dropped []struct {
			SeatID string `json:"seat_id"`
		} `json:"dropped"`
		Quantity int `json:"quantity"`
		Status   int `json:"status"`
	} `json:"detail"`
	At float64 `json:"at"`
}

// TestSeatMapComponent puts <ticket-seat-map> on a partner's page in
// headless Chromium against the sandbox stack, in proxy mode: the demo
// hall and a 10,000-seat hall draw at 1280 and 390 px without the page
// scrolling sideways and pass the WCAG A/AA check; every seat has an
// accessible name with its price; one Tab reaches the map, arrows and
// Enter pick a seat and the page's handler hears it; a hold of that seat
// through the API with another key turns it unavailable within one poll
// and drops it from the pick; best available asks the page.
func TestSeatMapComponent(t *testing.T) {
	f := newFixture(t)
	res := f.Get(t, seatmapjs.Path, "")
	if res.Status != 200 || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || res.Header.Get("ETag") == "" ||
		!strings.Contains(string(res.Body), "customElements.define('ticket-seat-map'") {
		t.Fatalf("GET %s: %d %v", seatmapjs.Path, res.Status, res.Header)
	}
	if again := f.Get(t, seatmapjs.Path, "", "If-None-Match: "+res.Header.Get("ETag")); again.Status != http.StatusNotModified {
		t.Fatalf("revalidate the script: %d", again.Status)
	}

	hallCompany := f.Company(t, "Hall")
	f.Import(t, hallCompany, bigHallCatalog())
	hallKey, _ := f.Key(t, hallCompany, apikey.Sandbox)
	var bigID int64
	if err := f.DB.QueryRow("SELECT id FROM events WHERE company_id = ? AND slug = 'gala'", hallCompany).Scan(&bigID); err != nil {
		t.Fatal(err)
	}
	demo, big := strconv.FormatInt(f.ids["swan-lake"], 10), strconv.FormatInt(bigID, 10)
	const poll = 1.0 // seconds
	var notModified, refused atomic.Int64
	shop := seatMapShop(t, f.URL, map[string]string{demo: f.keyA, big: hallKey},
		map[string]string{demo: "Лебединое озеро", big: "Гала-концерт"}, strconv.FormatFloat(poll, 'f', -1, 64), &notModified, &refused)

	ctx := newBrowser(t, 4*time.Minute)
	var ready func(event string, seats, free int) mapState
	open := func(event string, seats int) mapState {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(shop+"/shop/"+event)); err != nil {
			t.Fatal(err)
		}
		return ready(event, seats, seats)
	}
	ready = func(event string, seats, free int) mapState {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.seatmapEvents.some(e => e.type === 'seatmap:ready' || e.type === 'seatmap:error')`,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the map of event %s never got ready: %v", event, err)
		}
		evs, err := chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents`))
		if err != nil || len(evs) == 0 || evs[0].Type != "seatmap:ready" {
			t.Fatalf("event %s: %+v %v", event, evs, err)
		}
		drawn, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.seatmapEvents[0].at - window.t0`))
		st, err := chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("event %s: %d seats drawn %.0f ms after the page's first script", event, st.Seats, drawn)
		if st.Seats != seats || st.Unnamed != 0 || st.Free != free || st.Tabbable != 1 || st.MapHeight < 250 {
			t.Fatalf("event %s drawn: %+v, want %d seats, %d free, one tab stop", event, st, seats, free)
		}
		return st
	}

	// The demo hall.
	st := open(demo, 96)
	if st.Names[0] != "Stalls, ряд 1, место 1, 3\u00a0000\u00a0₽" {
		t.Fatalf("a seat's accessible name: %q", st.Names[0])
	}
	if strings.Join(st.Legend, "|") != "Stalls: 3\u00a0000\u00a0₽|Balcony: 1\u00a0500\u00a0₽|Выбрано|Недоступно|Забронировано для вас" {
		t.Fatalf("legend: %q", st.Legend)
	}
	pageFitsIn(t, ctx, "seatmap", "demo", nil)
	panFrames(t, ctx, "the demo hall")

	// The page passes the event's categories (its server reads them with
	// its key): the legend names them and, the fee being on top, shows
	// what a buyer pays per ticket.
	cats := f.Get(t, "/v1/events/"+demo+"/categories", f.keyA)
	if cats.Status != 200 {
		t.Fatalf("categories: %d %s", cats.Status, cats.Body)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').categories = (`+string(cats.Body)+`).data`)); err != nil {
		t.Fatal(err)
	}
	st, _ = chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap))
	if strings.Join(st.Legend[:2], "|") != "Stalls: 3\u00a0300\u00a0₽ (со сбором)|Balcony: 1\u00a0650\u00a0₽ (со сбором)" ||
		st.Names[0] != "Stalls, ряд 1, место 1, 3\u00a0300\u00a0₽" {
		t.Fatalf("with the categories: legend %q, a seat %q", st.Legend, st.Names[0])
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').categories = []`)); err != nil {
		t.Fatal(err)
	}

	// One Tab into the map, ArrowRight, Enter: a pick the page hears.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
		t.Fatal(err)
	}
	st, _ = chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap))
	if st.Focused != "Stalls, ряд 1, место 15, 3\u00a0000\u00a0₽" {
		dbg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => { const r = document.querySelector('ticket-seat-map').shadowRoot; return [r.activeElement && r.activeElement.outerHTML.slice(0, 200), Array.from(r.querySelectorAll('[tabindex]'), e => e.outerHTML.slice(0, 200)).join(' ;; ')].join(' || '); })()`))
		t.Fatalf("Tab focused %q, want the front row's middle seat (%s)", st.Focused, dbg)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowUp), chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	evs, err := chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents.filter(e => e.type === 'seatmap:change')`))
	if err != nil || len(evs) != 1 {
		t.Fatalf("after Enter the page heard %+v (%v)", evs, err)
	}
	if d := evs[0].Detail; d.Reason != "pick" || len(d.Seats) != 1 || d.Seats[0].SeatID != "parterre-1-16" || d.Seats[0].ZoneID != "parterre" ||
		d.Seats[0].Price.Amount != 300000 || d.Seats[0].Label != "Stalls, ряд 1, место 16, 3\u00a0000\u00a0₽" || d.Total.Amount != 300000 {
		t.Fatalf("the pick: %+v", d)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('ticket-seat-map').shadowRoot.activeElement.getAttribute('aria-checked')`)); got != "true" {
		t.Fatalf("the picked seat is aria-checked=%q", got)
	}
	shot(t, ctx, "demo-picked")

	// Another shop's key holds that seat: within one poll it is unavailable
	// and leaves the pick, and the page hears why.
	// From here every seat element the component touches is counted.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.touched = new Set(); new MutationObserver(ms => ms.forEach(m => m.target.tagName === 'circle' && window.touched.add(m.target)))
	  .observe(document.querySelector('ticket-seat-map').shadowRoot, {attributes: true, subtree: true})`)); err != nil {
		t.Fatal(err)
	}
	other, _ := f.Key(t, f.companyA, apikey.Sandbox)
	if r := f.reserve(t, other, "parterre-1-16"); r.Status != 201 {
		t.Fatalf("hold elsewhere: %d %s", r.Status, r.Body)
	}
	held := time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](seatLabel("parterre-1-16")+`.endsWith('недоступно')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Duration((poll+1.5)*float64(time.Second))))); err != nil {
		label, _ := chromedp.Run(ctx, chromedp.Evaluate[string](seatLabel("parterre-1-16")))
		t.Fatalf("a seat held elsewhere still reads %q %v after %v (poll %vs)", label, err, time.Since(held), poll)
	}
	t.Logf("a seat held elsewhere turned unavailable after %v (poll every %vs)", time.Since(held).Round(time.Millisecond), poll)
	evs, _ = chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents.filter(e => e.type === 'seatmap:change')`))
	if len(evs) != 2 || evs[1].Detail.Reason != "taken" || len(evs[1].Detail.Seats) != 0 || len(evs[1].Detail.Dropped) != 1 ||
		evs[1].Detail.Dropped[0].SeatID != "parterre-1-16" {
		t.Fatalf("after the hold elsewhere the page heard %+v", evs)
	}
	st, _ = chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap))
	if st.Free != 95 || st.Disabled != 1 {
		t.Fatalf("after one hold: %+v", st)
	}
	// One seat changed, one seat repainted; the polls after it are 304s
	// that repaint nothing.
	polls304, refusals := notModified.Load(), refused.Load()
	time.Sleep(time.Duration(2.2 * poll * float64(time.Second)))
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`window.touched.size`)); n != 1 || notModified.Load() < polls304+2 {
		t.Fatalf("one seat held elsewhere repainted %d seats; %d polls answered 304 before, %d after", n, polls304, notModified.Load())
	}
	// This proxy refuses since: the page's map asked with it once, then
	// polled without it (the whole list on a change, as above).
	if refusals != 1 || refused.Load() != refusals {
		t.Fatalf("the proxy refused since %d times, then %d; want once per page", refusals, refused.Load())
	}

	// Best available: the component asks the page (it holds nothing).
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const f = document.querySelector('ticket-seat-map').shadowRoot.querySelector('form.best');
	  f.quantity.value = '3'; f.querySelector('button').click(); })()`)); err != nil {
		t.Fatal(err)
	}
	evs, _ = chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents.filter(e => e.type === 'seatmap:best-available')`))
	if len(evs) != 1 || evs[0].Detail.Quantity != 3 {
		t.Fatalf("best available: %+v", evs)
	}
	// The page's server held the best seats: it shows them as the buyer's.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').markHeld([{zone_id: 'parterre', seat_id: 'parterre-2-15'}, {zone_id: 'parterre', seat_id: 'parterre-2-16'}])`)); err != nil {
		t.Fatal(err)
	}
	if label, _ := chromedp.Run(ctx, chromedp.Evaluate[string](seatLabel("parterre-2-15"))); label != "Stalls, ряд 2, место 15, 3\u00a0000\u00a0₽, забронировано для вас" {
		t.Fatalf("a seat held for the buyer reads %q", label)
	}
	shot(t, ctx, "demo-after-hold")

	// Down two rows from the seat taken (past one held for the buyer),
	// Space picks, Escape clears.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').shadowRoot.querySelector('circle[tabindex="0"]').focus()`),
		chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(" ")); err != nil {
		t.Fatal(err)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('ticket-seat-map').selectedSeats.map(s => s.seat_id).join()`)); got != "parterre-3-16" {
		t.Fatalf("after ArrowDown ArrowDown Space the pick is %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	evs, _ = chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents.filter(e => e.type === 'seatmap:change')`))
	if last := evs[len(evs)-1].Detail; last.Reason != "clear" || len(last.Seats) != 0 {
		t.Fatalf("after Escape the page heard %+v", last)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector('ticket-seat-map').shadowRoot.querySelectorAll('circle.p, circle[aria-checked=true]:not(.h)').length`)); got != 0 {
		t.Fatalf("after Escape %d seats still look picked", got)
	}

	// A token the proxy refuses: the page hears 401 and polling waits; a
	// fresh token resumes it at once.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').token = 'stale'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.seatmapEvents.some(e => e.type === 'seatmap:error' && e.detail.status === 401 && e.detail.code === 'unauthorized')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Duration((poll+1.5)*float64(time.Second))))); err != nil {
		t.Fatalf("a refused token: %v", err)
	}
	if r := f.reserve(t, other, "balcony-1-3"); r.Status != 201 {
		t.Fatalf("hold elsewhere: %d %s", r.Status, r.Body)
	}
	time.Sleep(time.Duration(1.5 * poll * float64(time.Second)))
	if label, _ := chromedp.Run(ctx, chromedp.Evaluate[string](seatLabel("balcony-1-3"))); strings.HasSuffix(label, "недоступно") {
		t.Fatalf("polled on with a refused token: %q", label)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').token = 'fresh'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](seatLabel("balcony-1-3")+`.endsWith('недоступно')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Second))); err != nil {
		t.Fatalf("a fresh token did not resume polling: %v", err)
	}

	// The 10,000-seat hall.
	st = open(big, 10_000)
	if st.Names[0] != "Партер, ряд 1, место 1, 12\u00a0500,50\u00a0₽" {
		t.Fatalf("a seat's accessible name: %q", st.Names[0])
	}
	pageFitsIn(t, ctx, "seatmap", "hall-10000", nil)
	panFrames(t, ctx, "10,000 seats")
	// Zoom in on a phone and pan by dragging: the view moves, the page does not.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').zoomIn()`)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(r => requestAnimationFrame(() => r(document.querySelector('ticket-seat-map').shadowRoot.querySelector('g.view').getAttribute('transform'))))`, chromedp.EvalAwaitPromise))
	box, _ := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const b = document.querySelector('ticket-seat-map').shadowRoot.querySelector('svg').getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; })()`))
	if len(box) != 2 {
		t.Fatal("no map box")
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent("mousePressed", box[0], box[1], chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseMoved", box[0]-40, box[1]-30, chromedp.ButtonLeft), chromedp.MouseEvent("mouseMoved", box[0]-80, box[1]-60, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseReleased", box[0]-80, box[1]-60, chromedp.ButtonLeft)); err != nil {
		t.Fatal(err)
	}
	after, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(r => requestAnimationFrame(() => r(document.querySelector('ticket-seat-map').shadowRoot.querySelector('g.view').getAttribute('transform'))))`, chromedp.EvalAwaitPromise))
	if before == "" || before == after {
		t.Fatalf("dragging did not pan: %q then %q", before, after)
	}
	// Two fingers apart zoom in; the wheel towards the user zooms out.
	scales, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`new Promise(done => {
	  const m = document.querySelector('ticket-seat-map'), svg = m.shadowRoot.querySelector('svg'), b = svg.getBoundingClientRect();
	  const cx = b.left + b.width / 2, cy = b.top + b.height / 2, scales = [m._view.s];
	  const p = (type, id, x, y) => svg.dispatchEvent(new PointerEvent(type, {pointerId: id, pointerType: 'touch', clientX: x, clientY: y, bubbles: true, isPrimary: id === 1}));
	  p('pointerdown', 1, cx - 20, cy); p('pointerdown', 2, cx + 20, cy);
	  for (let i = 1; i <= 5; i++) { p('pointermove', 1, cx - 20 - 10 * i, cy); p('pointermove', 2, cx + 20 + 10 * i, cy); }
	  p('pointerup', 1, cx - 70, cy); p('pointerup', 2, cx + 70, cy);
	  scales.push(m._view.s);
	  svg.dispatchEvent(new WheelEvent('wheel', {deltaY: 200, clientX: cx, clientY: cy, bubbles: true, cancelable: true}));
	  scales.push(m._view.s);
	  requestAnimationFrame(() => done(scales));
	})`, chromedp.EvalAwaitPromise))
	if err != nil || len(scales) != 3 || !(scales[1] > scales[0]*2) || !(scales[2] < scales[1]) {
		t.Fatalf("pinch and wheel: scales %v (%v)", scales, err)
	}
	st, _ = chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap))
	if st.Overflow {
		t.Fatal("after zoom and pan the phone's page scrolls sideways")
	}
	evs, _ = chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents.filter(e => e.type !== 'seatmap:ready')`))
	if len(evs) != 0 {
		t.Fatalf("panning sent %+v", evs)
	}
	shot(t, ctx, "hall-10000-phone-zoomed")

	// The service itself, with a seat map token the shop's server made:
	// the page is on the shop's origin, the reads cross to the service
	// (CORS, the ETag exposed).
	made := f.Do(t, http.MethodPost, "/v1/events/"+demo+"/seat-map-tokens", f.keyA, `{"ttl_minutes": 5}`)
	var tok struct{ Data struct{ Token string } }
	made.Decode(t, &tok)
	if made.Status != 201 || !strings.HasPrefix(tok.Data.Token, "smt_") {
		t.Fatalf("seat map token: %d %s", made.Status, made.Body)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(shop+"/shop/"+demo+"?token="+tok.Data.Token)); err != nil {
		t.Fatal(err)
	}
	ready(demo, 96, 96-2) // two seats held elsewhere above
	// The reads go to the service itself, which answers a poll that names
	// its ETag as since with the changed seats alone: the page records
	// what each poll asked and was told.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const f = window.fetch; window.polls = [];
	  window.fetch = async (u, o) => { const r = await f(u, o); const p = {url: String(u), status: r.status};
	    window.polls.push(p); if (r.status === 200) { const d = (await r.clone().json()).data; p.since = d.since || ''; p.seats = d.seats.length; }
	    return r; }; })()`)); err != nil {
		t.Fatal(err)
	}
	if r := f.reserve(t, other, "balcony-1-5"); r.Status != 201 {
		t.Fatalf("hold elsewhere: %d %s", r.Status, r.Body)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](seatLabel("balcony-1-5")+`.endsWith('недоступно')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Duration((poll+1.5)*float64(time.Second))))); err != nil {
		t.Fatalf("with a token, a seat held elsewhere did not turn unavailable: %v", err)
	}
	type pollSeen struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
		Since  string `json:"since"`
		Seats  int    `json:"seats"`
	}
	polls, _ := chromedp.Run(ctx, chromedp.Evaluate[[]pollSeen](`window.polls`))
	var changes []pollSeen
	for _, p := range polls {
		if !strings.Contains(p.URL, "/availability?since=") {
			t.Fatalf("a poll of the service without since: %+v", p)
		}
		if p.Status == http.StatusOK {
			changes = append(changes, p)
		}
	}
	if len(changes) != 1 || changes[0].Since == "" || changes[0].Seats != 1 || !strings.HasSuffix(changes[0].URL, "since="+changes[0].Since) {
		t.Fatalf("the polls after one hold elsewhere: %+v; want one answered with that seat alone", polls)
	}
	if st, _ := chromedp.Run(ctx, chromedp.Evaluate[mapState](readMap)); st.Seats != 96 || st.Free != 96-3 || st.Disabled != 3 {
		t.Fatalf("after a poll answered with one changed seat: %+v; want 93 free, 3 unavailable", st)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').token = 'smt_not-one'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.seatmapEvents.some(e => e.type === 'seatmap:error' && e.detail.status === 401 && e.detail.code === 'seat_map_token_invalid')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Duration((poll+1.5)*float64(time.Second))))); err != nil {
		evs, _ := chromedp.Run(ctx, chromedp.Evaluate[[]seatMapEvent](`window.seatmapEvents`))
		t.Fatalf("a token the service refuses: %v %+v", err, evs)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('ticket-seat-map').token = `+strconv.Quote(tok.Data.Token))); err != nil {
		t.Fatal(err)
	}
	if r := f.reserve(t, other, "balcony-1-6"); r.Status != 201 {
		t.Fatalf("hold elsewhere: %d %s", r.Status, r.Body)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](seatLabel("balcony-1-6")+`.endsWith('недоступно')`,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Duration((poll+1.5)*float64(time.Second))))); err != nil {
		t.Fatalf("a fresh token did not resume polling: %v", err)
	}
	shot(t, ctx, "demo-token")
}

// panFrames drags the map for 60 animation frames (testenv.SeatMapPan, as
// make bench measures them) and logs the frames' times: panning moves one
// group's transform, so they should not grow with the seats.
func panFrames(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	f, err := testenv.SeatMapPan(ctx, 0, 60, false)
	if err != nil || len(f.Pan) == 0 {
		t.Fatalf("pan frames: %v", err)
	}
	gaps := slices.Sorted(slices.Values(f.Pan))
	t.Logf("%s, panning: median frame %.1f ms, slowest %.1f ms (%d frames, headless, no GPU)", what, gaps[len(gaps)/2], gaps[len(gaps)-1], len(gaps))
}

// shot saves a screenshot of the page to .data/artifacts/seatmap/name.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	testenv.Screenshot(t, ctx, "seatmap", name)
}

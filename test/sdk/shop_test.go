package sdk_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
	"github.com/ticketsales/ticketsales/sdk/go/examples/shop"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// shopTitle is the shop's event: 80 characters, in Russian.
const shopTitle = "Гала-концерт «Десять тысяч голосов»: симфонический оркестр и хор, вечер в Москве"

// exampleShop serves the example shop (sdk/go/examples/shop) for a hall of
// 300 seats in six zones (testenv.ZonedHallCatalog, the title shopTitle)
// from a sandbox key of its own company. The shop's SDK calls go through
// contractProxy, so every answer it reads is checked against the
// document; the buyer's browser reads the service directly.
func exampleShop(t *testing.T) (s *testenv.Stack, key string, event int64, shopURL string) {
	t.Helper()
	if len([]rune(shopTitle)) != 80 {
		t.Fatalf("the title has %d characters", len([]rune(shopTitle)))
	}
	s = testenv.NewStack(t)
	s.StartWorker(t)
	company := s.Company(t, "Shop")
	catalog := strings.Replace(string(testenv.ZonedHallCatalog(6, 5, 10)), "Гала-концерт «Десять тысяч голосов»", shopTitle, 1)
	s.Import(t, company, []byte(catalog))
	key, _ = s.Key(t, company, apikey.Sandbox)
	c, err := ticketsales.New(contractProxy(t, s.URL), key)
	if err != nil {
		t.Fatal(err)
	}
	for e, err := range c.Events(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Title == shopTitle {
			event = e.Id
		}
	}
	if event == 0 {
		t.Fatal("the shop's event is not listed")
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := httptest.NewServer((&shop.Shop{Tickets: c, ServiceURL: s.URL, EventID: event, Log: log}).Handler())
	t.Cleanup(srv.Close)
	return s, key, event, srv.URL
}

// reservedSeats are the event's seats not free, as the API tells.
func reservedSeats(t *testing.T, s *testenv.Stack, key string, event int64) []string {
	t.Helper()
	res := s.Get(t, "/v1/events/"+itoa(event)+"/availability", key)
	if res.Status != http.StatusOK {
		t.Fatalf("availability: %d %s", res.Status, res.Body)
	}
	var a struct {
		Data struct {
			Seats []struct {
				SeatID string `json:"seat_id"`
				Status string `json:"status"`
			} `json:"seats"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &a); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, st := range a.Data.Seats {
		if st.Status != "free" {
			out = append(out, st.SeatID)
		}
	}
	slices.Sort(out)
	return out
}

// shopPage is what the test reads of the shop's page.
type shopPage struct {
	Title    string   `json:"title"`
	When     string   `json:"when"`
	Status   string   `json:"status"`
	Free     int      `json:"free"`
	HeldMap  []string `json:"heldMap"`
	Held     []string `json:"held"`
	Tickets  []string `json:"tickets"`
	Links    []string `json:"links"`
	PayLink  string   `json:"payLink"`
	Total    string   `json:"total"`
	Overflow bool     `json:"overflow"`
}

const readShop = `(() => {
  const r = document.querySelector('ticket-seat-map').shadowRoot;
  const texts = (sel) => Array.from(document.querySelectorAll(sel), (e) => e.textContent.trim());
  return {
    title: document.querySelector('h1').textContent,
    when: document.querySelector('.when').textContent,
    status: document.getElementById('status').textContent,
    free: r ? r.querySelectorAll('circle.f').length : 0,
    heldMap: r ? Array.from(r.querySelectorAll('circle.h'), (c) => c._seat.id).sort() : [],
    held: document.getElementById('held').hidden ? [] : texts('#held-seats li'),
    tickets: document.getElementById('tickets').hidden ? [] : texts('#ticket-list li'),
    links: Array.from(document.querySelectorAll('#ticket-list a'), (a) => a.href),
    payLink: document.getElementById('pay').hidden ? '' : document.getElementById('pay-link').href,
    total: document.getElementById('held-total').textContent,
    overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
})()`

// TestExampleShop is docs/example-shop.md end to end, as a buyer does it
// in headless Chromium: the shop's page draws the hall from the service
// with its seat map token; the map's best-available button holds three
// seats through the shop's server; picking two seats on the map and
// holding them replaces those (the three go back on sale); the buyer's
// details order the hold; the payment page, in a new tab, takes the
// payment; and the shop's page shows the two tickets. The service agrees
// at every step, the page fits 1280 and 390 px without scrolling sideways
// and passes the WCAG A/AA check, and screenshots go to
// .data/artifacts/shop.
func TestExampleShop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stack and Chromium")
	}
	s, key, event, shopURL := exampleShop(t)
	ctx := testenv.Browser(t, 4*time.Minute)
	read := func() shopPage {
		t.Helper()
		p, err := chromedp.Run(ctx, chromedp.Evaluate[shopPage](readShop))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	waitFor := func(what, cond string) shopPage {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond),
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("%s: %v; the page: %+v", what, err, read())
		}
		return read()
	}
	const mapDrawn = `(() => { const r = document.querySelector('ticket-seat-map').shadowRoot; return !!r && r.querySelectorAll('circle.f').length > 0; })()`
	shadow := func(sel string) string {
		return `document.querySelector('ticket-seat-map').shadowRoot.querySelector(` + jsString(sel) + `)`
	}
	// clickOn clicks the middle of an element as a mouse does (chromedp's
	// node queries do not reach into the map's shadow DOM).
	clickOn := func(element string) {
		t.Helper()
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => { const e = `+element+`;
		  e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`))
		if err != nil || len(at) != 2 {
			t.Fatalf("find %s: %v", element, err)
		}
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(at[0], at[1])); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(shopURL)); err != nil {
		t.Fatal(err)
	}
	p := waitFor("the hall is drawn", mapDrawn)
	t.Logf("the shop's page drew the hall %s after the navigation", time.Since(start).Round(time.Millisecond))
	// 19:00 UTC is 22:00 at the venue, in Moscow.
	if p.Title != shopTitle || !strings.HasPrefix(p.When, "Tue 1 January 2030, 22:00 MSK · Арена") || p.Free != 300 || p.Overflow {
		t.Fatalf("the page at 1280 px: %+v", p)
	}
	if v := testenv.AxeViolations(t, ctx); len(v) > 0 {
		t.Fatalf("the shop's page breaks WCAG A/AA rules:\n%s", strings.Join(v, "\n"))
	}

	// The map's best available, three seats: the shop holds them.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](shadow(`form.best input[name=quantity]`)+`.value = '3'`)); err != nil {
		t.Fatal(err)
	}
	clickOn(shadow(`form.best button`))
	p = waitFor("the best three held", `document.querySelectorAll('#held-seats li').length === 3 && !document.getElementById('held').hidden`)
	best := reservedSeats(t, s, key, event)
	if len(best) != 3 || !slices.Equal(p.HeldMap, best) {
		t.Fatalf("best available: the service has %v reserved, the map shows %v held (%+v)", best, p.HeldMap, p)
	}

	// The buyer picks two other seats on the map with the mouse and holds
	// them instead: the shop replaces the hold's seats in one step.
	picks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelector('ticket-seat-map').shadowRoot
	  .querySelectorAll('circle.f'), (c) => c._seat.id).slice(-2)`))
	if err != nil || len(picks) != 2 {
		t.Fatalf("two free seats to pick: %v %v", picks, err)
	}
	for _, id := range picks {
		sel := `Array.from(document.querySelector('ticket-seat-map').shadowRoot.querySelectorAll('circle.f')).find((c) => c._seat.id === ` + jsString(id) + `)`
		clickOn(sel)
	}
	waitFor("two seats picked", `!document.getElementById('hold').disabled && /^2 picked/.test(document.getElementById('picked-text').textContent)`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("hold"))); err != nil {
		t.Fatal(err)
	}
	p = waitFor("the picked two held", `document.querySelectorAll('#held-seats li').length === 2`)
	slices.Sort(picks)
	if got := reservedSeats(t, s, key, event); !slices.Equal(got, picks) || !slices.Equal(p.HeldMap, picks) {
		t.Fatalf("after holding the picks %v: the service has %v reserved, the map %v held", picks, got, p.HeldMap)
	}
	testenv.Screenshot(t, ctx, "shop", "held-1280")

	// The buyer's details, in Russian; the order waits for payment.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("email"), "anna.pavlova@example.com"),
		chromedp.SendKeys(chromedp.ID("first_name"), "Анна"),
		chromedp.SendKeys(chromedp.ID("last_name"), "Павлова-Щербакова"),
		chromedp.SendKeys(chromedp.ID("phone"), "+7 999 123-45-67"),
		chromedp.Click(chromedp.ID("order"))); err != nil {
		t.Fatal(err)
	}
	p = waitFor("the payment link", `!document.getElementById('pay').hidden`)
	if !strings.HasPrefix(p.PayLink, s.URL+"/pay/") {
		t.Fatalf("the payment link %q is not the sandbox's payment page", p.PayLink)
	}

	// The payment page, in a tab of its own: Pay.
	payTab, closePay := chromedp.NewContext(ctx)
	if err := chromedp.Do(payTab, chromedp.Navigate(p.PayLink)); err != nil {
		t.Fatalf("open %s: %v", p.PayLink, err)
	}
	if _, err := chromedp.RunResponse(payTab, chromedp.Click(chromedp.ID("pay"))); err != nil {
		t.Fatalf("pay on %s: %v", p.PayLink, err)
	}
	if _, err := chromedp.Run(payTab, chromedp.Poll[bool](`(document.getElementById('result') || {textContent: ''}).textContent.includes('Payment accepted')`,
		chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("pay on %s: %v", p.PayLink, err)
	}
	closePay()

	// Back in the shop's tab, the tickets show up.
	p = waitFor("the tickets", `!document.getElementById('tickets').hidden`)
	t.Logf("from the page's first load to the tickets on it: %s", time.Since(start).Round(time.Millisecond))
	if len(p.Tickets) != 2 || len(p.Links) != 2 || !strings.HasPrefix(p.Status, "Paid") {
		t.Fatalf("the tickets on the page: %+v", p)
	}
	for _, l := range p.Links {
		if !regexp.MustCompile(`/o/\d+\?access_token=`).MatchString(l) {
			t.Errorf("a ticket links to %q, not the buyer's page", l)
		}
	}
	testenv.Screenshot(t, ctx, "shop", "paid-1280")

	// The service: one paid order of the two seats, with the shop's
	// reference and metadata, at the total the page showed.
	orders := s.Get(t, "/v1/orders?filter.metadata=shop:example", key)
	var list struct {
		Data []struct {
			ID        int64             `json:"id"`
			Status    string            `json:"status"`
			Reference string            `json:"reference"`
			Metadata  map[string]string `json:"metadata"`
			Amount    struct {
				Amount int64 `json:"amount"`
			} `json:"amount"`
			Customer struct {
				LastName string `json:"last_name"`
			} `json:"customer"`
		} `json:"data"`
	}
	if err := json.Unmarshal(orders.Body, &list); err != nil || len(list.Data) != 1 {
		t.Fatalf("the shop's orders: %s (%v)", orders.Body, err)
	}
	o := list.Data[0]
	if o.Status != "paid" || !strings.HasPrefix(o.Reference, "cart-") || o.Customer.LastName != "Павлова-Щербакова" {
		t.Fatalf("the order: %+v", o)
	}
	tickets := s.Get(t, "/v1/orders/"+itoa(o.ID)+"/tickets", key)
	var issued struct {
		Data []struct {
			Seat struct {
				SeatID string `json:"seat_id"`
			} `json:"seat"`
		} `json:"data"`
	}
	if err := json.Unmarshal(tickets.Body, &issued); err != nil {
		t.Fatal(err)
	}
	var seats []string
	for _, tk := range issued.Data {
		seats = append(seats, tk.Seat.SeatID)
	}
	slices.Sort(seats)
	if !slices.Equal(seats, picks) {
		t.Fatalf("tickets for %v, the buyer picked %v", seats, picks)
	}
	if got := reservedSeats(t, s, key, event); !slices.Equal(got, picks) {
		t.Fatalf("seats not free after the sale: %v, want only the sold %v (the best three went back on sale)", got, picks)
	}

	// A phone, the page reloaded: it fits 390 px and passes the check.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile), chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor("the hall on a phone", mapDrawn)
	// The cart is the buyer's (its cookie): the page shows its order again.
	p = waitFor("the tickets after a reload", `!document.getElementById('tickets').hidden`)
	if p.Overflow || p.Free != 298 || len(p.Tickets) != 2 {
		t.Fatalf("the page at 390 px: %+v", p)
	}
	if v := testenv.AxeViolations(t, ctx); len(v) > 0 {
		t.Fatalf("the shop's page at 390 px breaks WCAG A/AA rules:\n%s", strings.Join(v, "\n"))
	}
	testenv.Screenshot(t, ctx, "shop", "hall-390")
}

// shopBuyer is one buyer's browser for the shop's JSON calls: a cookie
// jar of its own, so a cart of its own.
type shopBuyer struct {
	t    *testing.T
	url  string
	http *http.Client
}

// newShopBuyer opens the shop's page first, as a browser does: the cart's
// cookie comes with it.
func newShopBuyer(t *testing.T, shopURL string) *shopBuyer {
	jar, _ := cookiejar.New(nil)
	b := &shopBuyer{t: t, url: shopURL, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	res, err := b.http.Get(shopURL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if u, _ := url.Parse(shopURL); res.StatusCode != http.StatusOK || len(jar.Cookies(u)) != 1 {
		t.Fatalf("the shop's page: %d, cookies %v", res.StatusCode, jar.Cookies(u))
	}
	return b
}

// call sends body (JSON unless contentType says otherwise; GET when body
// is empty) and decodes the answer, which must be JSON, and problem+json
// when it is a refusal.
func (b *shopBuyer) call(path, contentType, body string) (int, map[string]any) {
	b.t.Helper()
	var res *http.Response
	var err error
	if body == "" {
		res, err = b.http.Get(b.url + path)
	} else {
		res, err = b.http.Post(b.url+path, contentType, strings.NewReader(body))
	}
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		b.t.Fatalf("%s answered %d, not JSON: %s", path, res.StatusCode, raw)
	}
	if res.StatusCode >= 400 && res.Header.Get("Content-Type") != "application/problem+json" {
		b.t.Errorf("%s answered %d as %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	return res.StatusCode, m
}

func (b *shopBuyer) post(path, body string) (int, map[string]any) {
	b.t.Helper()
	return b.call(path, "application/json", body)
}

func shopSeats(ids ...string) string {
	var out []string
	for _, id := range ids {
		out = append(out, `{"zone_id": "z1", "seat_id": "`+id+`"}`)
	}
	return `{"seats": [` + strings.Join(out, ", ") + `]}`
}

// shopOrders are the service's orders made by the example shop.
func shopOrders(t *testing.T, s *testenv.Stack, key string) []struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
} {
	t.Helper()
	res := s.Get(t, "/v1/orders?filter.metadata=shop:example", key)
	var list struct {
		Data []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &list); err != nil || res.Status != http.StatusOK {
		t.Fatalf("the shop's orders: %d %s (%v)", res.Status, res.Body, err)
	}
	return list.Data
}

const shopBuyerDetails = `{"email": "anna@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "+7 999 123-45-67"}`

// TestExampleShopRefusesBadInput: the shop's calls answer problem+json to
// what they cannot take and hold nothing; the service's refusals a buyer
// can act on come back as they are (seat_taken with the seat named, the
// fields of validation_error), and a refused change keeps what the buyer
// had.
func TestExampleShopRefusesBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stack")
	}
	s, key, event, shopURL := exampleShop(t)
	buyer := newShopBuyer(t, shopURL)
	var seven []string
	for i := 1; i <= 7; i++ {
		seven = append(seven, "z1-1-"+itoa(int64(i)))
	}
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"form-encoded", "application/x-www-form-urlencoded", "seats=1", 415, "invalid_body"},
		{"not quite JSON's type", "application/jsonx", shopSeats("z1-1-1"), 415, "invalid_body"},
		{"not JSON", "application/json", "{", 400, "invalid_body"},
		{"two values", "application/json", shopSeats("z1-1-1") + shopSeats("z1-1-2"), 400, "invalid_body"},
		{"over 16 KB", "application/json", `{"seats": [], "x": "` + strings.Repeat("a", 17<<10) + `"}`, 413, "invalid_body"},
		{"an unknown member", "application/json", `{"seats": [{"zone_id": "z1", "seat_id": "z1-1-1"}], "event_id": 1}`, 400, "invalid_body"},
		{"nothing", "application/json", `{}`, 422, "invalid_hold"},
		{"no seats", "application/json", `{"seats": []}`, 422, "invalid_hold"},
		{"both", "application/json", `{"seats": [{"zone_id": "z1", "seat_id": "z1-1-1"}], "best_available": {"quantity": 1}}`, 422, "invalid_hold"},
		{"seven seats", "application/json", shopSeats(seven...), 422, "invalid_hold"},
		{"best of none", "application/json", `{"best_available": {"quantity": 0}}`, 422, "invalid_hold"},
		{"a seat the hall has not", "application/json", shopSeats("z1-99-1"), 422, "validation_error"},
	} {
		status, p := buyer.call("/api/hold", c.contentType, c.body)
		if status != c.status || p["code"] != c.code {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, p, c.status, c.code)
		}
	}
	if status, p := buyer.post("/api/order", shopBuyerDetails); status != http.StatusConflict || p["code"] != "no_hold" {
		t.Errorf("an order without a hold: %d %v", status, p)
	}
	if got := reservedSeats(t, s, key, event); len(got) != 0 {
		t.Fatalf("refused requests held %v", got)
	}

	// Another buyer holds z1-1-1 first: this buyer's hold of it is refused
	// with the seat named, and holds nothing.
	other := newShopBuyer(t, shopURL)
	if status, p := other.post("/api/hold", shopSeats("z1-1-1")); status != http.StatusOK {
		t.Fatalf("the other buyer's hold: %d %v", status, p)
	}
	status, p := buyer.post("/api/hold", shopSeats("z1-1-1", "z1-1-2"))
	if status != http.StatusConflict || p["code"] != "seat_taken" || !strings.Contains(mustJSON(t, p["unavailable_seats"]), `"z1-1-1"`) ||
		strings.Contains(mustJSON(t, p["unavailable_seats"]), `"z1-1-2"`) {
		t.Fatalf("a taken seat: %d %v", status, p)
	}
	if got := reservedSeats(t, s, key, event); !slices.Equal(got, []string{"z1-1-1"}) {
		t.Fatalf("after the refusal, reserved: %v", got)
	}

	// This buyer holds z1-1-3, then asks for z1-1-1 (taken) and z1-1-4
	// instead: refused, and z1-1-3 stays theirs.
	if status, p := buyer.post("/api/hold", shopSeats("z1-1-3")); status != http.StatusOK {
		t.Fatalf("hold z1-1-3: %d %v", status, p)
	}
	if status, p := buyer.post("/api/hold", shopSeats("z1-1-1", "z1-1-4")); status != http.StatusConflict || p["code"] != "seat_taken" {
		t.Fatalf("replace with a taken seat: %d %v", status, p)
	}
	if got := reservedSeats(t, s, key, event); !slices.Equal(got, []string{"z1-1-1", "z1-1-3"}) {
		t.Fatalf("after the refused replacement, reserved: %v", got)
	}

	// The other buyer asks for the best available seat instead of z1-1-1:
	// they get one, and z1-1-1 goes back on sale.
	if status, p := other.post("/api/hold", `{"best_available": {"quantity": 1}}`); status != http.StatusOK || len(p["seats"].([]any)) != 1 {
		t.Fatalf("best available over a hold: %d %v", status, p)
	}
	got := reservedSeats(t, s, key, event)
	if len(got) != 2 || slices.Contains(got, "z1-1-1") || !slices.Contains(got, "z1-1-3") {
		t.Fatalf("after best available over z1-1-1, reserved: %v", got)
	}

	// Invalid details: the shop's own check of the address (the SDK's),
	// the service's of the phone; the hold stays.
	for field, body := range map[string]string{
		"email": `{"email": "not an email", "first_name": "Анна", "last_name": "Павлова", "phone": "+79991234567"}`,
		"phone": `{"email": "anna@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "call me"}`,
	} {
		status, p := buyer.post("/api/order", body)
		if status != http.StatusUnprocessableEntity || p["code"] != "validation_error" || !strings.Contains(mustJSON(t, p["errors"]), `"body.customer.`+field+`"`) {
			t.Fatalf("an invalid %s: %d %v", field, status, p)
		}
	}
	if got := reservedSeats(t, s, key, event); !slices.Contains(got, "z1-1-3") {
		t.Fatalf("after the refused orders, reserved: %v", got)
	}

	// The details corrected (a new request, though the service kept the
	// refusal), the order is made; a click again gets the same order.
	status, p = buyer.post("/api/order", shopBuyerDetails)
	again, p2 := buyer.post("/api/order", shopBuyerDetails)
	if status != http.StatusOK || p["status"] != "pending_payment" || p["payment_url"] == nil {
		t.Fatalf("the corrected order: %d %v", status, p)
	}
	if again != http.StatusOK || p2["order_id"] != p["order_id"] {
		t.Fatalf("the order again: %d %v, first %v", again, p2, p)
	}
	if orders := shopOrders(t, s, key); len(orders) != 1 {
		t.Fatalf("orders made: %+v", orders)
	}

	// The cart's orders are the buyer's: another cart sees none of them.
	if status, p := buyer.call("/api/orders", "", ""); status != http.StatusOK || len(p["orders"].([]any)) != 1 {
		t.Fatalf("the buyer's orders: %d %v", status, p)
	}
	if status, p := other.call("/api/orders", "", ""); status != http.StatusOK || len(p["orders"].([]any)) != 0 {
		t.Fatalf("another cart's orders: %d %v", status, p)
	}
}

// TestExampleShopCartRaces: a buyer's clicks racing each other (eight
// holds of the same seats at once, then eight orders) hold once and order
// once, while another buyer races for one of the seats.
func TestExampleShopCartRaces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the stack")
	}
	s, key, event, shopURL := exampleShop(t)
	buyer, rival := newShopBuyer(t, shopURL), newShopBuyer(t, shopURL)
	const n = 8
	var wg sync.WaitGroup
	statuses := make([]int, n+1)
	for i := range n {
		wg.Go(func() { statuses[i], _ = buyer.post("/api/hold", shopSeats("z1-2-5", "z1-2-6")) })
	}
	wg.Go(func() { statuses[n], _ = rival.post("/api/hold", shopSeats("z1-2-6")) })
	wg.Wait()
	got := reservedSeats(t, s, key, event)
	buyerWon := statuses[0] == http.StatusOK
	for i := range n {
		if (statuses[i] == http.StatusOK) != buyerWon {
			t.Fatalf("the buyer's eight clicks answered %v", statuses[:n])
		}
	}
	switch {
	case buyerWon && statuses[n] == http.StatusConflict && slices.Equal(got, []string{"z1-2-5", "z1-2-6"}):
	case !buyerWon && statuses[n] == http.StatusOK && slices.Equal(got, []string{"z1-2-6"}):
		t.Log("the rival was first; the buyer's clicks were all refused")
		if status, _ := buyer.post("/api/hold", shopSeats("z1-2-5", "z1-2-7")); status != http.StatusOK {
			t.Fatalf("hold z1-2-5, z1-2-7: %d", status)
		}
	default:
		t.Fatalf("buyer %v, rival %d; reserved %v", statuses[:n], statuses[n], got)
	}

	ids := make([]any, n)
	for i := range n {
		wg.Go(func() {
			status, p := buyer.post("/api/order", shopBuyerDetails)
			if status == http.StatusOK {
				ids[i] = p["order_id"]
			}
		})
	}
	wg.Wait()
	for i := range n {
		if ids[i] == nil || ids[i] != ids[0] {
			t.Fatalf("eight order clicks answered orders %v", ids)
		}
	}
	if orders := shopOrders(t, s, key); len(orders) != 1 || orders[0].Status != "pending_payment" {
		t.Fatalf("orders made: %+v", orders)
	}
}

// TestExampleShopDocQuotesTheSource: every code block of
// docs/example-shop.md is a verbatim part of the example's files, so the
// page cannot drift from the program TestExampleShop runs.
func TestExampleShopDocQuotesTheSource(t *testing.T) {
	dir := filepath.Join("..", "..", "sdk", "go", "examples", "shop")
	var source strings.Builder
	for _, name := range []string{"shop.go", "cart.go", "page.html", "shop.js", "shop.css", filepath.Join("cmd", "shop", "main.go")} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		source.Write(b)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "example-shop.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?ms)^```(go|js|html)\n(.*?)^```\n").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/example-shop.md quotes %d blocks of the example", len(blocks))
	}
	for _, b := range blocks {
		for _, part := range strings.Split(b[2], "\n// …\n") {
			if !strings.Contains(source.String(), part) {
				t.Errorf("docs/example-shop.md quotes a %s block that is not in sdk/go/examples/shop:\n%s", b[1], part)
			}
		}
	}
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// bigHallMidSale imports the 10,000-seat hall (10 Cyrillic zones × 40
// rows × 25) for company A and puts it halfway through an on-sale: three
// channels with long Russian names (zones allocated, one part sold), a
// third sold (each seat its order and ticket, every other one admitted),
// a tenth held. It returns the event.
func bigHallMidSale(t *testing.T, f *fixture) int64 {
	t.Helper()
	ctx := context.Background()
	f.Import(t, f.companyA, testenv.ZonedHallCatalog(10, 40, 25))
	var event int64
	if err := f.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = 'hall'", f.companyA).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	dist := distribution.New(f.DB, nil, nil, distribution.Settings{})
	for i, c := range []struct{ ref, name, zone string }{
		{"kassir-big", "Кассир.ру — партнёрская витрина для больших концертных площадок", "z2"},
		{"tl-big", "Тикетлэнд: корпоративные продажи и подарочные сертификаты", "z7"},
		{"box-big", "Касса арены «Северное сияние», окно № 3 у главного входа", "z10"},
	} {
		ch, _, err := dist.SaveChannel(ctx, f.companyA, c.ref, c.name)
		if err != nil {
			t.Fatal(err)
		}
		sel := distribution.Selector{Zones: []string{c.zone}}
		if i == 2 {
			sel = distribution.Selector{Rows: []distribution.RowRange{{Zone: c.zone, From: "1", To: "20"}}}
		}
		if _, err := dist.AllocateSeats(ctx, f.companyA, event, ch.ID, sel); err != nil {
			t.Fatal(err)
		}
	}
	_, key := f.Key(t, f.companyA, apikey.Production)
	for _, q := range []string{
		`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at, channel, metadata)
		SELECT e.company_id, ?1, false, e.id, 'paid', 'external', 'RUB', 500000, 0, 500000,
			'buyer' || s.pos || '@x.test', 'Мария', 'Иванова', '', '\x01', now(), now(), 'api', jsonb_build_object('seat', s.seat_id)
		FROM event_seats s JOIN events e ON e.id = s.event_id WHERE s.event_id = ?0 AND s.pos % 3 = 0 AND s.zone_id IN ('z1', 'z2', 'z4', 'z5', 'z6')`,
		`INSERT INTO order_items (order_id, position, category_id, seat_id, price)
		SELECT o.id, 0, s.category_id, s.seat_id, 500000 FROM orders o JOIN event_seats s ON s.event_id = o.event_id AND s.seat_id = o.metadata->>'seat'
		WHERE o.event_id = ?0`,
		`INSERT INTO tickets (order_id, position, number, barcode, checked_in_at)
		SELECT i.order_id, i.position, 'T-' || i.order_id, lpad((i.order_id + 7000000)::text, 13, '0'), CASE WHEN i.order_id % 2 = 0 THEN now() END
		FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.event_id = ?0`,
		`UPDATE event_seats s SET state = 'sold', order_id = o.id, version = s.version + 1
		FROM orders o WHERE o.event_id = ?0 AND s.event_id = ?0 AND s.seat_id = o.metadata->>'seat'`,
		`UPDATE event_seats SET state = 'held', hold_id = 'h' || pos, version = version + 1, hold_expires_at = now() + interval '30 minutes'
		WHERE event_id = ?0 AND pos % 10 = 1 AND state = 'free' AND zone_id IN ('z1', 'z3', 'z8')`,
	} {
		if _, err := f.DB.NewRaw(q, event, key).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return event
}

// TestCabinetHallMapInBrowser: the demo hall's and the 10,000-seat hall's
// maps at 1280 and 390 px in Chromium (no sideways scroll, axe passes,
// screenshots hall-map-*.png), and seats selected by clicks, by a row's
// name and submitted are allocated to the channel chosen.
func TestCabinetHallMapInBrowser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	swan := f.ids["swan-lake"]
	big := bigHallMidSale(t, f)
	dist := distribution.New(f.DB, nil, nil, distribution.Settings{})
	ch, _, err := dist.SaveChannel(ctx, f.companyA, "kassir", "Кассир.ру — партнёрская витрина")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dist.AllocateSeats(ctx, f.companyA, swan, ch.ID, distribution.Selector{Zones: []string{"balcony"}}); err != nil {
		t.Fatal(err)
	}
	f.reserveFor(t, f.keyA, 30, "parterre-1-10", "parterre-1-11")

	bctx, run := f.ownerInBrowser(t, "owner.with.a.rather.long.address@festival-productions.example.com")
	open := func(path string) {
		t.Helper()
		if res, err := chromedp.RunResponse(bctx, chromedp.Navigate(f.URL+path)); err != nil || res.Status != http.StatusOK {
			t.Fatalf("open %s: %v %v", path, res, err)
		}
	}
	fits := func(name string) {
		t.Helper()
		pageFits(t, bctx, name, func(t *testing.T, width int64) {
			got, err := chromedp.Run(bctx, chromedp.Evaluate[[]fitViolation](fmt.Sprintf("%s(%d)", measureFit, width)))
			if err != nil {
				t.Fatalf("measure %s: %v", name, err)
			}
			for _, v := range got {
				t.Errorf("%s at %d px: %s: %s: %s (%q)", name, width, v.Rule, v.Selector, v.Detail, v.Text)
			}
		})
	}

	// From the event's channels page to its map.
	open(fmt.Sprintf("/cabinet/channels/events/%d", swan))
	run("open the map", chromedp.Click(chromedp.CSS("#hall-map-link")), chromedp.WaitVisible(chromedp.CSS("#hall-map")))
	fits("hall-map-demo")

	// Two seats clicked, one clicked twice (unselected), the held seat and
	// row 3 by its name; then allocate to Кассир.ру.
	run("select", chromedp.Click(chromedp.CSS(`circle[data-seat="parterre-2-5"]`)), chromedp.Click(chromedp.CSS(`circle[data-seat="parterre-2-6"]`)),
		chromedp.Click(chromedp.CSS(`circle[data-seat="parterre-2-7"]`)), chromedp.Click(chromedp.CSS(`circle[data-seat="parterre-2-7"]`)),
		chromedp.Click(chromedp.CSS(`circle[data-seat="parterre-1-10"]`)),
		chromedp.Click(chromedp.CSS(`g.zone[data-zone="parterre"] g.row[data-row="3"] text.row-label`)))
	list, err := chromedp.Run(bctx, chromedp.Value(chromedp.CSS("#map-seats")))
	if err != nil {
		t.Fatal(err)
	}
	ids := strings.Fields(list)
	if len(ids) != 33 || strings.Contains(list, "parterre-2-7") || !strings.Contains(list, "parterre-3-30") || !strings.Contains(list, "parterre-1-10") {
		t.Fatalf("selected %d seats: %q", len(ids), list)
	}
	if n, _ := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#hall-map circle.sel').length`)); n != 33 {
		t.Errorf("%d seats marked selected, want 33", n)
	}
	run("allocate", chromedp.SetValue(chromedp.CSS("#map-channel"), fmt.Sprint(ch.ID)), chromedp.Click(chromedp.CSS("#map-allocate")),
		chromedp.WaitVisible(chromedp.CSS("#notice")))
	notice, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS("#notice")))
	if err != nil || notice != "32 seats allocated to Кассир.ру — партнёрская витрина. 1 seat stayed where they were: 1 held." {
		t.Errorf("notice %q (%v)", notice, err)
	}
	if got := f.seatsOfChannel(t, swan, ch.ID); got != 6+32 {
		t.Errorf("Кассир.ру has %d seats, want 38", got)
	}
	free, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(fmt.Sprintf(`#hall-counts tr[data-channel="%d"] td`, ch.ID))))
	if err != nil || free != "38" {
		t.Errorf("the counts show %q free seats of Кассир.ру, want 38 (%v)", free, err)
	}
	fits("hall-map-demo-allocated")

	// The 10,000-seat hall: scrolls inside its region on a phone.
	open(fmt.Sprintf("/cabinet/channels/events/%d/map", big))
	if n, _ := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#hall-map circle[data-seat]').length`)); n != 10_000 {
		t.Errorf("%d seats drawn, want 10000", n)
	}
	fits("hall-map-10000")
	// A rectangle dragged over seats selects them.
	box, err := chromedp.Run(bctx, chromedp.Evaluate[[]float64](`(() => { const a = document.querySelector('circle[data-seat="z1-1-1"]').getBoundingClientRect(),
		b = document.querySelector('circle[data-seat="z1-3-5"]').getBoundingClientRect(); return [a.left - 1, a.top - 1, b.right + 1, b.bottom + 1]; })()`))
	if err != nil {
		t.Fatal(err)
	}
	run("drag", chromedp.MouseEvent("mousePressed", box[0], box[1], chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseMoved", (box[0]+box[2])/2, (box[1]+box[3])/2, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseMoved", box[2], box[3], chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseReleased", box[2], box[3], chromedp.ButtonLeft))
	if n, _ := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#hall-map circle.sel').length`)); n != 15 {
		t.Errorf("the rectangle over rows 1 to 3, seats 1 to 5 selected %d seats, want 15", n)
	}
}

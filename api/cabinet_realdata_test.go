package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ticketsales/ticketsales/internal/report"
)

// Real-looking data for the cabinet's browser checks, as a Russian
// organizer has it: titles of 80 Cyrillic characters, events in Moscow
// and Yekaterinburg (one at 01:30 local, the day before in UTC), prices
// in the millions of roubles, long Cyrillic buyer names, and more orders
// than a list page holds, some refunded in part.
const (
	realTitleMoscow = "Гала-концерт симфонического оркестра и хора к юбилею консерватории: Малер, Шостакович"
	realTitleEkb    = "Ночной органный марафон в Свердловской филармонии: Бах, Франк, Видор и импровизации"
	realCategory    = "Партер, ряды с первого по двенадцатый, центральный сектор у сцены"
	// realPrice is 1 250 000.00 RUB a ticket.
	realPrice = 125_000_000
)

var realBuyers = []struct{ first, last string }{
	{"Александра-Екатерина", "Константинопольская-Римская"},
	{"Святослав", "Преображенский-Вознесенский"},
	{"Евдокия", "Малиновская"},
	{"Ярослав", "Ш"},
}

// realOrders loads the real-looking events into company and sells orders
// of them with key (a production key): n orders in all, every fifth
// refunded in part. The company's days are Moscow's.
func realOrders(t *testing.T, f *fixture, company int64, key string, n int) {
	t.Helper()
	ctx := context.Background()
	for _, s := range []string{realTitleMoscow, realTitleEkb} {
		if c := utf8.RuneCountInString(s); c < 80 {
			t.Fatalf("a real title of %d characters, want 80 or more: %q", c, s)
		}
	}
	f.Import(t, company, []byte(fmt.Sprintf(`{"cities": [{"ref": "real-msk", "name": "Москва"}, {"ref": "real-ekb", "name": "Екатеринбург"}],
	  "venues": [{"ref": "real-hall", "name": "Большой зал Московской государственной консерватории имени П. И. Чайковского", "city": "real-msk", "timezone": "Europe/Moscow"},
	    {"ref": "real-phil", "name": "Свердловская государственная академическая филармония", "city": "real-ekb", "timezone": "Asia/Yekaterinburg"}],
	  "events": [{"ref": "real-gala", "title": %q, "slug": "real-gala", "status": "published", "starts_at": "2030-03-29T01:30:00+03:00",
	    "venue": "real-hall", "fee": {"mode": "separate", "rate_bp": 350, "min_fee": 0},
	    "categories": [{"ref": "real-parterre", "name": %q, "price": %d, "capacity": 400}]},
	   {"ref": "real-organ", "title": %q, "slug": "real-organ", "status": "published", "starts_at": "2030-04-02T23:00:00+05:00",
	    "venue": "real-phil", "fee": {"mode": "included", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "real-organ-stalls", "name": %q, "price": %d, "capacity": 400}]}]}`,
		realTitleMoscow, realCategory, realPrice, realTitleEkb, realCategory, realPrice+99)))
	if err := report.SetZone(ctx, f.DB, company, "Europe/Moscow"); err != nil {
		t.Fatal(err)
	}
	type cat struct{ Event, Category int64 }
	var cats []cat
	if err := f.DB.NewRaw(`SELECT e.id AS event, c.id AS category FROM events e JOIN ticket_categories c ON c.event_id = e.id
		WHERE e.company_id = ? AND e.slug IN ('real-gala', 'real-organ') ORDER BY e.slug`, company).Scan(ctx, &cats); err != nil || len(cats) != 2 {
		t.Fatalf("the real events' categories: %v %v", cats, err)
	}
	for i := range n {
		c := cats[i%2]
		b := realBuyers[i%len(realBuyers)]
		email := fmt.Sprintf("%s.%d@bilety-konservatorii-pokupateli.example.ru", translitless(b.last), i)
		var ob orderBody
		res := f.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": %d}],
		  "customer": {"email": %q, "first_name": %q, "last_name": %q, "phone": "+7 912 345-67-%02d"}, "payment": "external"}`,
			c.Event, c.Category, 1+i%4, email, b.first, b.last, i%100), idemKey(t))
		if res.Status != http.StatusCreated {
			t.Fatalf("real order %d: %d %s", i, res.Status, res.Body)
		}
		res.Decode(t, &ob)
		if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", ob.Data.ID), key,
			fmt.Sprintf(`{"external_payment_id": "pay-2026-11-%04d-СБП", "paid_amount": %d}`, i, ob.Data.Amount.Amount), idemKey(t)); res.Status != http.StatusOK && res.Status != http.StatusAccepted {
			t.Fatalf("confirm real order %d: %d %s", i, res.Status, res.Body)
		}
		if i%5 == 1 && 1+i%4 > 1 { // refunded in part: partially_refunded
			f.awaitOrderStatus(t, key, ob.Data.ID, "paid")
			var tb struct{ Data []ticket }
			f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), key).Decode(t, &tb)
			ts := tb.Data
			if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", ob.Data.ID), key,
				fmt.Sprintf(`{"ticket_ids": [%d], "reason": "покупатель заболел"}`, ts[0].ID), idemKey(t)); res.Status >= 300 {
				t.Fatalf("refund real order %d: %d %s", i, res.Status, res.Body)
			}
		}
	}
}

// translitless keeps an e-mail's local part ASCII: the buyer's surname's
// length in x's (addresses are often Latin even for Cyrillic names).
func translitless(s string) string {
	return strings.Repeat("x", min(utf8.RuneCountInString(s), 24))
}

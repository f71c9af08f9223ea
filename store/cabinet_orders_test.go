package store_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func TestParseOrderSearch(t *testing.T) {
	for q, want := range map[string]store.OrderSearch{
		"":                  {},
		" x ":               {},
		"12345":             {OrderID: 12345, PaymentID: "12345", Reference: "12345"},
		"4006381333931":     {OrderID: 4006381333931, Barcode: "4006381333931", PaymentID: "4006381333931", Reference: "4006381333931"},
		"t-000123-01":       {TicketNumber: "T-000123-01", Reference: "t-000123-01"},
		"Anna@Example.test": {EmailPrefix: "anna@example.test", PaymentID: "Anna@Example.test", Reference: "Anna@Example.test"},
		"Anna  Pavlova":     {NamePrefix: "anna pavlova", PaymentID: "Anna Pavlova", Reference: "Anna Pavlova"},
		"pay_9f":            {NamePrefix: "pay_9f", EmailPrefix: "pay_9f", PaymentID: "pay_9f", Reference: "pay_9f"},
		"Заказ №42":         {NamePrefix: "заказ №42", PaymentID: "Заказ №42", Reference: "Заказ №42"},
		"Anna\x00\xff":      {NamePrefix: "anna", EmailPrefix: "anna", PaymentID: "Anna", Reference: "Anna"},
		"\x00\x00\x00":      {},
	} {
		if got := store.ParseOrderSearch(q); got != want {
			t.Errorf("ParseOrderSearch(%q) = %+v, want %+v", q, got, want)
		}
	}
}

// TestCabinetOrderSearchPlans: on a company with many orders, every kind
// of search is an index lookup (no sequential scan of orders or tickets),
// and so is the newest page of the sandbox list.
func TestCabinetOrderSearchPlans(t *testing.T) {
	ctx := context.Background()
	s, company := seedOrders(t, 5000)
	var id int64
	var barcode, number string
	if err := s.DB.NewRaw(`SELECT o.id, t.barcode, t.number FROM orders o JOIN tickets t ON t.order_id = o.id
		WHERE NOT o.is_test ORDER BY o.id DESC LIMIT 1 OFFSET 2000`).Scan(ctx, &id, &barcode, &number); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var listed []string
	testenv.WatchQueries(s.DB, "FROM orders o JOIN events e", func(q string) {
		mu.Lock()
		defer mu.Unlock()
		listed = append(listed, q)
	})
	for _, tc := range []struct {
		name    string
		f       store.CabinetOrderFilter
		indexes []string
	}{
		{"order id", store.CabinetOrderFilter{Search: store.ParseOrderSearch(strconv.FormatInt(id, 10))}, []string{"orders_pkey"}},
		{"barcode", store.CabinetOrderFilter{Search: store.ParseOrderSearch(barcode)}, []string{"tickets_barcode_key"}},
		{"ticket number", store.CabinetOrderFilter{Search: store.ParseOrderSearch(number)}, []string{"tickets_number_key"}},
		{"payment id", store.CabinetOrderFilter{Search: store.ParseOrderSearch("ext-777")}, []string{"orders_company_payment_id"}},
		{"e-mail", store.CabinetOrderFilter{Search: store.ParseOrderSearch("buyer777@x.test")}, []string{"orders_company_email"}},
		{"name", store.CabinetOrderFilter{Search: store.ParseOrderSearch("first777 last")},
			[]string{"orders_company_name", "orders_company_name_last"}},
		{"sandbox list", store.CabinetOrderFilter{IsTest: true}, []string{"orders_sandbox_created"}},
		{"reference", store.CabinetOrderFilter{Search: store.ParseOrderSearch("Заказ 777/Б")}, []string{"orders_company_reference"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			listed = nil
			mu.Unlock()
			f := tc.f
			f.CompanyID, f.Limit = company, 50
			rows, _, err := store.ListCabinetOrders(ctx, s.DB, f)
			if err != nil || len(rows) == 0 {
				t.Fatalf("nothing found (%v)", err)
			}
			if _, err := store.CountCabinetOrders(ctx, s.DB, f); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			queries := listed
			mu.Unlock()
			if len(queries) != 2 {
				t.Fatalf("%d list queries watched", len(queries))
			}
			for _, q := range queries {
				var plan []string
				if err := s.DB.NewRaw("EXPLAIN "+q).Scan(ctx, &plan); err != nil {
					t.Fatal(err)
				}
				text := strings.Join(plan, "\n")
				if strings.Contains(text, "Seq Scan on orders") || strings.Contains(text, "Seq Scan on tickets") {
					t.Errorf("a sequential scan:\n%s\n%s", q, text)
				}
				for _, ix := range tc.indexes {
					if !strings.Contains(text, ix) {
						t.Errorf("the plan does not use %s:\n%s", ix, text)
					}
				}
			}
		})
	}
}

// seedOrders is a company with the demo catalog and n orders of one
// ticket each, a minute apart, every 50th a sandbox one, each with its
// own buyer ("First<g> Last<g>", buyer<g>@x.test) and payment id (ext-<g>);
// every 3rd has a partner's reference ("Заказ <g>/Б") and metadata
// ({"cart": "c-<g>", "source": "web"}).
func seedOrders(t testing.TB, n int) (*testenv.Stack, int64) {
	t.Helper()
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	_, prod := s.Key(t, company, "production")
	for _, q := range []string{
		`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, payment_id, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, created_at, paid_at, channel,
			reference, metadata)
		SELECT ?0, ?1, g % 50 = 0, e.id, CASE WHEN g % 100 = 1 THEN 'refunded' ELSE 'paid' END, 'external', 'ext-' || g, 'RUB', 300000, 30000, 330000,
			'buyer' || g || '@x.test', 'First' || g, 'Last' || g, '', '\x01', now(), now() - g * interval '1 minute',
			now() - g * interval '1 minute' + interval '30 seconds', 'api', CASE WHEN g % 3 = 0 THEN 'Заказ ' || g || '/Б' END,
			CASE WHEN g % 3 = 0 THEN jsonb_build_object('cart', 'c-' || g, 'source', 'web') ELSE '{}' END
		FROM generate_series(1, ?2) g JOIN events e ON e.company_id = ?0 AND e.ref = 'swan-lake'`,
		`INSERT INTO order_items (order_id, position, category_id, price)
		SELECT o.id, 0, c.id, 100000 FROM orders o JOIN ticket_categories c ON c.event_id = o.event_id AND c.ref = 'stalls'`,
		`INSERT INTO tickets (order_id, position, number, barcode)
		SELECT order_id, position, 'T-' || order_id || '-0' || position, lpad((order_id * 3 + position)::text, 13, '0') FROM order_items`,
		`ANALYZE orders, order_items, tickets`,
	} {
		if _, err := s.DB.NewRaw(q, company, prod, n).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s, company
}

// BenchmarkCabinetOrders: a page of the order list and its count, as the
// cabinet reads them, on 200,000 orders of one company.
func BenchmarkCabinetOrders(b *testing.B) {
	ctx := context.Background()
	s, company := seedOrders(b, 200_000)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, bc := range []struct {
		name string
		f    store.CabinetOrderFilter
	}{
		{"newest", store.CabinetOrderFilter{}},
		{"sandbox", store.CabinetOrderFilter{IsTest: true}},
		{"barcode", store.CabinetOrderFilter{Search: store.ParseOrderSearch("0000000300003")}},
		{"email", store.CabinetOrderFilter{Search: store.ParseOrderSearch("buyer12345@x.test")}},
		{"name prefix, 111k matches", store.CabinetOrderFilter{Search: store.ParseOrderSearch("first1")}},
		{"status refunded, 1%", store.CabinetOrderFilter{Status: "refunded"}},
		{"yesterday", store.CabinetOrderFilter{From: today.AddDate(0, 0, -1), To: today.AddDate(0, 0, -1)}},
		// A day of the report: the orders paid on it.
		{"paid yesterday", store.CabinetOrderFilter{ByPaid: true, From: today.AddDate(0, 0, -1), To: today.AddDate(0, 0, -1)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := bc.f
			f.CompanyID, f.Limit = company, 50
			for b.Loop() {
				if _, _, err := store.ListCabinetOrders(ctx, s.DB, f); err != nil {
					b.Fatal(err)
				}
				if _, err := store.CountCabinetOrders(ctx, s.DB, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestOrderLookupPlans: on a company with many orders, each of the API's
// order lookups (filter.reference, payment_id, email, metadata) finds its
// orders through its index (migrations 27 and 47), never a sequential scan
// of orders, and finds exactly them.
func TestOrderLookupPlans(t *testing.T) {
	ctx := context.Background()
	s, company := seedOrders(t, 5000)
	var mu sync.Mutex
	var listed []string
	testenv.WatchQueries(s.DB, `FROM "orders" AS "o"`, func(q string) {
		mu.Lock()
		defer mu.Unlock()
		listed = append(listed, q)
	})
	for _, tc := range []struct {
		name  string
		f     store.OrderFilter
		index string
		want  int
	}{
		{"reference", store.OrderFilter{Reference: "Заказ 777/Б"}, "orders_company_reference", 1},
		{"payment id", store.OrderFilter{PaymentID: "ext-777"}, "orders_company_payment_id", 1},
		{"e-mail, another case", store.OrderFilter{Email: "Buyer777@X.test"}, "orders_company_email", 1},
		{"metadata pair", store.OrderFilter{MetadataKey: "cart", MetadataValue: "c-777"}, "orders_metadata", 1},
		{"metadata, another value", store.OrderFilter{MetadataKey: "cart", MetadataValue: "c-778"}, "orders_metadata", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			listed = nil
			mu.Unlock()
			f := tc.f
			f.Page, f.PerPage = 1, 50
			rows, total, err := store.ListOrders(ctx, s.DB, company, false, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.want || total != tc.want {
				t.Fatalf("found %d (total %d), want %d", len(rows), total, tc.want)
			}
			if tc.want == 1 {
				o := rows[0]
				if o.PaymentID == nil || *o.PaymentID != "ext-777" || o.Reference == nil || *o.Reference != "Заказ 777/Б" ||
					len(o.Metadata) != 2 || o.Metadata["cart"] != "c-777" || o.Metadata["source"] != "web" {
					t.Fatalf("found order %d: payment %v, reference %v, metadata %v; want ext-777's", o.ID, o.PaymentID, o.Reference, o.Metadata)
				}
			}
			mu.Lock()
			queries := listed
			mu.Unlock()
			if len(queries) == 0 {
				t.Fatal("no list query watched")
			}
			for _, q := range queries {
				var plan []string
				if err := s.DB.NewRaw("EXPLAIN "+q).Scan(ctx, &plan); err != nil {
					t.Fatal(err)
				}
				text := strings.Join(plan, "\n")
				if strings.Contains(text, "Seq Scan on orders") || !strings.Contains(text, tc.index) {
					t.Errorf("the plan does not use %s alone:\n%s\n%s", tc.index, q, text)
				}
			}
		})
	}
}

package sdk_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// A partner walks all of its company's orders with the Go SDK's iterator,
// 7 a page, while new orders are created between pages: every order that
// existed when the walk began comes once, newest first, and none twice.
func TestGoSDKWalksOrdersWhileOrdersArrive(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	key, _ := s.Key(t, company, apikey.Sandbox)
	ctx := context.Background()

	var events struct {
		Data []struct {
			ID   int64
			Slug string
		}
	}
	s.Get(t, "/v1/events", key).Decode(t, &events)
	var event int64
	for _, e := range events.Data {
		if e.Slug == "standup" { // general admission, no sessions
			event = e.ID
		}
	}
	var cats struct{ Data []struct{ ID int64 } }
	s.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), key).Decode(t, &cats)
	create := func(n int) int64 {
		res := s.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d,
			"items": [{"ticket_category_id": %d, "quantity": 1}], "payment": "external",
			"customer": {"email": "zakaz-%d@example.com", "first_name": "Фёдор", "last_name": "Шаляпин", "phone": "+7 999 123-45-67"}}`, event, cats.Data[0].ID, n),
			fmt.Sprintf("Idempotency-Key: pages-%d-%d", n, time.Now().UnixNano()))
		if res.Status != http.StatusCreated {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		var o struct{ Data struct{ ID int64 } }
		res.Decode(t, &o)
		return o.Data.ID
	}
	first := create(0)
	// 40 older copies of it, in pairs sharing a creation time.
	if _, err := s.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, created_at, expires_at, channel)
		SELECT company_id, api_key_id, is_test, event_id, 'cancelled', payment, currency, total, service_fee, amount,
			'old-' || g || '@example.com', customer_first_name, customer_last_name, customer_phone, access_token_hash,
			created_at - (g / 2) * interval '1 second', expires_at, channel
		FROM orders, generate_series(1, 40) g WHERE id = ?`, first).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var existing []int64
	if err := s.DB.NewRaw("SELECT id FROM orders WHERE company_id = ? ORDER BY created_at DESC, id DESC", company).Scan(ctx, &existing); err != nil {
		t.Fatal(err)
	}

	c, err := ticketsales.New(s.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	per := int64(7)
	var walked []int64
	created := map[int64]bool{}
	seen := map[int64]bool{}
	for o, err := range c.Orders(ctx, &ticketsales.ListOrdersParams{PerPage: &per}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[o.Id] {
			t.Fatalf("order %d came twice", o.Id)
		}
		seen[o.Id] = true
		walked = append(walked, o.Id)
		if len(walked)%7 == 0 { // the page's last: new orders before the next
			created[create(len(walked))] = true
			created[create(len(walked)+1)] = true
		}
	}
	if len(created) < 10 {
		t.Fatalf("only %d orders created during the walk", len(created))
	}
	if fmt.Sprint(walked) != fmt.Sprint(existing) {
		t.Fatalf("walked %v\nwant %v", walked, existing)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// demo is a fresh database with the demo catalog of one company and a
// sandbox key.
type demo struct {
	*testenv.Stack
	company, keyID int64
}

func newDemo(t *testing.T) *demo {
	t.Helper()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	d := &demo{Stack: s, company: s.Company(t, "A")}
	s.Import(t, d.company, catalogfile.Demo(time.Now()))
	_, d.keyID = s.Key(t, d.company, "sandbox")
	return d
}

// eventID returns the demo event with the slug.
func (d *demo) eventID(t *testing.T, slug string) int64 {
	t.Helper()
	var id int64
	if err := d.DB.NewRaw("SELECT id FROM events WHERE slug = ?", slug).Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

// gaOrder creates a pending sandbox standing-room order of qty tickets with
// the given payment deadline and returns it with its category id.
func (d *demo) gaOrder(t *testing.T, qty int, expires time.Time) (*store.Order, int64) {
	t.Helper()
	return d.gaOrderOf(t, d.keyID, true, qty, expires)
}

// gaOrderOf is gaOrder sold by another key, of either environment.
func (d *demo) gaOrderOf(t *testing.T, keyID int64, isTest bool, qty int, expires time.Time) (*store.Order, int64) {
	t.Helper()
	ctx := context.Background()
	event := d.eventID(t, "standup")
	var cat int64
	if err := d.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ?", event).Scan(ctx, &cat); err != nil {
		t.Fatal(err)
	}
	o := &store.Order{CompanyID: d.company, APIKeyID: keyID, IsTest: isTest, EventID: event, Status: states.OrderPendingPayment,
		Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: expires}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, d.DB, o, []store.ItemQuantity{{CategoryID: cat, Quantity: qty, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }, 0); err != nil {
		t.Fatal(err)
	}
	return o, cat
}

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// The prepared reads tell "not found" as bun's reads did: another
// company's order or event, or one that does not exist, is errs.NotFound,
// never an empty record (which would answer 200 with blanks, or record a
// payment of a deleted order as 0 of no currency).
func TestPreparedReadsTellNotFound(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	other := d.Company(t, "B")
	o, _ := d.gaOrder(t, 2, time.Now().Add(time.Hour))
	event := d.eventID(t, "standup")
	const missing = 987654321

	if got, err := store.GetOrder(ctx, d.DB, d.company, true, o.ID); err != nil || got.ID != o.ID || got.Amount != o.Amount {
		t.Fatalf("own order: %+v %v", got, err)
	}
	if got, err := store.GetEvent(ctx, d.DB, d.company, event); err != nil || got.ID != event || got.VenueName == "" {
		t.Fatalf("own event: %+v %v", got, err)
	}
	for name, err := range map[string]error{
		"another company's order": func() error { _, err := store.GetOrder(ctx, d.DB, other, true, o.ID); return err }(),
		"the other environment":   func() error { _, err := store.GetOrder(ctx, d.DB, d.company, false, o.ID); return err }(),
		"a missing order":         func() error { _, err := store.GetOrderByID(ctx, d.DB, missing); return err }(),
		"another company's event": func() error { _, err := store.GetEvent(ctx, d.DB, other, event); return err }(),
		"a missing event's place": func() error { _, err := store.GetEventPlace(ctx, d.DB, missing); return err }(),
		"tickets of no order": func() error {
			_, err := store.IssueTickets(ctx, d.DB, missing, func(bool) string { return "x" })
			return err
		}(),
		"a payment of no order": func() error { _, err := store.AcceptExternalPayment(ctx, d.DB, missing, "pay_x"); return err }(),
		"an order of no reservation": func() error {
			rsv := "rsv_nowhere"
			return store.CreateOrderFromReservation(ctx, d.DB, &store.Order{CompanyID: d.company, APIKeyID: d.keyID, IsTest: true,
				EventID: event, ReservationID: &rsv, Status: states.OrderPendingPayment, Payment: "external",
				CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
				ExpiresAt: time.Now().Add(time.Hour)})
		}(),
	} {
		if !errors.Is(err, errs.NotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, _, err := store.MarkOrderPaid(ctx, d.DB, missing, ""); err == nil {
		t.Error("a missing order was marked paid")
	}
}

// A payment that waited for the order's lock while another paid it learns
// the order is paid (not "pending_payment", which the workflow would take
// for a closed window and give the money back).
func TestPaymentThatWaitedSeesTheOrderPaid(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	o, _ := d.gaOrder(t, 2, time.Now().Add(time.Hour))
	tx, err := d.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if status, changed, err := store.MarkOrderPaid(ctx, tx, o.ID, ""); err != nil || !changed || status != states.OrderPaid {
		t.Fatalf("first payment: %s %v %v", status, changed, err)
	}
	type result struct {
		status  states.OrderStatus
		changed bool
		err     error
	}
	second := make(chan result, 1)
	go func() {
		status, changed, err := store.MarkOrderPaid(ctx, d.DB, o.ID, "")
		second <- result{status, changed, err}
	}()
	// The second waits for the first's lock on the order.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := d.DB.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND datname = current_database()`).Scan(ctx, &waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second payment never waited for the order's lock")
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-second
	if r.err != nil || r.changed || r.status != states.OrderPaid {
		t.Fatalf("the payment that waited: status %q changed %v err %v; want paid, unchanged", r.status, r.changed, r.err)
	}
}

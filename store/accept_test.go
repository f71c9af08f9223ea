package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// seatedOrder holds seats of the demo's swan-lake and orders them with
// payment=external; the order's window is Postgres's now + window.
func (d *demo) seatedOrder(t *testing.T, id string, window time.Duration, seats ...string) *store.Order {
	t.Helper()
	ctx := context.Background()
	prices := map[string]int64{}
	for _, s := range seats {
		prices[s] = 1000
	}
	_, ok, err := store.HoldSeats(ctx, d.DB, store.NewHold{Reservation: store.Reservation{ID: id, CompanyID: d.company,
		APIKeyID: d.keyID, IsTest: true, EventID: d.eventID(t, "swan-lake"), Currency: "RUB"}, TTL: time.Hour,
		SeatIDs: seats, Prices: prices})
	if err != nil || !ok {
		t.Fatalf("hold %v: ok=%v %v", seats, ok, err)
	}
	o := &store.Order{CompanyID: d.company, APIKeyID: d.keyID, IsTest: true, EventID: d.eventID(t, "swan-lake"),
		ReservationID: &id, Status: states.OrderPendingPayment, Payment: "external", CustomerEmail: "a@b.c",
		CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1}, PaymentWindow: window}
	if err := store.CreateOrderFromReservation(ctx, d.DB, o); err != nil {
		t.Fatal(err)
	}
	return o
}

func (d *demo) lapse(t *testing.T, orderID int64) {
	t.Helper()
	if _, err := d.DB.NewRaw("UPDATE orders SET expires_at = now() - interval '1 minute' WHERE id = ?", orderID).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A payment accepted in the window pays its order even when the window
// ends before the order's workflow applies it (the deadline's pass and
// the reaper pay it instead of cancelling it), and its seats cannot be
// taken meanwhile. One accepted payment excludes any other.
func TestAcceptedPaymentOutlivesTheWindow(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	o := d.seatedOrder(t, "rsv_accept", 15*time.Minute, "parterre-1-1", "parterre-1-2")

	got, err := store.AcceptExternalPayment(ctx, d.DB, o.ID, "pay-1")
	if err != nil || got.PaymentAcceptedAt == nil || *got.PaymentID != "pay-1" || got.Status != states.OrderPendingPayment {
		t.Fatalf("accept: %+v %v", got, err)
	}
	if got, err = store.AcceptExternalPayment(ctx, d.DB, o.ID, "pay-2"); err != nil || *got.PaymentID != "pay-1" {
		t.Fatalf("a second payment replaced the first: %+v %v", got, err)
	}

	d.lapse(t, o.ID)
	_, ok, err := store.HoldSeats(ctx, d.DB, store.NewHold{Reservation: store.Reservation{ID: "rsv_thief", CompanyID: d.company,
		APIKeyID: d.keyID, IsTest: true, EventID: o.EventID, Currency: "RUB"}, TTL: time.Hour,
		SeatIDs: []string{"parterre-1-1", "parterre-1-3"}, Prices: map[string]int64{"parterre-1-1": 1, "parterre-1-3": 1}})
	if err != nil || ok {
		t.Fatalf("another hold took a seat of an accepted order after its window: ok=%v %v", ok, err)
	}
	if status, changed, err := store.CancelOrder(ctx, d.DB, o.ID, states.CancelPaymentTimeout); err != nil || changed || status != states.OrderPendingPayment {
		t.Fatalf("timeout cancel of an accepted order: %s changed=%v %v", status, changed, err)
	}
	if _, changed, _ := store.CancelOrder(ctx, d.DB, o.ID, states.CancelPartner); changed {
		t.Fatal("a partner cancelled an order whose payment was accepted")
	}

	r, err := store.ReapLapsed(ctx, d.DB, 0, delivery.NewBarcode)
	if err != nil || r.Orders != 1 {
		t.Fatalf("reaper: %+v %v", r, err)
	}
	paid, err := store.GetOrderByID(ctx, d.DB, o.ID)
	if err != nil || paid.Status != states.OrderPaid || *paid.PaymentID != "pay-1" {
		t.Fatalf("after the deadline's pass: %+v %v", paid, err)
	}
	if n, _ := store.CountTickets(ctx, d.DB, o.ID); n != 2 {
		t.Fatalf("%d tickets", n)
	}
	if status, changed, err := store.CloseLapsedOrder(ctx, d.DB, o.ID, delivery.NewBarcode); err != nil || changed || status != states.OrderPaid {
		t.Fatalf("second pass: %s changed=%v %v", status, changed, err)
	}
	if n, _ := store.CountTickets(ctx, d.DB, o.ID); n != 2 {
		t.Fatalf("%d tickets after a second pass", n)
	}
}

// Without an accepted payment the deadline's pass cancels, and a payment
// offered after the window is not accepted.
func TestNoPaymentAcceptedAfterTheWindow(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	o := d.seatedOrder(t, "rsv_late", 15*time.Minute, "parterre-2-1")
	d.lapse(t, o.ID)
	got, err := store.AcceptExternalPayment(ctx, d.DB, o.ID, "late")
	if err != nil || got.PaymentAcceptedAt != nil || got.PaymentID != nil {
		t.Fatalf("accepted after the window: %+v %v", got, err)
	}
	status, changed, err := store.CloseLapsedOrder(ctx, d.DB, o.ID, delivery.NewBarcode)
	if err != nil || !changed || status != states.OrderCancelled {
		t.Fatalf("deadline pass: %s changed=%v %v", status, changed, err)
	}
	// Before its deadline the pass changes nothing.
	live := d.seatedOrder(t, "rsv_live", 15*time.Minute, "parterre-2-2")
	if status, changed, err := store.CloseLapsedOrder(ctx, d.DB, live.ID, delivery.NewBarcode); err != nil || changed || status != states.OrderPendingPayment {
		t.Fatalf("pass before the deadline: %s changed=%v %v", status, changed, err)
	}
}

// Racing confirms with different payments: exactly one is accepted, and
// every racer reads that one.
func TestOnePaymentAcceptedUnderARace(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	o := d.seatedOrder(t, "rsv_race", 15*time.Minute, "parterre-3-1")
	const n = 20
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := store.AcceptExternalPayment(ctx, d.DB, o.ID, fmt.Sprintf("pay-%d", i))
			if err != nil || got.PaymentID == nil {
				t.Errorf("accept %d: %+v %v", i, got, err)
				return
			}
			ids <- *got.PaymentID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]int{}
	for id := range ids {
		seen[id]++
	}
	if len(seen) != 1 {
		t.Fatalf("racers saw different accepted payments: %v", seen)
	}
}

// An order whose payment was accepted is never taken back by a create
// whose saga failed to start: it is paid with that payment.
func TestUndoLeavesAnAcceptedOrder(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	o := d.seatedOrder(t, "rsv_undo", 15*time.Minute, "parterre-3-2")
	if _, err := store.AcceptExternalPayment(ctx, d.DB, o.ID, "pay-undo"); err != nil {
		t.Fatal(err)
	}
	undone, err := store.UndoOrderFromReservation(ctx, d.DB, o.ID)
	if err != nil || undone {
		t.Fatalf("undo of an accepted order: undone=%v %v", undone, err)
	}
	if got, err := store.GetOrderByID(ctx, d.DB, o.ID); err != nil || got.PaymentAcceptedAt == nil {
		t.Fatalf("the accepted order after an undo: %+v %v", got, err)
	}
}

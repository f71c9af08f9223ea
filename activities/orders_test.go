package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// pendingOrder makes a sandbox order for one held seat, as the API does.
// testKeys seal the order page tokens of these tests' orders.
var testKeys, _ = delivery.NewKeyring("activities-test-secret")

func pendingOrder(t *testing.T, s *testenv.Stack, company, keyID int64, seat string, deadline time.Time) (orderID, eventID int64) {
	t.Helper()
	eventID = hold(t, s, company, keyID, "rsv_"+seat, seat, time.Now().Add(time.Hour))
	rid := "rsv_" + seat
	_, hash, sealed, err := testKeys.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	o := &store.Order{CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: eventID, ReservationID: &rid,
		Status: states.OrderPendingPayment, Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A",
		CustomerLastName: "B", CustomerPhone: "+79991234567", AccessTokenHash: hash, AccessTokenSealed: sealed, ExpiresAt: deadline}
	if err := store.CreateOrderFromReservation(context.Background(), s.DB, o); err != nil {
		t.Fatal(err)
	}
	return o.ID, eventID
}

func TestOrderActivitiesAreSafeToRepeat(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)

	// Tickets: none before payment; one per position however often issued.
	id, event := pendingOrder(t, s, company, keyID, "parterre-2-1", time.Now().Add(time.Hour))
	if _, err := acts.IssueTickets(ctx, id); err == nil {
		t.Fatal("tickets issued for an unpaid order")
	}
	first, err := acts.MarkOrderPaid(ctx, id, "ext-1")
	// Paying issues the tickets and counts them: the order workflow takes
	// the count from it (no IssueTickets after it for a current order).
	if err != nil || !first.Changed || first.Status != "paid" || first.Tickets != 1 {
		t.Fatalf("mark paid: %+v %v", first, err)
	}
	again, err := acts.MarkOrderPaid(ctx, id, "ext-1")
	if err != nil || again.Changed || again.Status != "paid" || again.Tickets != 1 {
		t.Fatalf("mark paid again: %+v %v", again, err)
	}
	for i := 0; i < 3; i++ {
		n, err := acts.IssueTickets(ctx, id)
		if err != nil || n != 1 {
			t.Fatalf("issue #%d: %d tickets, %v", i+1, n, err)
		}
	}
	if st := seatState(t, s, event, "parterre-2-1"); st != "sold" {
		t.Fatalf("paid seat is %s", st)
	}

	// Payment after the deadline is refused; the timeout cancel frees the seat once.
	late, _ := pendingOrder(t, s, company, keyID, "parterre-2-2", time.Now().Add(-time.Second))
	if res, err := acts.MarkOrderPaid(ctx, late, "ext-2"); err != nil || res.Status != "pending_payment" || res.Changed {
		t.Fatalf("late payment: %+v %v", res, err)
	}
	c1, err := acts.CancelOrder(ctx, late, states.CancelPaymentTimeout)
	if err != nil || !c1.Changed || c1.Status != "cancelled" {
		t.Fatalf("cancel: %+v %v", c1, err)
	}
	c2, err := acts.CancelOrder(ctx, late, states.CancelPaymentTimeout)
	if err != nil || c2.Changed || c2.Status != "cancelled" {
		t.Fatalf("cancel again: %+v %v", c2, err)
	}
	if st := seatState(t, s, event, "parterre-2-2"); st != "free" {
		t.Fatalf("seat after timeout: %s", st)
	}
	// A timeout cancel before the deadline asks for a retry; a paid order is not cancelled.
	if _, err := acts.CancelOrder(ctx, id, states.CancelPaymentTimeout); err != nil {
		t.Fatalf("cancel of a paid order: %v", err)
	}
	open, _ := pendingOrder(t, s, company, keyID, "parterre-2-3", time.Now().Add(time.Hour))
	if _, err := acts.CancelOrder(ctx, open, states.CancelPaymentTimeout); err == nil {
		t.Fatal("an order inside its window was cancelled for timeout")
	}

	// Sandbox deletion: the order and its tickets go, the seat is free, twice is harmless.
	for i, want := range []bool{true, false} {
		deleted, err := acts.DeleteTestOrder(ctx, id)
		if err != nil || deleted != want {
			t.Fatalf("delete #%d: %v %v", i+1, deleted, err)
		}
	}
	var left int
	_ = s.DB.NewRaw("SELECT count(*) FROM tickets WHERE order_id = ?", id).Scan(ctx, &left)
	if st := seatState(t, s, event, "parterre-2-1"); st != "free" || left != 0 {
		t.Fatalf("after deletion: seat %s, %d tickets", st, left)
	}
	var sold int
	_ = s.DB.NewRaw("SELECT sold FROM ticket_categories WHERE event_id = ? AND ref = 'stalls'", event).Scan(ctx, &sold)
	if sold != 1 { // the pending parterre-2-3 order only
		t.Fatalf("stalls sold after deletion and cancel: %d", sold)
	}
}

func TestPaymentRefusedWhenASeatWasRetaken(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	id, event := pendingOrder(t, s, company, keyID, "parterre-3-1", time.Now().Add(time.Hour))
	// Another hold took the seat (as after a lapse of the order's hold).
	if _, err := s.DB.ExecContext(ctx, `UPDATE event_seats SET order_id = NULL, hold_id = 'rsv_other'
		WHERE event_id = ? AND seat_id = 'parterre-3-1'`, event); err != nil {
		t.Fatal(err)
	}
	if _, err := acts.MarkOrderPaid(ctx, id, "ext"); err == nil {
		t.Fatal("an order that lost its seat was paid")
	}
	var status string
	var tickets int
	_ = s.DB.NewRaw("SELECT status FROM orders WHERE id = ?", id).Scan(ctx, &status)
	_ = s.DB.NewRaw("SELECT count(*) FROM tickets WHERE order_id = ?", id).Scan(ctx, &tickets)
	if status != "pending_payment" || tickets != 0 {
		t.Fatalf("after the refused payment: %s, %d tickets", status, tickets)
	}
	if st := seatState(t, s, event, "parterre-3-1"); st != "held" {
		t.Fatalf("the other hold's seat is %s", st)
	}
}

// TestPaymentSignalledByAnOlderAPIIsRecordedAndApplied: a payment an api
// from before payments were recorded signalled (no gateway named, nothing
// on record) is recorded from its order and applied, not retried forever.
func TestPaymentSignalledByAnOlderAPIIsRecordedAndApplied(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	id, _ := pendingOrder(t, s, company, keyID, "parterre-2-8", time.Now().Add(time.Hour))
	if _, err := s.DB.ExecContext(ctx, "UPDATE orders SET payment = 'gateway', payment_id = 'pay_legacy', gateway = NULL WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	res, err := acts.SettlePayment(ctx, id, "", "pay_legacy")
	if err != nil || res.Status != states.PaymentApplied || res.Gateway != "test" || res.Tickets != 1 {
		t.Fatalf("settle: %+v %v", res, err)
	}
	if st, err := store.GetOrderStatus(ctx, s.DB, id); err != nil || st != states.OrderPaid {
		t.Fatalf("order %s (%v)", st, err)
	}
	again, err := acts.SettlePayment(ctx, id, "", "pay_legacy")
	if err != nil || again != res {
		t.Fatalf("settle again: %+v %v", again, err)
	}
}

// TestPaymentOfADeletedOrderIsRecordedAndGivenBack: an older api's payment
// whose sandbox order was deleted since is recorded from the test gateway's
// own record and goes back; one known nowhere fails for good at once.
func TestPaymentOfADeletedOrderIsRecordedAndGivenBack(t *testing.T) {
	ctx := context.Background()
	s, _, _, acts := demoStore(t)
	if err := store.CreateTestPayment(ctx, s.DB, &store.TestPayment{ID: "pay_gone", OrderID: 987654, Amount: 1500,
		Currency: "EUR", Description: "deleted order", Status: "paid"}); err != nil {
		t.Fatal(err)
	}
	res, err := acts.SettlePayment(ctx, 987654, "", "pay_gone")
	if err != nil || res.Status != states.PaymentRefundDue || res.RefundReason != states.ReturnOrderGone {
		t.Fatalf("settle: %+v %v", res, err)
	}
	p, err := store.GetPayment(ctx, s.DB, "test", "pay_gone")
	if err != nil || p.Amount != 1500 || p.Currency != "EUR" {
		t.Fatalf("recorded %+v (%v)", p, err)
	}

	_, err = acts.SettlePayment(ctx, 987655, "", "pay_nowhere")
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != activities.ErrTypePaymentUnknown {
		t.Fatalf("want a non-retryable payment_unknown, got %v", err)
	}
}

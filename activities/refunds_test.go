package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// TestRefundWorkflowReadsTheRecord: the refund workflow's first activity
// reads the refund its request recorded (amount, who returns the money,
// status, the order's status) and changes nothing, however often it runs.
func TestRefundWorkflowReadsTheRecord(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	id, _ := pendingOrder(t, s, company, keyID, "parterre-2-9", time.Now().Add(time.Hour))
	if _, err := acts.MarkOrderPaid(ctx, id, "ext-1"); err != nil {
		t.Fatal(err)
	}
	r := &store.Refund{ID: "rf_read", OrderID: id}
	if err := s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return store.CreateRefundTx(ctx, tx, r) }); err != nil {
		t.Fatal(err)
	}
	want := activities.VoidResult{Amount: r.Amount, MoneyReturnedBy: states.PayExternally, Status: states.RefundCompleted,
		OrderStatus: states.OrderRefunded}
	for i := range 2 {
		got, err := acts.VoidTickets(ctx, "rf_read", id, nil)
		if err != nil || got != want || got.Amount == 0 {
			t.Fatalf("read #%d: %+v %v, want %+v", i+1, got, err, want)
		}
	}
	var refunds, refunded int
	if err := s.DB.NewRaw("SELECT (SELECT count(*) FROM refunds), (SELECT count(*) FROM tickets WHERE status = 'refunded')").
		Scan(ctx, &refunds, &refunded); err != nil || refunds != 1 || refunded != 1 {
		t.Fatalf("after reading twice: %d refunds, %d tickets refunded (%v)", refunds, refunded, err)
	}
}

// TestUnrecordedRefundFailsForGood: a refund workflow whose refund is not
// on record fails at once, never retried and never taken for done, and
// voids nothing itself.
func TestUnrecordedRefundFailsForGood(t *testing.T) {
	ctx := context.Background()
	s, company, keyID, acts := demoStore(t)
	id, _ := pendingOrder(t, s, company, keyID, "parterre-2-8", time.Now().Add(time.Hour))
	if _, err := acts.MarkOrderPaid(ctx, id, "ext-2"); err != nil {
		t.Fatal(err)
	}
	var ticket int64
	if err := s.DB.NewRaw("SELECT id FROM tickets WHERE order_id = ?", id).Scan(ctx, &ticket); err != nil {
		t.Fatal(err)
	}
	got, err := acts.VoidTickets(ctx, "rf_nowhere", id, []int64{ticket})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != activities.ErrTypeRefundNotRecorded {
		t.Fatalf("an unrecorded refund: %+v %v, want a non-retryable %s", got, err, activities.ErrTypeRefundNotRecorded)
	}
	var status string
	if err := s.DB.NewRaw("SELECT status FROM tickets WHERE id = ?", ticket).Scan(ctx, &status); err != nil || status != "active" {
		t.Fatalf("the ticket after the failed read: %s %v", status, err)
	}
}

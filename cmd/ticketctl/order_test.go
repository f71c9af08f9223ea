package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// gatewayOrder sells n general-admission tickets of the event with the
// key, paid on the built-in test gateway (a refund returns money through
// it), and returns the order and its ticket ids.
func gatewayOrder(t *testing.T, db *bun.DB, company, keyID, event int64, n int) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	var cat int64
	if err := db.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? ORDER BY id LIMIT 1", event).Scan(ctx, &cat); err != nil {
		t.Fatal(err)
	}
	gw := "test"
	o := &store.Order{CompanyID: company, APIKeyID: keyID, EventID: event, Status: states.OrderPendingPayment,
		Payment: states.PayByGateway, Gateway: &gw, CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B",
		AccessTokenHash: []byte{1}, ExpiresAt: time.Now().Add(time.Hour)}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, db, o, []store.ItemQuantity{{CategoryID: cat, Quantity: n, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }, 0); err != nil {
		t.Fatal(err)
	}
	payment := fmt.Sprintf("tp_order_%d", o.ID)
	if _, _, err := store.MarkOrderPaid(ctx, db, o.ID, payment); err != nil {
		t.Fatal(err)
	}
	paid, err := store.GetOrderByID(ctx, db, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateTestPayment(ctx, db, &store.TestPayment{ID: payment, OrderID: o.ID, Amount: paid.Amount,
		Currency: paid.Currency, Description: "tickets", Status: states.GatewayPaid}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.IssueTickets(ctx, db, o.ID, delivery.NewBarcode); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	if err := db.NewRaw("SELECT id FROM tickets WHERE order_id = ? ORDER BY position", o.ID).Scan(ctx, &ids); err != nil || len(ids) != n {
		t.Fatalf("%d tickets (%v)", len(ids), err)
	}
	return o.ID, ids
}

// TestTicketctlRefundGoesTheOneWay: `order refund` makes the refund the
// API and the cabinet make (refunds.Service.Refund): its request checked
// (a ticket twice refused, another company's order not found), the refund
// recorded and its workflow started, so a worker returns a gateway order's
// money at once. With Temporal unreachable, or no worker polling the
// shell's TASK_QUEUE, the refund is still recorded and no workflow started
// where no worker runs it; the command says the reaper takes it up, and the
// reaper does.
func TestTicketctlRefundGoesTheOneWay(t *testing.T) {
	s := testenv.NewStack(t)
	s.StartWorker(t)
	t.Setenv("DATABASE_URL", s.DBURL)
	t.Setenv("TASK_QUEUE", s.TaskQueue)
	t.Setenv("TEMPORAL_ADDRESS", testenv.TemporalAddress(t))
	ctx := context.Background()
	acme, other := s.Company(t, "Acme"), s.Company(t, "Other")
	s.Import(t, acme, catalogfile.Demo(time.Now()))
	_, keyID := s.Key(t, acme, apikey.Production)
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = 'standup'", acme).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	orderID, tickets := gatewayOrder(t, s.DB, acme, keyID, event, 3)
	order, cid := strconv.FormatInt(orderID, 10), strconv.FormatInt(acme, 10)
	refundCount := func() (n int) {
		t.Helper()
		if err := s.DB.NewRaw("SELECT count(*) FROM refunds WHERE order_id = ?", orderID).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	refundStatus := func(id string) (st states.RefundStatus) {
		t.Helper()
		if err := s.DB.NewRaw("SELECT status FROM refunds WHERE id = ?", id).Scan(ctx, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}

	if out, err := ticketctl(t, "order", "refund", "--company", cid, "--order", order,
		"--tickets", fmt.Sprintf("%d,%d", tickets[0], tickets[0])); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("a ticket listed twice: %v %s", err, out)
	}
	if out, err := ticketctl(t, "order", "refund", "--company", strconv.FormatInt(other, 10), "--order", order); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("another company's order: %v %s", err, out)
	}
	if n := refundCount(); n != 0 {
		t.Fatalf("%d refunds after the refused requests", n)
	}

	out, err := ticketctl(t, "order", "refund", "--company", cid, "--order", order, "--tickets", strconv.FormatInt(tickets[0], 10), "--json")
	var r struct {
		ID     string
		Amount int64
	}
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.ID == "" || r.Amount != 100 {
		t.Fatalf("the refund: %v %s", err, out)
	}
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, contract.RefundWorkflowID(r.ID), ""); err != nil {
		t.Fatalf("the refund's workflow: %v", err)
	}
	s.AwaitWorkflow(t, contract.RefundWorkflowID(r.ID))
	var returned int64
	if err := s.DB.NewRaw("SELECT refunded FROM gateway_payments WHERE order_id = ?", orderID).Scan(ctx, &returned); err != nil ||
		refundStatus(r.ID) != states.RefundCompleted || returned != 100 {
		t.Fatalf("after the workflow: refund %s, %d returned by the gateway (%v)", refundStatus(r.ID), returned, err)
	}

	// A shell whose TASK_QUEUE no worker polls: recorded, pending, and no
	// workflow started where nobody would run it; the reaper starts it.
	t.Setenv("TASK_QUEUE", s.TaskQueue+"-nobody-polls")
	pendingAfter := func(ticketID int64, args ...string) string {
		t.Helper()
		out, err := ticketctl(t, append([]string{"order", "refund", "--company", cid, "--order", order, "--tickets", strconv.FormatInt(ticketID, 10)}, args...)...)
		if err != nil || !strings.Contains(out, "pending") || !strings.Contains(out, "reaper starts what was not started here") {
			t.Fatalf("refund of ticket %d: %v %s", ticketID, err, out)
		}
		var id string
		if err := s.DB.NewRaw("SELECT r.id FROM refunds r JOIN refund_tickets rt ON rt.refund_id = r.id WHERE rt.ticket_id = ?", ticketID).
			Scan(ctx, &id); err != nil || refundStatus(id) != states.RefundPending {
			t.Fatalf("the refund of ticket %d: %q %v", ticketID, id, err)
		}
		return id
	}
	strayQueue := pendingAfter(tickets[1])
	if _, err := s.Temporal.DescribeWorkflowExecution(ctx, contract.RefundWorkflowID(strayQueue), ""); err == nil {
		t.Fatalf("refund %s's workflow was started on a queue no worker polls", strayQueue)
	}
	t.Setenv("TASK_QUEUE", s.TaskQueue)

	// Temporal unreachable: recorded, pending, left to the reaper.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	unreachable := pendingAfter(tickets[2])
	s.StartReaper(t, 100*time.Millisecond, 0, time.Hour)
	for _, id := range []string{strayQueue, unreachable} {
		for deadline := time.Now().Add(20 * time.Second); refundStatus(id) != states.RefundCompleted; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the reaper did not finish refund %s: %s", id, refundStatus(id))
			}
		}
	}
}

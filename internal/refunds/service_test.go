package refunds_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// paidOrder sells n general-admission tickets of the company's stand-up
// night with the key, paid to the partner (external: a refund completes at
// once, no workflow), and returns the order and its tickets.
func paidOrder(t *testing.T, db *bun.DB, company, keyID int64, n int) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	var event, cat int64
	if err := db.NewRaw(`SELECT e.id, c.id FROM events e JOIN ticket_categories c ON c.event_id = e.id
		WHERE e.company_id = ? AND e.slug = 'standup' ORDER BY c.id LIMIT 1`, company).Scan(ctx, &event, &cat); err != nil {
		t.Fatal(err)
	}
	o := &store.Order{CompanyID: company, APIKeyID: keyID, EventID: event, Status: states.OrderPendingPayment,
		Payment: states.PayExternally, CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: time.Now().Add(time.Hour)}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, db, o, []store.ItemQuantity{{CategoryID: cat, Quantity: n, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.MarkOrderPaid(ctx, db, o.ID, "ext"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.IssueTickets(ctx, db, o.ID, delivery.NewBarcode); err != nil {
		t.Fatal(err)
	}
	var tickets []int64
	if err := db.NewRaw("SELECT id FROM tickets WHERE order_id = ? ORDER BY position", o.ID).Scan(ctx, &tickets); err != nil {
		t.Fatal(err)
	}
	return o.ID, tickets
}

// The one way a refund is made, over Postgres: who asks sees only their
// orders; a request out of bounds is refused before anything is read; the
// cabinet's record of a refund commits with it, once per form, and not at
// all when the refund is refused.
func TestRefundOneWay(t *testing.T) {
	ctx := context.Background()
	db, _ := testenv.DB(t)
	s := &testenv.Stack{DB: db}
	acme, other := s.Company(t, "Acme"), s.Company(t, "Other")
	s.Import(t, acme, catalogfile.Demo(time.Now()))
	_, keyID := s.Key(t, acme, apikey.Production)
	user, err := store.CreateCabinetUser(ctx, db, acme, "boss@acme.test", "owner")
	if err != nil {
		t.Fatal(err)
	}
	orderID, tickets := paidOrder(t, db, acme, keyID, 3)
	svc := refunds.New(refunds.Deps{DB: db, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Holds: holds.New(holds.Deps{DB: db}, holds.Settings{})}, "", refunds.Settings{})
	count := func(table string) (n int) {
		t.Helper()
		if err := db.NewRaw("SELECT count(*) FROM ? WHERE order_id = ?", bun.Ident(table), orderID).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	sandbox := &apikey.Principal{KeyID: keyID, CompanyID: acme, Environment: apikey.Sandbox}
	for name, in := range map[string]refunds.Request{
		"another company's organizer":  {By: refunds.AsOrganizer(other, true), OrderID: orderID, Source: refunds.OneOff()},
		"a sandbox key of the company": {By: refunds.AsPartner(sandbox), OrderID: orderID, Source: refunds.FromIdempotencyKey("k")},
	} {
		if _, err := svc.Refund(ctx, in); !errors.Is(err, errs.NotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	var bounds *refunds.RequestError
	if _, err := svc.Refund(ctx, refunds.Request{By: refunds.AsOrganizer(acme, false), OrderID: 999_999,
		TicketIDs: []int64{5, 5}, Source: refunds.OneOff()}); !errors.As(err, &bounds) {
		t.Errorf("a ticket twice of an unknown order: %v, want the request refused before the order is read", err)
	}

	form := func(token string, ticket int64) refunds.Request {
		return refunds.Request{By: refunds.AsOrganizer(acme, false), OrderID: orderID, TicketIDs: []int64{ticket},
			Reason: "moved", Source: refunds.FromCabinetToken(token),
			Action: &store.CabinetAction{CompanyID: acme, UserID: user.ID, OrderID: orderID, Action: "refund", Token: token}}
	}
	r, err := svc.Refund(ctx, form("token-one-0123456789", tickets[0]))
	if err != nil || r.ID != refunds.OrganizerRefundID(orderID, "token-one-0123456789", tickets[0:1]) || r.Status != states.RefundCompleted {
		t.Fatalf("a cabinet form's refund: %+v %v", r, err)
	}
	var recorded string
	if err := db.NewRaw("SELECT detail->>'refund_id' FROM cabinet_actions WHERE token = 'token-one-0123456789'").Scan(ctx, &recorded); err != nil || recorded != r.ID {
		t.Fatalf("the action's record names refund %q (%v), want %s", recorded, err, r.ID)
	}
	if _, err := svc.Refund(ctx, form("token-one-0123456789", tickets[0])); !errors.Is(err, store.ErrActionClaimed) {
		t.Fatalf("the same form again: %v, want its token claimed", err)
	}
	// Refused (refunded already): the form's record is undone with it.
	var state *errs.StateError
	if _, err := svc.Refund(ctx, form("token-two-0123456789", tickets[0])); !errors.As(err, &state) {
		t.Fatalf("a refunded ticket again: %v", err)
	}
	if n, a := count("refunds"), count("cabinet_actions"); n != 1 || a != 1 {
		t.Fatalf("after the repeat and the refusal: %d refunds, %d actions, want 1 and 1", n, a)
	}

	// The partner's and ticketctl's ways: the rest of the order.
	p := &apikey.Principal{KeyID: keyID, CompanyID: acme, Environment: apikey.Production}
	partner := refunds.Request{By: refunds.AsPartner(p), OrderID: orderID, TicketIDs: tickets[1:2], Source: refunds.FromIdempotencyKey("k-1")}
	first, err := svc.Refund(ctx, partner)
	again, err2 := svc.Refund(ctx, partner)
	if err != nil || err2 != nil || first.ID != again.ID || first.ID != refunds.ID(keyID, orderID, "k-1", tickets[1:2]) {
		t.Fatalf("a partner's refund and its repeat: %+v %v, %+v %v", first, err, again, err2)
	}
	last, err := svc.Refund(ctx, refunds.Request{By: refunds.AsOrganizer(acme, false), OrderID: orderID, Source: refunds.OneOff()})
	if err != nil || len(last.TicketIDs) != 1 || last.TicketIDs[0] != tickets[2] {
		t.Fatalf("the organizer's refund of every active ticket: %+v %v", last, err)
	}
	if st, err := store.GetOrderStatus(ctx, db, orderID); err != nil || st != states.OrderRefunded || count("refunds") != 3 {
		t.Fatalf("the order after its refunds: %s %v", st, err)
	}
}

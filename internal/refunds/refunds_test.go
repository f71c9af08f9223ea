package refunds

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

// A refund's id is the same for a repeat of the same request (the API
// key, the order, the Idempotency-Key and the tickets, in any order), so a
// retry after a lost answer finds the refund instead of making another;
// any other request gets another id.
func TestRefundIDFollowsTheRequest(t *testing.T) {
	id := ID(1, 100, "key-1", []int64{7, 8, 9})
	if again := ID(1, 100, "key-1", []int64{9, 7, 8}); again != id {
		t.Errorf("the same tickets in another order: %s, want %s", again, id)
	}
	others := map[string]string{
		"another API key":         ID(2, 100, "key-1", []int64{7, 8, 9}),
		"another order":           ID(1, 101, "key-1", []int64{7, 8, 9}),
		"another Idempotency-Key": ID(1, 100, "key-2", []int64{7, 8, 9}),
		"fewer tickets":           ID(1, 100, "key-1", []int64{7, 8}),
		"every active ticket":     ID(1, 100, "key-1", nil),
		// The key is free text: it must not run into the tickets.
		"a key ending like the tickets": ID(1, 100, "key-1|[7 8 9]", nil),
	}
	seen := map[string]string{id: "the request"}
	for name, other := range others {
		if was, ok := seen[other]; ok {
			t.Errorf("%s: the same id as %s (%s)", name, was, other)
		}
		seen[other] = name
	}
}

// Tickets the order does not have are a 422 naming each of them (a
// request error, nothing changed); tickets refunded already a 409
// invalid_state; any other error passes as it is.
func TestRefundErrors(t *testing.T) {
	err := refundError(fmt.Errorf("refund: %w", &store.RefundTicketsError{NotInOrder: []int64{41, 42}, Refunded: []int64{7}}))
	var verr *errs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("tickets of another order: %v", err)
	}
	var named []string
	for _, f := range verr.Fields {
		named = append(named, fmt.Sprint(f.Location, "=", f.Value))
	}
	if fmt.Sprint(named) != "[body.ticket_ids=41 body.ticket_ids=42]" {
		t.Errorf("tickets of another order: %v", named)
	}
	if p := verr.Problem(); p.Status != 422 || p.Code != "validation_error" {
		t.Errorf("tickets of another order answered %d %s", p.Status, p.Code)
	}
	err = refundError(&store.RefundTicketsError{Refunded: []int64{7}})
	var se *errs.StateError
	if !errors.As(err, &se) || se.Problem().Status != 409 || se.Problem().Code != "invalid_state" || se.Status != "refunded already" {
		t.Errorf("a ticket refunded already: %v", err)
	}
	if err := refundError(errs.NotFound); err != errs.NotFound {
		t.Errorf("another error: %v", err)
	}
	if err := refundError(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
}

// A refund's request holds its bounds whoever makes it (the partner API
// or the back office): at most 20 ticket ids, each a valid id once, a
// reason of at most 500 characters.
func TestRefundBounds(t *testing.T) {
	many := make([]int64, MaxTickets+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for _, c := range []struct {
		name    string
		tickets []int64
		reason  string
		field   string
	}{
		{"21 tickets", many, "", "body.ticket_ids"},
		{"ticket 0", []int64{0}, "", "body.ticket_ids[0]"},
		{"a negative ticket", []int64{5, -5}, "", "body.ticket_ids[1]"},
		{"a ticket twice", []int64{5, 5}, "", "body.ticket_ids[1]"},
		{"a reason of 501 characters", nil, strings.Repeat("я", 501), "body.reason"},
	} {
		err := checkRefund(c.tickets, c.reason)
		if _, ok := problems.Fields(t, err)[c.field]; !ok {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, err, c.field)
		}
	}
	if err := checkRefund(many[:MaxTickets], strings.Repeat("я", MaxReasonLength)); err != nil {
		t.Errorf("20 tickets and a reason of 500 characters: %v", err)
	}
	if err := checkRefund(nil, "Передумали.\nВернём позже."); err != nil {
		t.Errorf("a reason of two lines: %v", err)
	}
}

package store_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Which tickets a refund voids, and what refuses it, for each state an
// order's tickets can be in: the rule every refund path runs under the
// order's lock.
func TestRefundableTickets(t *testing.T) {
	active := func(id, price int64) store.RefundCandidate {
		return store.RefundCandidate{ID: id, Status: states.TicketActive, Price: price}
	}
	admitted := store.RefundCandidate{ID: 3, Status: states.TicketActive, Price: 1_500_000_00, CheckedIn: true}
	refunded := store.RefundCandidate{ID: 4, Status: states.TicketRefunded, Price: 700}
	all := []store.RefundCandidate{active(1, 2_500_000_00), active(2, 990), admitted, refunded}
	ids := func(cs []store.RefundCandidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, c := range []struct {
		name      string
		status    states.OrderStatus
		all       []store.RefundCandidate
		ticketIDs []int64
		allow     bool
		want      []int64
		wantErr   any // a pointer to the error type expected
	}{
		{"every active ticket, one admitted refuses", states.OrderPaid, all, nil, false, nil, new(*errs.CheckedInError)},
		{"every active ticket, the organizer's override", states.OrderPartiallyRefunded, all, nil, true, []int64{1, 2, 3}, nil},
		{"named tickets", states.OrderPaid, all, []int64{2, 1}, false, []int64{2, 1}, nil},
		{"a ticket of another order", states.OrderPaid, all, []int64{1, 99}, false, nil, new(*store.RefundTicketsError)},
		{"a ticket refunded already", states.OrderPartiallyRefunded, all, []int64{4}, false, nil, new(*store.RefundTicketsError)},
		{"an admitted ticket named", states.OrderPaid, all, []int64{3}, false, nil, new(*errs.CheckedInError)},
		{"an admitted ticket named, with the override", states.OrderPaid, all, []int64{3}, true, []int64{3}, nil},
		{"nothing active left", states.OrderPartiallyRefunded, []store.RefundCandidate{refunded}, nil, true, nil, new(*errs.StateError)},
		{"an order awaiting payment", states.OrderPendingPayment, all, nil, true, nil, new(*errs.StateError)},
		{"a cancelled order", states.OrderCancelled, all, []int64{1}, true, nil, new(*errs.StateError)},
		{"a refunded order", states.OrderRefunded, all, []int64{1}, true, nil, new(*errs.StateError)},
	} {
		got, err := store.RefundableTickets(7, c.status, c.all, c.ticketIDs, c.allow)
		switch e := c.wantErr.(type) {
		case nil:
			if err != nil || !slices.Equal(ids(got), c.want) {
				t.Errorf("%s: %v, %v; want %v", c.name, ids(got), err, c.want)
			}
		case **errs.CheckedInError:
			if !errors.As(err, e) || got != nil {
				t.Errorf("%s: %v, %v; want a CheckedInError", c.name, ids(got), err)
			}
		case **store.RefundTicketsError:
			if !errors.As(err, e) || got != nil {
				t.Errorf("%s: %v, %v; want a RefundTicketsError", c.name, ids(got), err)
			}
		case **errs.StateError:
			if !errors.As(err, e) || got != nil {
				t.Errorf("%s: %v, %v; want a StateError", c.name, ids(got), err)
			}
		}
	}
}

// A refund returns its tickets' prices, and the last one the rest of the
// order (its fee included): an order's refunds sum to what it cost.
func TestRefundAmount(t *testing.T) {
	two := []store.RefundCandidate{{ID: 1, Price: 2_500_000_00}, {ID: 2, Price: 990}}
	for _, c := range []struct {
		name            string
		chosen          []store.RefundCandidate
		active          int
		order, returned int64
		wantAmount      int64
		wantLast        bool
	}{
		{"some of three active", two, 3, 3_750_050_00, 0, 2_500_009_90, false},
		{"the last two, nothing returned before", two, 2, 2_625_050_00, 0, 2_625_050_00, true},
		{"the last two after an earlier refund", two, 2, 3_750_050_00, 1_250_000_00, 2_500_050_00, true},
		{"the last one", two[1:], 1, 2_625_050_00, 2_625_000_00, 50_00, true},
	} {
		amount, last := store.RefundAmount(c.chosen, c.active, c.order, c.returned)
		if amount != c.wantAmount || last != c.wantLast {
			t.Errorf("%s: %d, last %v; want %d, %v", c.name, amount, last, c.wantAmount, c.wantLast)
		}
	}
}

package states

import "testing"

// The order statuses each rule counts: a status added later must be placed
// here, or this table fails to cover it.
func TestOrderStatusRules(t *testing.T) {
	cases := []struct {
		status             OrderStatus
		sold, ticketsValid bool
	}{
		{OrderPendingPayment, false, false},
		{OrderPaid, true, true},
		{OrderCancelled, false, false},
		{OrderPartiallyRefunded, true, true},
		{OrderRefunded, true, false},
		{"", false, false},
		{"PAID", false, false},
	}
	covered := map[OrderStatus]bool{}
	for _, c := range cases {
		covered[c.status] = true
		if got := c.status.Sold(); got != c.sold {
			t.Errorf("%q.Sold() = %v, want %v", c.status, got, c.sold)
		}
		if got := c.status.TicketsValid(); got != c.ticketsValid {
			t.Errorf("%q.TicketsValid() = %v, want %v", c.status, got, c.ticketsValid)
		}
	}
	for _, s := range OrderStatuses {
		if !covered[s] {
			t.Errorf("status %q has no row in this table", s)
		}
	}
}

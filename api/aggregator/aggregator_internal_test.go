package aggregator

import (
	"testing"

	"github.com/ticketsales/ticketsales/internal/states"
)

func TestAggregatorStatusMapping(t *testing.T) {
	tests := []struct{ reservation, order, want string }{
		{"reserved", "", "RESERVED"},
		{"expired", "", "CANCELLED"},
		{"released", "", "CANCELLED"},
		{"ordered", "pending_payment", "RESERVED"},
		{"ordered", "paid", "APPROVED"},
		{"ordered", "partially_refunded", "APPROVED"},
		{"ordered", "refunded", "CANCELLED"},
		{"ordered", "cancelled", "CANCELLED"},
		{"", "", "CREATED"},
	}
	for _, tt := range tests {
		if got := aggregatorStatus(states.ReservationStatus(tt.reservation), states.OrderStatus(tt.order)); string(got) != tt.want {
			t.Errorf("aggregatorStatus(%q, %q) = %s, want %s", tt.reservation, tt.order, got, tt.want)
		}
	}
}

package aggregator

import (
	"strings"
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

// The aggregator's one name becomes a first and a last name: the first
// word and the rest, tabs and line breaks read as spaces (never stored);
// a first word or rest over 100 characters is refused naming the name.
func TestSplitName(t *testing.T) {
	for name, want := range map[string][2]string{
		"Иван Петров":               {"Иван", "Петров"},
		"Иван":                      {"Иван", "-"},
		"  Anna\tMaria\r\nPavlova ": {"Anna", "Maria Pavlova"},
		"Д'Артаньян Шарль де Батц": {"Д'Артаньян", "Шарль де Батц"},
	} {
		first, last, err := splitName(name)
		if err != nil || first != want[0] || last != want[1] {
			t.Errorf("%q: %q %q %v", name, first, last, err)
		}
	}
	if _, _, err := splitName("Иван " + strings.Repeat("Ю", 120)); err == nil || !strings.Contains(err.Error(), "body.customer.name") {
		t.Errorf("a rest of 120 characters: %v", err)
	}
}

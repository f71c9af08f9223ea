package pricing

import (
	"testing"
	"time"
)

func at(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func n(i int) *int { return &i }

func TestCurrentPrice(t *testing.T) {
	// The catalog example: stalls 3000.00, from Nov 28 3500.00, after 40 sold 4000.00.
	stalls := []PriceChange{
		{From: at("2026-11-28T00:00:00+03:00"), Price: 350000},
		{AfterSold: n(40), Price: 400000},
	}
	tests := []struct {
		name    string
		changes []PriceChange
		now     string
		sold    int
		want    int64
	}{
		{"no rules: base price", nil, "2026-11-21T12:00:00Z", 0, 300000},
		{"before the date, few sold", stalls, "2026-11-27T20:59:59Z", 39, 300000},
		{"exactly at the date", stalls, "2026-11-27T21:00:00Z", 0, 350000},
		{"after the date", stalls, "2026-11-29T10:00:00Z", 10, 350000},
		{"sold threshold reached before the date", stalls, "2026-11-21T12:00:00Z", 40, 400000},
		{"one short of the threshold", stalls, "2026-11-21T12:00:00Z", 39, 300000},
		{"both apply: the later rule wins", stalls, "2026-11-29T10:00:00Z", 41, 400000},
		{"both apply, reversed order: the later rule wins",
			[]PriceChange{stalls[1], stalls[0]}, "2026-11-29T10:00:00Z", 41, 350000},
		{"a price may go down", []PriceChange{{From: at("2026-11-01T00:00:00Z"), Price: 100}},
			"2026-11-02T00:00:00Z", 0, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now, _ := time.Parse(time.RFC3339, tt.now)
			if got := CurrentPrice(300000, tt.changes, now, tt.sold); got != tt.want {
				t.Errorf("CurrentPrice = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFeeEstimates(t *testing.T) {
	tests := []struct {
		name      string
		fee       Fee
		price     int64
		wantFee   int64
		wantTotal int64
	}{
		{"10% separate", Fee{Separate, 1000, 5000}, 300000, 30000, 330000},
		{"estimate has no minimum", Fee{Separate, 1000, 5000}, 100, 10, 110},
		{"half a kopeck rounds up", Fee{Separate, 500, 0}, 10, 1, 11},           // 0.5 → 1
		{"just under half rounds down", Fee{Separate, 500, 0}, 9, 0, 9},         // 0.45 → 0
		{"1.5 rounds up to 2", Fee{Separate, 1500, 0}, 10, 2, 12},               // 1.5 → 2
		{"2.5 rounds up to 3 (not to even)", Fee{Separate, 2500, 0}, 10, 3, 13}, // 2.5 → 3
		{"included: buyer pays the price", Fee{Included, 800, 0}, 120000, 9600, 120000},
		{"zero rate", Fee{Separate, 0, 0}, 5000, 0, 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fee.PerTicket(tt.price); got != tt.wantFee {
				t.Errorf("PerTicket = %d, want %d", got, tt.wantFee)
			}
			if got := tt.fee.PriceTotal(tt.price); got != tt.wantTotal {
				t.Errorf("PriceTotal = %d, want %d", got, tt.wantTotal)
			}
		})
	}
}

func TestOrderFee(t *testing.T) {
	tests := []struct {
		name   string
		fee    Fee
		prices []int64
		want   Quote
	}{
		{"separate, over the minimum", Fee{Separate, 1000, 5000}, []int64{300000, 150000},
			Quote{Total: 450000, Fee: 45000, Amount: 495000}},
		{"separate, minimum once per order not per ticket", Fee{Separate, 1000, 5000}, []int64{10000, 10000, 10000},
			Quote{Total: 30000, Fee: 5000, Amount: 35000}},
		{"order fee from the sum, not the sum of rounded estimates", Fee{Separate, 500, 0}, []int64{10, 10, 10},
			Quote{Total: 30, Fee: 2, Amount: 32}}, // 3 × round(0.5)=3, but round(1.5)=2
		{"included: amount is the sum", Fee{Included, 800, 0}, []int64{120000, 120000},
			Quote{Total: 240000, Fee: 19200, Amount: 240000}},
		{"included with minimum: fee inside, amount unchanged", Fee{Included, 100, 5000}, []int64{1000},
			Quote{Total: 1000, Fee: 5000, Amount: 1000}},
		{"rounding half up on the order sum", Fee{Separate, 1250, 0}, []int64{4, 8},
			Quote{Total: 12, Fee: 2, Amount: 14}}, // 1.5 → 2
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fee.Order(tt.prices...); got != tt.want {
				t.Errorf("Order = %+v, want %+v", got, tt.want)
			}
		})
	}
}

package pricing_test

import (
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/pricing"
)

// Bounds of the fee inputs: what the catalog file admits, with room to spare.
const (
	fuzzMaxPrice  = 10_000_000_000 // kopecks per ticket
	fuzzMaxItems  = 20             // seats per hold or order
	fuzzMaxRateBP = 10_000
	fuzzMaxMinFee = 1_000_000_000
)

// bounded maps any v onto 0..limit.
func bounded(v, limit int64) int64 {
	m := v % (limit + 1)
	if m < 0 {
		m += limit + 1
	}
	return m
}

// fuzzPrices turns raw bytes into 1..20 prices of 0..1e10 kopecks, 8 bytes a
// price (missing bytes are zero).
func fuzzPrices(raw []byte) []int64 {
	n := min(max((len(raw)+7)/8, 1), fuzzMaxItems)
	prices := make([]int64, n)
	for i := range prices {
		var b [8]byte
		if i*8 < len(raw) {
			copy(b[:], raw[i*8:])
		}
		prices[i] = int64(binary.LittleEndian.Uint64(b[:]) % (fuzzMaxPrice + 1))
	}
	return prices
}

// bigRoundHalfUp is round_half_up(amount × bp / 10000) in exact arithmetic.
func bigRoundHalfUp(amount *big.Int, bp int64) *big.Int {
	num := new(big.Int).Mul(amount, big.NewInt(bp))
	q, r := new(big.Int).QuoRem(num, big.NewInt(10_000), new(big.Int))
	if r.Cmp(big.NewInt(5_000)) >= 0 { // amount, bp ≥ 0: r ≥ 0
		q.Add(q, big.NewInt(1))
	}
	return q
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// FuzzFees checks the fee arithmetic against math/big: the order total is the
// sum of the prices, the fee max(round_half_up(total × rate), min_fee) once
// per order, the amount total (+ fee when separate), nothing negative, and the
// per-ticket estimate round_half_up(price × rate).
func FuzzFees(f *testing.F) {
	f.Add(le64(300000), int64(1000), int64(5000), true)                                   // one stall: fee 30000
	f.Add(append(le64(300000), le64(300000)...), int64(1000), int64(5000), true)          // two stalls
	f.Add(le64(1000), int64(1000), int64(5000), true)                                     // the minimum wins
	f.Add(le64(5), int64(1000), int64(0), false)                                          // 0.5 rounds up
	f.Add(le64(15), int64(333), int64(0), false)                                          // 0.4995 rounds down
	f.Add(le64(0), int64(0), int64(0), true)                                              // free ticket, no fee
	f.Add(le64(fuzzMaxPrice), int64(fuzzMaxRateBP), int64(fuzzMaxMinFee), true)           // largest single
	f.Add(make([]byte, 8*fuzzMaxItems), int64(fuzzMaxRateBP), int64(fuzzMaxMinFee), true) // 20 free tickets
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, int64(-1), int64(-1), false)
	max20 := []byte{}
	for range fuzzMaxItems {
		max20 = append(max20, le64(fuzzMaxPrice)...)
	}
	f.Add(max20, int64(fuzzMaxRateBP), int64(0), true) // the largest order
	f.Add(max20, int64(9999), int64(fuzzMaxMinFee), false)
	f.Add([]byte{}, int64(5000), int64(1), true)

	f.Fuzz(func(t *testing.T, raw []byte, rateBP, minFee int64, separate bool) {
		prices := fuzzPrices(raw)
		mode := pricing.Included
		if separate {
			mode = pricing.Separate
		}
		fee := pricing.Fee{Mode: mode, RateBP: bounded(rateBP, fuzzMaxRateBP), MinFee: bounded(minFee, fuzzMaxMinFee)}

		total := new(big.Int)
		for _, p := range prices {
			total.Add(total, big.NewInt(p))
		}
		wantFee := bigRoundHalfUp(total, fee.RateBP)
		if m := big.NewInt(fee.MinFee); wantFee.Cmp(m) < 0 {
			wantFee = m
		}
		wantAmount := new(big.Int).Set(total)
		if mode == pricing.Separate {
			wantAmount.Add(wantAmount, wantFee)
		}

		q := fee.Order(prices...)
		if big.NewInt(q.Total).Cmp(total) != 0 {
			t.Errorf("Order(%v).Total = %d, want %s", prices, q.Total, total)
		}
		if big.NewInt(q.Fee).Cmp(wantFee) != 0 {
			t.Errorf("Order(%v) with %+v: Fee = %d, want %s", prices, fee, q.Fee, wantFee)
		}
		if big.NewInt(q.Amount).Cmp(wantAmount) != 0 {
			t.Errorf("Order(%v) with %+v: Amount = %d, want %s", prices, fee, q.Amount, wantAmount)
		}
		if q.Total < 0 || q.Fee < 0 || q.Amount < 0 {
			t.Errorf("Order(%v) with %+v: negative quote %+v", prices, fee, q)
		}
		for _, p := range prices {
			want := bigRoundHalfUp(big.NewInt(p), fee.RateBP)
			got := fee.PerTicket(p)
			if big.NewInt(got).Cmp(want) != 0 || got < 0 {
				t.Errorf("PerTicket(%d) with rate %d = %d, want %s", p, fee.RateBP, got, want)
			}
			wantTotal := p
			if mode == pricing.Separate {
				wantTotal += got
			}
			if pt := fee.PriceTotal(p); pt != wantTotal {
				t.Errorf("PriceTotal(%d) with %+v = %d, want %d", p, fee, pt, wantTotal)
			}
		}
	})
}

// fuzzRules turns raw bytes into price rules, 11 bytes a rule: a kind byte
// (from a moment, after a number sold, or — never in a valid file — neither),
// a 2-byte offset from now (seconds) or from sold, and an 8-byte price.
// Offsets near now and sold make the boundaries easy to hit.
func fuzzRules(raw []byte, now time.Time, sold int) []pricing.PriceChange {
	var rules []pricing.PriceChange
	for ; len(raw) >= 11; raw = raw[11:] {
		delta := int(int16(binary.LittleEndian.Uint16(raw[1:3])))
		c := pricing.PriceChange{Price: int64(binary.LittleEndian.Uint64(raw[3:11]))}
		switch raw[0] % 3 {
		case 0:
			from := now.Add(time.Duration(delta) * time.Second)
			c.From = &from
		case 1:
			after := sold + delta
			c.AfterSold = &after
		}
		rules = append(rules, c)
	}
	return rules
}

// rule encodes one rule for fuzzRules.
func rule(kind byte, delta int16, price int64) []byte {
	b := []byte{kind}
	b = binary.LittleEndian.AppendUint16(b, uint16(delta))
	return binary.LittleEndian.AppendUint64(b, uint64(price))
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// FuzzCurrentPrice checks CurrentPrice against a reimplementation: the price
// of the last rule in the list that is in force (a date rule from its moment
// on, a count rule from that many sold on), else the base price.
func FuzzCurrentPrice(f *testing.F) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).Unix()
	f.Add(int64(300000), []byte{}, now, 0)
	f.Add(int64(300000), cat(rule(0, 0, 350000), rule(1, 0, 400000)), now, 40)         // both at the boundary: last wins
	f.Add(int64(300000), cat(rule(1, 0, 400000), rule(0, 0, 350000)), now, 40)         // reversed
	f.Add(int64(300000), cat(rule(0, 1, 350000), rule(1, 1, 400000)), now, 39)         // one short of each
	f.Add(int64(300000), cat(rule(0, -1, 350000), rule(1, 1, 400000)), now, 39)        // the date has passed
	f.Add(int64(100), cat(rule(0, -3600, 1), rule(0, -60, 2), rule(0, 60, 3)), now, 0) // later rule not yet in force
	f.Add(int64(0), cat(rule(2, 0, 7)), now, 0)                                        // neither from nor after_sold
	f.Add(int64(5), cat(rule(1, -10, 9), rule(1, -32768, -1)), int64(-62135596800), 0)
	f.Add(int64(-1), cat(rule(0, 32767, 1<<62)), int64(1<<40), 1<<30)

	f.Fuzz(func(t *testing.T, base int64, raw []byte, nowUnix int64, sold int) {
		at := time.Unix(nowUnix, 0).UTC()
		rules := fuzzRules(raw, at, sold)

		want := base
		for i := len(rules) - 1; i >= 0; i-- {
			r := rules[i]
			if (r.From != nil && !r.From.After(at)) || (r.AfterSold != nil && sold >= *r.AfterSold) {
				want = r.Price
				break
			}
		}
		if got := pricing.CurrentPrice(base, rules, at, sold); got != want {
			t.Errorf("CurrentPrice(%d, %d rules, %s, sold %d) = %d, want %d", base, len(rules), at.Format(time.RFC3339), sold, got, want)
		}
	})
}

package delivery

import (
	"strconv"
	"strings"
)

// FormatMoney formats an amount in minor units as "3 000.00 RUB": thousands
// grouped with a space, a dot and 2 decimals, then the currency code. Every
// currency is assumed to have 2 minor digits (true for RUB, USD, EUR, ...).
// Negative amounts get a leading "-". An empty currency gives just the number.
func FormatMoney(minor int64, currency string) string {
	neg := minor < 0
	// Work in uint64 so math.MinInt64 does not overflow when negated.
	abs := uint64(minor)
	if neg {
		abs = -abs
	}
	whole := strconv.FormatUint(abs/100, 10)
	frac := abs % 100

	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(whole); i++ {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(whole[i])
	}
	b.WriteByte('.')
	b.WriteByte(byte('0' + frac/10))
	b.WriteByte(byte('0' + frac%10))
	if c := strings.TrimSpace(currency); c != "" {
		b.WriteByte(' ')
		b.WriteString(c)
	}
	return b.String()
}

package pricing

import (
	"fmt"
	"strconv"
	"strings"
)

// Format shows minor units as the currency's major units, as the cabinet's
// pages and timelines show money: 123456 RUB is "1 234.56 RUB" (a narrow
// no-break space between thousands), a negative sum with a minus sign.
func Format(minor int64, currency string) string {
	sign := ""
	if minor < 0 {
		sign, minor = "−", -minor
	}
	whole := strconv.FormatInt(minor/100, 10)
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(d)
	}
	return fmt.Sprintf("%s%s.%02d %s", sign, b.String(), minor%100, currency)
}

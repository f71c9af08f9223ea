// Package pricing holds the money arithmetic: current ticket prices after
// price changes, and the service fee of a ticket and of an order. All sums
// are integers in minor units (kopecks); nothing here touches a float.
package pricing

import "time"

// Money is a sum in minor units of a currency.
type Money struct {
	Amount   int64  `json:"amount" doc:"Integer sum in minor units (kopecks)."`
	Currency string `json:"currency" example:"RUB"`
}

// Mode says whether the service fee is inside the price or on top of it.
type Mode string

const (
	// Included: the buyer pays the price; the fee is taken out of it.
	Included Mode = "included"
	// Separate: the buyer pays price plus fee.
	Separate Mode = "separate"
)

// Modes are the fee modes, in the order the API documents them.
var Modes = []Mode{Included, Separate}

// PriceChange is one rule of a category's price: from a moment (From) or
// after a number of the category's tickets were sold (AfterSold).
type PriceChange struct {
	From      *time.Time `json:"from,omitempty"`
	AfterSold *int       `json:"after_sold,omitempty"`
	Price     int64      `json:"price"`
}

// applies tells whether the rule is in force at now with sold tickets sold.
func (c PriceChange) applies(now time.Time, sold int) bool {
	switch {
	case c.From != nil:
		return !now.Before(*c.From)
	case c.AfterSold != nil:
		return sold >= *c.AfterSold
	}
	return false
}

// CurrentPrice is the category's price at now, given how many of its tickets
// are sold: the latest applicable rule in the list wins, else the base price.
func CurrentPrice(base int64, changes []PriceChange, now time.Time, sold int) int64 {
	price := base
	for _, c := range changes {
		if c.applies(now, sold) {
			price = c.Price
		}
	}
	return price
}

// Fee is an event's fee setting.
type Fee struct {
	Mode   Mode
	RateBP int64 // basis points: 1000 = 10%
	MinFee int64 // minor units, taken once per order
}

// roundHalfUp returns round_half_up(amount × bp / 10000) for amount, bp ≥ 0.
func roundHalfUp(amount, bp int64) int64 {
	return (amount*bp + 5000) / 10000
}

// PerTicket is the fee estimate for one ticket of the given price: no
// minimum, since the minimum is taken once per order.
func (f Fee) PerTicket(price int64) int64 {
	return roundHalfUp(price, f.RateBP)
}

// PriceTotal is what the buyer pays for one ticket: price + fee for
// separate, the price alone for included.
func (f Fee) PriceTotal(price int64) int64 {
	if f.Mode == Separate {
		return price + f.PerTicket(price)
	}
	return price
}

// Quote is the fee and the amount to collect for a set of tickets.
type Quote struct {
	Total  int64 // Σ ticket prices
	Fee    int64 // max(round_half_up(Total × rate), MinFee)
	Amount int64 // what the buyer pays
}

// Order computes the order's fee from the order sum, with the minimum fee
// once per order, and the amount to collect.
func (f Fee) Order(prices ...int64) Quote {
	var q Quote
	for _, p := range prices {
		q.Total += p
	}
	q.Fee = max(roundHalfUp(q.Total, f.RateBP), f.MinFee)
	q.Amount = q.Total
	if f.Mode == Separate {
		q.Amount += q.Fee
	}
	return q
}

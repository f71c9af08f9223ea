package errs

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Each error is answered as docs/api.md promises partners: its status, its
// code, a Retry-After where a retry helps, and a detail that says what to
// do (and, where the contract says so, that nothing was changed). Wrapped
// with business context, it is answered the same.
func TestEveryErrorIsAnsweredAsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	available := 3
	opens := time.Date(2026, 12, 1, 12, 0, 0, 0, time.FixedZone("MSK", 3*3600))
	for _, c := range []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter time.Duration
		says       string // in the detail
	}{
		{"not found", NotFound, 404, "not_found", 0, "not visible to this API key"},
		{"no seating scheme", NoScheme, 404, "not_found", 0, "order them by items"},
		{"a hold past its deadline", ReservationExpired, 409, "reservation_expired", 0, "expired"},
		{"an order past its payment window", OrderExpired, 409, "order_expired", 0, "seats were freed"},
		{"cancelling a paid order", OrderPaid, 409, "order_paid", 0, "refund it instead"},
		{"a payment on record otherwise", PaymentConflict, 409, "invalid_state", 0, "not applied"},
		{"no gateway for production", GatewayUnavailable, 422, "gateway_unavailable", 0, "Nothing was changed"},
		{"a backing service down", Unavailable, 503, "unavailable", 5 * time.Second, "nothing was changed"},
		{"a backing service down half-way", Incomplete, 503, "unavailable", 5 * time.Second, "same Idempotency-Key"},
		{"seats taken", &SeatTakenError{Seats: []SeatRef{{ZoneID: "a", SeatID: "a-1-1"}}}, 409, "seat_taken", 0, "refresh availability"},
		{"a bad field", Invalid("body.seats", "give either seats or best_available", nil), 422, "validation_error", 0, ""},
		{"a forbidden transition", &StateError{Entity: "order", ID: "5", Status: "refunded"}, 409, "invalid_state", 0, "The order is refunded"},
		{"sold out", &SoldOutError{CategoryIDs: []int64{3}}, 409, "sold_out", 0, "Not enough tickets"},
		{"sold out but for channels", &SoldOutError{CategoryIDs: []int64{3}, Withheld: true}, 409, "sold_out", 0, "allocated to sales channels"},
		{"allocated elsewhere", &NotForSaleError{Seats: []SeatRef{{ZoneID: "A", SeatID: "A-1-1"}}}, 409, "seat_not_for_sale", 0, "another sales channel"},
		{"presale only", &SalesWindowError{OpensAt: &opens}, 409, "sales_not_open", 0, "open at 2026-12-01T09:00:00Z"},
		{"closed", &SalesWindowError{ClosedAt: &opens}, 409, "sales_closed", 0, "closed at 2026-12-01T09:00:00Z"},
		{"no best seats fit", &SoldOutError{Available: &available}, 409, "sold_out", 0, "3 free seats are left"},
		{"no best seats side by side", &SoldOutError{Available: &available, Together: true}, 409, "sold_out", 0, "No side-by-side seats"},
		{"another amount", &AmountMismatchError{Paid: 1, Amount: 2}, 422, "amount_mismatch", 0, "nothing was changed"},
		{"too many endpoints", &LimitError{Max: 10}, 409, "limit_reached", 0, "already has 10 webhook endpoints"},
		{"a hold at its longest", &HoldLimitError{MaxMinutes: 60, Latest: opens}, 409, "hold_limit_reached", 0, "until 2026-12-01T09:00:00Z"},
		{"too many test pings", &RateError{What: "test events", PerMinute: 10, RetryAfter: 12 * time.Second}, 429, "rate_limited", 12 * time.Second, "At most 10 test events per minute"},
	} {
		for _, err := range []error{c.err, fmt.Errorf("order 5: %w", c.err)} {
			var coded Coded
			if !errors.As(err, &coded) {
				t.Errorf("%s: %v carries no problem", c.name, err)
				continue
			}
			p := coded.Problem()
			if p.Status != c.status || p.Code != c.code || p.RetryAfter != c.retryAfter || !strings.Contains(p.Detail, c.says) {
				t.Errorf("%s: answered %d %s, Retry-After %v, %q; want %d %s, Retry-After %v, saying %q",
					c.name, p.Status, p.Code, p.RetryAfter, p.Detail, c.status, c.code, c.retryAfter, c.says)
			}
		}
		if !strings.Contains(string(doc), fmt.Sprintf("%d `%s`", c.status, c.code)) {
			t.Errorf("%s: docs/api.md names no %d `%s`", c.name, c.status, c.code)
		}
	}
}

// A failure after the request changed something must not claim nothing
// was changed: the partner would not retry what it began.
func TestIncompleteDoesNotClaimNothingChanged(t *testing.T) {
	if d := Incomplete.Problem().Detail; strings.Contains(strings.ToLower(d), "nothing was changed") {
		t.Errorf("Incomplete says %q", d)
	}
}

// Retry-After of a rate limit is in whole seconds, rounded up and at least
// one, and the detail says the same number: a client that waits that long
// is let through.
func TestRateErrorRetryAfter(t *testing.T) {
	for wait, want := range map[time.Duration]time.Duration{
		0:                        time.Second,
		300 * time.Millisecond:   time.Second,
		time.Second:              time.Second,
		1001 * time.Millisecond:  2 * time.Second,
		59500 * time.Millisecond: time.Minute,
	} {
		p := (&RateError{What: "redeliveries", PerMinute: 60, RetryAfter: wait}).Problem()
		if p.RetryAfter != want || !strings.Contains(p.Detail, fmt.Sprintf("in %d s.", int(want.Seconds()))) {
			t.Errorf("waiting %v: Retry-After %v, %q; want %v", wait, p.RetryAfter, p.Detail, want)
		}
	}
}

// Field errors are collected, so a request hears of every problem at once;
// none is no error.
func TestValidationErrorCollectsFields(t *testing.T) {
	verr := &ValidationError{}
	if err := verr.OrNil(); err != nil {
		t.Fatalf("no field errors: %v", err)
	}
	verr.Add("body.seats[2].seat_id", "seat listed twice", "a-1-1")
	verr.Add("body.ttl_minutes", "must be 1..60", 61)
	var got *ValidationError
	if !errors.As(verr.OrNil(), &got) || len(got.Fields) != 2 || got.Fields[1].Value != 61 {
		t.Errorf("two field errors: %+v", got)
	}
}

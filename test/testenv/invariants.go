package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// paymentChecks are the money invariants, each a query counting
// violations (or the kopecks out of balance).
var paymentChecks = []struct{ name, sql string }{
	{"payments received = paid orders' amounts + refunded", `
		SELECT (SELECT coalesce(sum(amount), 0) FROM payments)
			- (SELECT coalesce(sum(o.amount), 0) FROM orders o WHERE o.payment = 'gateway'
				AND o.status IN ('paid', 'partially_refunded', 'refunded'))
			- (SELECT coalesce(sum(p.amount), 0) FROM payments p WHERE p.status = 'applied'
				AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = p.order_id)) -- deleted sandbox orders
			- (SELECT coalesce(sum(amount), 0) FROM payments WHERE status = 'refunded')`},
	{"paid gateway order without exactly one applied payment of its amount", `
		SELECT count(*) FROM orders o WHERE o.payment = 'gateway' AND o.status IN ('paid', 'partially_refunded', 'refunded')
			AND (SELECT count(*) FROM payments p WHERE p.order_id = o.id AND p.status = 'applied' AND p.amount = o.amount
				AND p.id = o.payment_id) <> 1`},
	{"applied payment whose order is not paid", `
		SELECT count(*) FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE p.status = 'applied' AND o.status NOT IN ('paid', 'partially_refunded', 'refunded')`},
	{"payment taken on the test gateway but not on record", `
		SELECT count(*) FROM gateway_payments g WHERE g.status = 'paid'
			AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.gateway = 'test' AND p.id = g.id)`},
	{"payment taken for a cancelled order and not returned", `
		SELECT count(*) FROM gateway_payments g JOIN orders o ON o.id = g.order_id
		WHERE g.status = 'paid' AND o.status = 'cancelled' AND g.refunded < g.amount`},
}

// PaymentViolations checks the money invariants once every recorded payment
// is settled (none received or due back): it returns the broken ones by
// name, and the payments still in flight.
func PaymentViolations(ctx context.Context, db bun.IDB) (broken map[string]int64, inFlight int, err error) {
	if err := db.NewRaw("SELECT count(*) FROM payments WHERE status IN ('received', 'refund_due')").Scan(ctx, &inFlight); err != nil {
		return nil, 0, fmt.Errorf("payments in flight: %w", err)
	}
	broken = map[string]int64{}
	for _, c := range paymentChecks {
		var n int64
		if err := db.NewRaw(c.sql).Scan(ctx, &n); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", c.name, err)
		}
		if n != 0 {
			broken[c.name] = n
		}
	}
	return broken, inFlight, nil
}

// CheckPayments waits up to wait for every payment to be settled, then
// fails the test for each broken money invariant.
func CheckPayments(t testing.TB, db bun.IDB, wait time.Duration) {
	t.Helper()
	var broken map[string]int64
	var inFlight int
	var err error
	for deadline := time.Now().Add(wait); ; time.Sleep(100 * time.Millisecond) {
		broken, inFlight, err = PaymentViolations(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if (inFlight == 0 && len(broken) == 0) || time.Now().After(deadline) {
			break
		}
	}
	if inFlight > 0 {
		t.Errorf("%d payments still received or due back", inFlight)
	}
	for name, n := range broken {
		t.Errorf("money invariant broken: %s: %d", name, n)
	}
}

// salesChecks are the inventory invariants, each a query counting
// violations: a seat is sold or held once at most, and a paid order holds
// exactly its seats and tickets.
var salesChecks = []struct{ name, sql string }{
	{"paid order seat not sold to it", `
		SELECT count(*) FROM order_items i JOIN orders o ON o.id = i.order_id
		WHERE o.status = 'paid' AND i.seat_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM event_seats s
			WHERE s.event_id = o.event_id AND s.seat_id = i.seat_id AND s.order_id = o.id AND s.state = 'sold')`},
	{"sold seat without a paid order", `
		SELECT count(*) FROM event_seats s WHERE s.state = 'sold' AND NOT EXISTS
			(SELECT 1 FROM orders o WHERE o.id = s.order_id AND o.status IN ('paid', 'partially_refunded'))`},
	{"paid order without exactly its tickets", `
		SELECT count(*) FROM orders o WHERE o.status = 'paid' AND
			(SELECT count(*) FROM tickets t WHERE t.order_id = o.id) <> (SELECT count(*) FROM order_items i WHERE i.order_id = o.id)`},
	{"seat of two live orders (unpaid, or with an active ticket)", `
		SELECT count(*) FROM (SELECT o.event_id, i.seat_id FROM order_items i JOIN orders o ON o.id = i.order_id
			WHERE i.seat_id IS NOT NULL AND (o.status = 'pending_payment' OR EXISTS (SELECT 1 FROM tickets t
				WHERE t.order_id = i.order_id AND t.position = i.position AND t.status = 'active'))
			GROUP BY o.event_id, i.seat_id HAVING count(*) > 1) twice`},
	{"seat of two live reservations", `
		SELECT count(*) FROM (SELECT rs.event_id, rs.seat_id FROM reservation_seats rs JOIN reservations r ON r.id = rs.reservation_id
			WHERE r.status = 'reserved' AND r.expires_at > now()
			GROUP BY rs.event_id, rs.seat_id HAVING count(*) > 1) twice`},
}

// SalesViolations checks the inventory invariants: it returns the broken
// ones by name with their counts.
func SalesViolations(ctx context.Context, db bun.IDB) (map[string]int64, error) {
	broken := map[string]int64{}
	for _, c := range salesChecks {
		var n int64
		if err := db.NewRaw(c.sql).Scan(ctx, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if n != 0 {
			broken[c.name] = n
		}
	}
	return broken, nil
}

// CheckSales fails the test for each broken inventory invariant.
func CheckSales(t testing.TB, db bun.IDB) {
	t.Helper()
	broken, err := SalesViolations(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range broken {
		t.Errorf("inventory invariant broken: %s: %d", name, n)
	}
}

// limitChecks are the bounds the API states, as Postgres holds them: each
// query counts the rows past one. A request can be validated as one thing
// and used as another; these read what was stored.
var limitChecks = []struct{ name, sql string }{
	{"hold longer than 60 minutes", `
		SELECT count(*) FROM reservations WHERE expires_at > created_at + interval '60 minutes 5 seconds'`},
	{"hold of more than 20 seats", `
		SELECT count(*) FROM (SELECT reservation_id FROM reservation_seats GROUP BY 1 HAVING count(*) > 20) r`},
	{"order of no ticket or more than 20", `
		SELECT count(*) FROM orders o WHERE (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) NOT BETWEEN 1 AND 20`},
	{"order with a negative sum", `SELECT count(*) FROM orders WHERE amount < 0 OR total < 0 OR service_fee < 0`},
	{"buyer past its bounds", `
		SELECT count(*) FROM orders WHERE char_length(customer_email) > 254 OR customer_email ~ '[[:cntrl:][:space:]]'
			OR char_length(customer_first_name) > 100 OR char_length(customer_last_name) > 100
			OR customer_first_name ~ '[[:cntrl:]]' OR customer_last_name ~ '[[:cntrl:]]' OR char_length(customer_phone) > 26`},
	{"payment reference past 200 characters", `SELECT count(*) FROM orders WHERE char_length(payment_id) > 200`},
	{"scan past its bounds", `
		SELECT count(*) FROM check_ins WHERE char_length(barcode) > 160 OR char_length(gate) > 64 OR char_length(device_id) > 100
			OR gate ~ '[[:cntrl:]]' OR device_id ~ '[[:cntrl:]]'`},
	{"refund reason past 500 characters", `SELECT count(*) FROM refunds WHERE char_length(reason) > 500`},
	{"refund of more than 20 tickets", `
		SELECT count(*) FROM (SELECT refund_id FROM refund_tickets GROUP BY 1 HAVING count(*) > 20) r`},
	{"webhook endpoint past its bounds", `
		SELECT count(*) FROM webhook_endpoints WHERE char_length(url) > 2000 OR char_length(description) > 500
			OR cardinality(event_types) > 20`},
}

// LimitViolations returns the stored rows past the API's bounds, by bound.
func LimitViolations(ctx context.Context, db bun.IDB) (map[string]int64, error) {
	broken := map[string]int64{}
	for _, c := range limitChecks {
		var n int64
		if err := db.NewRaw(c.sql).Scan(ctx, &n); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if n != 0 {
			broken[c.name] = n
		}
	}
	return broken, nil
}

package store_test

import (
	"context"
	"testing"
	"time"

	"ticketsales/store/migrations"
)

// Migration 15 reports again the old test payments nobody kept track of:
// paid, neither applied to their order nor returned nor on record.
func TestMigrationReportsDroppedTestPaymentsAgain(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	o, _ := d.gaOrder(t, 1, time.Now().Add(time.Hour))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := d.DB.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	add := func(id string, orderID, refunded int64) {
		exec(`INSERT INTO gateway_payments (id, order_id, amount, currency, description, status, refunded, reported_at)
			VALUES (?, ?, 100, 'EUR', 'x', 'paid', ?, now())`, id, orderID, refunded)
	}
	add("dropped", 999999, 0)
	add("applied", o.ID, 0)
	exec("UPDATE orders SET payment_id = 'applied', paid_at = now() WHERE id = ?", o.ID)
	add("returned", 999998, 100)
	add("recorded", 999997, 0)
	exec(`INSERT INTO payments (gateway, id, order_id, amount, currency) VALUES ('test', 'recorded', 999997, 100, 'EUR')`)

	sql, err := migrations.FS.ReadFile("20261123000015_unreported_test_payments.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	exec(string(sql))

	rows, err := d.DB.QueryContext(ctx, "SELECT id FROM gateway_payments WHERE reported_at IS NULL ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var unreported []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		unreported = append(unreported, id)
	}
	if len(unreported) != 1 || unreported[0] != "dropped" {
		t.Fatalf("payments to report again = %v, want [dropped]", unreported)
	}
}

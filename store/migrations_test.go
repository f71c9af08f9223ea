package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/store/migrations"

	"github.com/uptrace/bun/dialect/pgdialect"
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

// Migration 23 takes checkin from keys made when it was a default scope
// (they could admit tickets and read orders), and from then on a key with
// checkin carries nothing else.
func TestMigrationSeparatesDoorKeys(t *testing.T) {
	d := newDemo(t)
	ctx := context.Background()
	exec := func(q string, args ...any) error {
		_, err := d.DB.ExecContext(ctx, q, args...)
		return err
	}
	if err := exec(`UPDATE api_keys SET scopes = ARRAY['checkin', 'orders:read'] WHERE id = ?`, d.keyID); err == nil {
		t.Fatal("a key with checkin and orders:read was stored")
	}
	for _, c := range []string{"api_keys_door_limits", "api_keys_checkin_alone"} {
		if err := exec("ALTER TABLE api_keys DROP CONSTRAINT " + c); err != nil {
			t.Fatal(err)
		}
	}
	if err := exec(`UPDATE api_keys SET scopes = ARRAY['catalog:read', 'checkin', 'orders:read'] WHERE id = ?`, d.keyID); err != nil {
		t.Fatal(err)
	}
	sql, err := migrations.FS.ReadFile("20261127000023_door_keys.tx.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := exec(string(sql)); err != nil {
		t.Fatal(err)
	}
	var scopes []string
	if err := d.DB.NewRaw("SELECT scopes FROM api_keys WHERE id = ?", d.keyID).Scan(ctx, pgdialect.Array(&scopes)); err != nil {
		t.Fatal(err)
	}
	if strings.Join(scopes, ",") != "catalog:read,orders:read" {
		t.Fatalf("the mixed key's scopes after the migration: %v", scopes)
	}
}

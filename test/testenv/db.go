// Package testenv gives tests the real services they run against: a fresh,
// migrated Postgres database per test and the Temporal dev server.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// DefaultAdminURL is the Postgres the project expects when DATABASE_URL is
// unset; `make test` resolves or starts one and exports DATABASE_URL.
const DefaultAdminURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

func adminURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return DefaultAdminURL
}

// SkipInUnit skips a test that needs Postgres, Temporal or a browser when
// the run is `make unit` (go test -short): those run in `make test`, where
// their absence fails them.
func SkipInUnit(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs Postgres, Temporal or Chromium (make test runs it)")
	}
}

// DB creates a fresh database, migrates it and drops it when the test ends.
// It fails the test (never skips) when Postgres is not reachable.
func DB(t testing.TB) (*bun.DB, string) {
	t.Helper()
	return DBOn(t, adminURL())
}

// DBOn is DB on the server of admin, an admin URL of its own (the chaos
// run's private cluster).
func DBOn(t testing.TB, adminURL string) (*bun.DB, string) {
	t.Helper()
	SkipInUnit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("connect to Postgres at DATABASE_URL (run tests with `make test`, which finds or starts one): %v", err)
	}
	defer admin.Close(ctx)

	tmpl, err := template(ctx, admin, adminURL)
	if err != nil {
		t.Fatalf("test database template: %v", err)
	}
	name := "ticketsales_test_" + randomHex(6)
	if err := whenUnused(ctx, admin, "CREATE DATABASE "+name+" TEMPLATE "+tmpl); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if admin, err := pgx.Connect(ctx, adminURL); err == nil {
			_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			admin.Close(ctx)
		}
	})

	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatalf("parse DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	// The template is migrated already: this finds nothing to apply, and
	// would apply what a template built before a migration was added lacks.
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatalf("migrate test database: %v", err)
	}
	// Workflow ids derive from order and event ids ("order/{id}",
	// "event-holds/{id}"), and every test database shares the dev server:
	// start each database's ids elsewhere.
	for _, seq := range []string{"orders_id_seq", "events_id_seq"} {
		var start int64
		if err := db.NewRaw("SELECT (random() * 1e12)::bigint + 1000").Scan(ctx, &start); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, fmt.Sprintf("ALTER SEQUENCE %s RESTART WITH %d", seq, start)); err != nil {
			t.Fatalf("offset ids of %s: %v", seq, err)
		}
	}
	return db, dbURL
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Package store holds the database: bun models, migrations and every query
// the service runs. Postgres is the source of truth for inventory and money.
//
// Names: GetX reads one X (or one value of an X: GetOrderStatus) by its
// key, GetXByY by another unique key, and answers errs.NotFound when there
// is none; ListX reads a list; CountX counts; a transition is named for
// what it does (HoldSeats, MarkOrderPaid, CancelOrder), one guarded
// statement or one transaction.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/extra/bundebug"
	"github.com/uptrace/bun/migrate"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store/migrations"
)

// DefaultMaxConns is the pool size when DATABASE_URL names none
// (pool_max_conns=N sets it).
const DefaultMaxConns = 32

// Open connects to Postgres through a pgx pool and wraps it in bun.
// BUNDEBUG=1 logs every query.
func Open(ctx context.Context, url string) (*bun.DB, error) {
	return open(ctx, url, false, false)
}

// OpenAppNotifying is Open for a process that announces its own seat
// changes through a Notifier: the seat triggers stay silent for it.
func OpenAppNotifying(ctx context.Context, url string) (*bun.DB, error) {
	return open(ctx, url, false, true)
}

// OpenBookkeeping opens a small pool whose commits do not wait for the WAL
// flush (synchronous_commit = off), for records whose loss in a Postgres
// crash is harmless or covered: idempotency claims (durable with the
// request's own write, since Postgres flushes the WAL in order), workflow
// start marks (the sweep starts again; Temporal refuses the duplicate) and
// the request log. Inventory and money never go through it.
func OpenBookkeeping(ctx context.Context, url string) (*bun.DB, error) {
	return open(ctx, url, true, false)
}

func open(ctx context.Context, url string, asyncCommit, appNotifies bool) (*bun.DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		// pgx's default (4 on this kind of machine) queues an on-sale rush
		// behind four connections; Postgres handles more at once.
		cfg.MaxConns = DefaultMaxConns
	}
	if !strings.Contains(url, "default_query_exec_mode") {
		// bun writes every argument into the SQL text, so no two statements
		// share a text: pgx's default prepared-statement cache would parse,
		// describe and then evict each one, an extra round trip per query.
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	if cfg.ConnConfig.StatementCacheCapacity < 1 {
		// The few prepared statements (prepared.go) need pgx's statement
		// cache: without one, each would fail.
		cfg.ConnConfig.StatementCacheCapacity = 64
	}
	if !strings.Contains(url, "plan_cache_mode") {
		// Only the prepared statements (prepared.go) and the statements
		// inside the schema's PL/pgSQL triggers have parameters, and each
		// finds its rows by a key (an order, a hold, the seats of an event,
		// a ticket's barcode): a generic plan is the custom one without
		// planning it anew. Left to choose, Postgres kept planning the hold
		// statement at every run (0.63 ms a call), its generic cost
		// estimated on arrays of unknown length.
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	if appNotifies {
		cfg.ConnConfig.RuntimeParams["ticketsales.notify"] = "app"
	}
	if asyncCommit {
		cfg.MaxConns = max(cfg.MaxConns/4, 2)
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	// As stdlib.OpenDBFromPool, but closing the sql.DB closes the pool too
	// (OpenDBFromPool leaves it open: every api instance a test stopped
	// kept its idle connections until Postgres had none left).
	sqldb := sql.OpenDB(closingConnector{stdlib.GetPoolConnector(pool), pool})
	sqldb.SetMaxIdleConns(0) // idle connections are the pool's to keep
	db := bun.NewDB(sqldb, pgdialect.New())
	if os.Getenv("BUNDEBUG") != "" {
		db.AddQueryHook(bundebug.NewQueryHook(bundebug.WithVerbose(true)))
		ObservePrepared(db, func(query string) { fmt.Fprintf(os.Stderr, "[bun]  prepared  %s\n", query) })
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return db, nil
}

// closingConnector closes its pool when the sql.DB over it is closed
// (database/sql calls Close on a connector that has one).
type closingConnector struct {
	driver.Connector
	pool *pgxpool.Pool
}

func (c closingConnector) Close() error {
	// Idle connections close now; one still in use when its holder lets
	// go of it (pgxpool.Close waits for those, the sql.DB's Close does not).
	go c.pool.Close()
	return nil
}

// migrateLockKey serialises migrations of concurrently starting processes.
const migrateLockKey = 7_246_813_001

// Migrate applies every pending migration and returns their names.
func Migrate(ctx context.Context, db *bun.DB) ([]string, error) {
	return migrateFS(ctx, db, migrations.FS)
}

// migrateFS applies the pending migrations of fsys. A migration is marked
// applied once it succeeded, not before it runs: one that failed or was
// cut short (a CREATE INDEX CONCURRENTLY cancelled, leaving an invalid
// index) runs again at the next start. So a migration outside a
// transaction (no .tx.) must be safe to run again from its first
// statement: IF NOT EXISTS, and an invalid index dropped before it is
// built again. (A transaction's migration is marked just after its
// commit: a crash in that moment runs it again, which most then refuse
// loudly, where a failed one used to be marked and never run.)
func migrateFS(ctx context.Context, db *bun.DB, fsys fs.FS) ([]string, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(fsys); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	// bun's own lock fails rather than waits; a session advisory lock makes
	// a second process wait for the first one's migration instead.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration lock connection: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(?)", migrateLockKey); err != nil {
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", migrateLockKey) //nolint:errcheck

	m := migrate.NewMigrator(db, ms, migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var names []string
	for _, mg := range group.Migrations {
		names = append(names, mg.Name)
	}
	return names, nil
}

// Ping checks that Postgres answers.
func Ping(ctx context.Context, db bun.IDB) error {
	var one int
	if err := db.NewRaw("SELECT 1").Scan(ctx, &one); err != nil {
		return fmt.Errorf("ping postgres: %w", err)
	}
	return nil
}

// notFound maps sql.ErrNoRows to errs.NotFound with context.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, errs.NotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// sqlRepeatableRead gives multi-statement reads one snapshot.
var sqlRepeatableRead = sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}

// ConnConfig reads DATABASE_URL for a connection of its own, outside the
// pools (the change listener, creating the database): without the pools'
// settings (pool_max_conns and the other pool_* parameters), which
// pgx.ParseConfig would send to Postgres as run-time parameters — and
// Postgres refuses unknown ones, so every such connection failed.
func ConnConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	return cfg.ConnConfig, nil
}

// EnsureDatabase creates the database named in url when it does not exist,
// connecting to the server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, url string) error {
	cfg, err := ConnConfig(url)
	if err != nil {
		return err
	}
	name := cfg.Database
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to postgres to create database %q: %w", name, err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // created meanwhile
			return nil
		}
		return fmt.Errorf("create database %q: %w", name, err)
	}
	return nil
}

// nullTime is t for a query, or NULL when t is zero (unset).
// nullID is id as a nullable column value: NULL for 0.
func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

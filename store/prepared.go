package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// The statements an order runs most, of fixed text with their arguments
// apart ($1, $2…), go through pgx's statement cache: prepared once per
// connection, and after five runs Postgres keeps a generic plan when it
// costs no more than the custom ones. bun writes every argument into the
// text (the pool's default is the simple protocol for that reason), which
// makes each statement new to Postgres, parsed and planned again: in the
// sell-out the planning of some cost ten times their running (issue 46).
//
// They name their columns, never "*": a cached statement whose "*" a
// migration widened fails once on every connection (Postgres refuses a
// cached plan whose result changed), while a named list stays valid.
//
// Such statements skip bun's query hooks; ObservePrepared sees them (and
// BUNDEBUG logs them through it). Their
// parameters carry a type ($1::text): bun's literals fit any column type,
// a parameter only its own, so a column's type change must change them too.

// sqlConn is the database/sql handle under a bun.IDB.
type sqlConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func sqlOf(db bun.IDB) (sqlConn, error) {
	switch d := db.(type) {
	case *bun.DB:
		return d.DB, nil
	case bun.Tx:
		return d.Tx, nil
	case *bun.Tx:
		return d.Tx, nil
	case bun.Conn:
		return d.Conn, nil
	}
	return nil, fmt.Errorf("no database/sql handle under %T", db)
}

// observers are told of every prepared statement a *bun.DB runs (its own
// and its transactions'), as bun's query hooks are of the others: tests
// that check what a request reads, and BUNDEBUG's log.
var (
	observersMu sync.Mutex
	observers   sync.Map // *bun.DB → []*observer, replaced whole on change
)

type observer struct{ f func(query string) }

// ObservePrepared calls f with the text of every prepared statement db (or
// a transaction of it) runs, until stop is called.
func ObservePrepared(db *bun.DB, f func(query string)) (stop func()) {
	o := &observer{f}
	change := func(edit func([]*observer) []*observer) {
		observersMu.Lock()
		defer observersMu.Unlock()
		var cur []*observer
		if v, ok := observers.Load(db); ok {
			cur = v.([]*observer)
		}
		if next := edit(slices.Clone(cur)); len(next) > 0 {
			observers.Store(db, next)
		} else {
			observers.Delete(db)
		}
	}
	change(func(os []*observer) []*observer { return append(os, o) })
	return func() {
		change(func(os []*observer) []*observer {
			return slices.DeleteFunc(os, func(x *observer) bool { return x == o })
		})
	}
}

// observe tells db's observers of query.
func observe(db *bun.DB, query string) {
	if v, ok := observers.Load(db); ok {
		for _, o := range v.([]*observer) {
			o.f(query)
		}
	}
}

// execPrepared runs a statement of fixed text, prepared and cached on its
// connection.
func execPrepared(ctx context.Context, db bun.IDB, query string, args ...any) (sql.Result, error) {
	c, err := sqlOf(db)
	if err != nil {
		return nil, err
	}
	observe(db.NewRaw("").DB(), query)
	return c.ExecContext(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
}

// scanPrepared runs a query of fixed text, prepared and cached on its
// connection, and scans its rows into dest as bun's Scan does: a slice
// takes every row, anything else the first, and no row is sql.ErrNoRows.
func scanPrepared(ctx context.Context, db bun.IDB, dest any, query string, args ...any) error {
	c, err := sqlOf(db)
	if err != nil {
		return err
	}
	bdb := db.NewRaw("").DB() // the *bun.DB under a transaction too
	observe(bdb, query)
	rows, err := c.QueryContext(ctx, query, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	if err != nil {
		return err
	}
	if v := reflect.ValueOf(dest); v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Slice {
		return bdb.ScanRows(ctx, rows, dest) // closes rows
	}
	// One row into a struct or a value, as bun's Scan: none is
	// sql.ErrNoRows, which every "not found" is told by.
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := bdb.ScanRow(ctx, rows, dest); err != nil {
		return err
	}
	return rows.Close()
}

// preparedSelect is the text of a bun select, written once, whose
// conditions take $n parameters: bun lists the model's columns (they stay
// in step with the struct), scanPrepared sends the arguments apart.
func preparedSelect(build func(db *bun.DB) *bun.SelectQuery) func() string {
	return sync.OnceValue(func() string { return build(bun.NewDB(nil, pgdialect.New())).String() })
}

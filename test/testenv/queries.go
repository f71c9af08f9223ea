package testenv

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// QueryWatch counts the statements a database runs whose text contains a
// given string, and runs a function after each of them if given one.
type QueryWatch struct {
	contains string
	after    func(query string)
	n        atomic.Int64
}

// WatchQueries adds a QueryWatch to db; after may be nil.
func WatchQueries(db *bun.DB, contains string, after func(query string)) *QueryWatch {
	w := &QueryWatch{contains: contains, after: after}
	db.AddQueryHook(w)
	return w
}

// Count is how many matching statements ran so far.
func (w *QueryWatch) Count() int64 { return w.n.Load() }

func (w *QueryWatch) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (w *QueryWatch) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	if !strings.Contains(e.Query, w.contains) {
		return
	}
	w.n.Add(1)
	if w.after != nil {
		w.after(e.Query)
	}
}

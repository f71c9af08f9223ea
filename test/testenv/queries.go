package testenv

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// QueryWatch counts the statements a database runs whose text contains a
// given string, and runs a function after each of them if given one.
type QueryWatch struct {
	contains string
	after    func(query string)
	n        atomic.Int64
}

// WatchQueries adds a QueryWatch to db; after may be nil. It sees bun's
// statements through its query hooks and the prepared ones (which skip
// them) through store.ObservePrepared.
func WatchQueries(db *bun.DB, contains string, after func(query string)) *QueryWatch {
	w := &QueryWatch{contains: contains, after: after}
	db.AddQueryHook(w)
	store.ObservePrepared(db, w.saw)
	return w
}

// Count is how many matching statements ran so far.
func (w *QueryWatch) Count() int64 { return w.n.Load() }

func (w *QueryWatch) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (w *QueryWatch) AfterQuery(_ context.Context, e *bun.QueryEvent) { w.saw(e.Query) }

func (w *QueryWatch) saw(query string) {
	if !strings.Contains(query, w.contains) {
		return
	}
	w.n.Add(1)
	if w.after != nil {
		w.after(query)
	}
}

// Package requestlog records every partner request for the organizer's
// request log, in batches off the request path, and reads the log back
// for the cabinet and ticketctl.
package requestlog

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/store"
)

// Writer queues entries in memory and writes them in batches, so logging a
// request adds no database round trip to it.
type Writer struct {
	db       *bun.DB
	log      *slog.Logger
	metrics  *metrics.Registry
	ch       chan store.RequestLogEntry
	interval time.Duration
	batch    int
	dropped  atomic.Int64
	done     chan struct{}
	stop     sync.Once
}

// NewWriter starts the background flusher; Close flushes what is queued.
// Rows Postgres refuses are counted in reg (nil: not counted).
func NewWriter(db *bun.DB, log *slog.Logger, interval time.Duration, reg *metrics.Registry) *Writer {
	w := &Writer{db: db, log: log, metrics: reg, ch: make(chan store.RequestLogEntry, 10_000),
		interval: interval, batch: 1000, done: make(chan struct{})}
	go w.run()
	return w
}

// Log queues an entry. When the queue is full (the database is down or too
// slow) the entry is dropped and counted rather than slowing the request.
func (w *Writer) Log(e store.RequestLogEntry) {
	select {
	case w.ch <- e:
	default:
		w.dropped.Add(1)
	}
}

// Dropped counts entries lost to a full queue.
func (w *Writer) Dropped() int64 { return w.dropped.Load() }

func (w *Writer) run() {
	defer close(w.done)
	ticker := time.NewTicker(w.interval)
	defer ticker.Stop()
	buf := make([]store.RequestLogEntry, 0, w.batch)
	flush := func() {
		if len(buf) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := store.InsertRequestLog(ctx, w.db, buf); err != nil {
			w.writeEach(ctx, buf, err)
		}
		// The cabinet shows when each key was last used: one UPDATE per
		// batch keeps that off the request path.
		used := map[int64]time.Time{}
		for _, e := range buf {
			if e.APIKeyID != nil && e.CreatedAt.After(used[*e.APIKeyID]) {
				used[*e.APIKeyID] = e.CreatedAt
			}
		}
		if err := store.TouchKeysUsed(ctx, w.db, used); err != nil {
			w.log.Warn("request log: last use of keys", "err", err)
		}
		buf = buf[:0]
	}
	for {
		select {
		case e, ok := <-w.ch:
			if !ok {
				flush()
				return
			}
			buf = append(buf, e)
			if len(buf) >= w.batch {
				flush()
			}
		case <-ticker.C:
			flush()
		}
	}
}

// writeEach writes a batch that Postgres refused one row at a time, so one
// row it cannot store does not take other companies' requests with it. A row
// refused for its own data is dropped, counted and logged; any other failure
// (the database unreachable) loses the rest of the batch, as it would have.
func (w *Writer) writeEach(ctx context.Context, buf []store.RequestLogEntry, batchErr error) {
	if !store.RowRefused(batchErr) {
		w.log.Error("request log flush failed", "entries", len(buf), "err", batchErr)
		return
	}
	for i := range buf {
		err := store.InsertRequestLog(ctx, w.db, buf[i:i+1])
		switch {
		case err == nil:
		case store.RowRefused(err):
			w.metrics.RequestLogRowRefused()
			w.log.Error("request log entry refused, dropped", "request_id", buf[i].RequestID, "path", buf[i].Path, "err", err)
		default:
			w.log.Error("request log flush failed", "entries", len(buf)-i, "err", err)
			return
		}
	}
}

// Close stops accepting entries and waits until the queue is written.
func (w *Writer) Close() {
	w.stop.Do(func() { close(w.ch) })
	<-w.done
}

package store

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// SeatChannel is the notification channel of availability changes; the
// payload is the event id.
const SeatChannel = "seat_changes"

// Notifier announces seat changes made through a pool opened with
// Options.AppNotifies, after their commit: the events changed within one
// interval go out in one statement, so no seat change waits for the
// cluster-wide lock a notifying commit takes.
type Notifier struct {
	db       bun.IDB
	log      *slog.Logger
	interval time.Duration
	mu       sync.Mutex
	pending  map[int64]struct{}
}

// NewNotifier sends through db every interval once Run is called.
func NewNotifier(db bun.IDB, log *slog.Logger, interval time.Duration) *Notifier {
	return &Notifier{db: db, log: log, interval: interval, pending: map[int64]struct{}{}}
}

// Changed records that an event's seats changed.
func (n *Notifier) Changed(eventID int64) {
	n.mu.Lock()
	n.pending[eventID] = struct{}{}
	n.mu.Unlock()
}

// Run sends the recorded changes every interval until ctx ends, then once
// more.
func (n *Notifier) Run(ctx context.Context) {
	t := time.NewTicker(n.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			n.flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			n.flush(ctx)
		}
	}
}

func (n *Notifier) flush(ctx context.Context) {
	n.mu.Lock()
	if len(n.pending) == 0 {
		n.mu.Unlock()
		return
	}
	sent := n.pending
	n.pending = map[int64]struct{}{}
	n.mu.Unlock()
	ids := make([]string, 0, len(sent))
	for id := range sent {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	if _, err := n.db.NewRaw("SELECT pg_notify(?, e) FROM unnest(?::text[]) AS e", SeatChannel, pgdialect.Array(ids)).
		Exec(ctx); err != nil {
		// Keep them for the next round.
		n.log.Warn("announce seat changes", "events", len(ids), "err", err)
		n.mu.Lock()
		for id := range sent {
			n.pending[id] = struct{}{}
		}
		n.mu.Unlock()
	}
}

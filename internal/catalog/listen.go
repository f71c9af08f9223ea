package catalog

import (
	"github.com/ticketsales/ticketsales/store"

	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listen keeps the availability cache in step with Postgres through
// LISTEN seat_changes (see the seat_notify migration): each notification
// drops one event's entry, so fresh entries are served without a query
// (for cacheTrust after their read: a notice lost or late costs no more).
// While the connection is down the cache checks versions per request as
// before, and it is emptied on every (re)connect, since notifications may
// have been missed. Each notice is passed on to onNotice (nil: none), and
// 0 (any event) when notices may have been missed: at every (re)connect
// and when the connection drops. Listen returns when ctx ends.
func (s *Service) Listen(ctx context.Context, url string, log *slog.Logger, onNotice func(eventID int64)) {
	if onNotice == nil {
		onNotice = func(int64) {}
	}
	c := s.availability
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, url, onNotice)
		c.listening.Store(false)
		onNotice(0) // notices may be missed from now on
		if ctx.Err() != nil {
			return
		}
		log.Warn("availability cache: notification listener stopped; checking versions per request", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *Service) listenOnce(ctx context.Context, url string, onNotice func(int64)) error {
	cfg, err := store.ConnConfig(url)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+store.SeatChannel); err != nil {
		return err
	}
	c := s.availability
	c.mu.Lock()
	c.entries = map[int64]map[int64]*cachedAvailability{} // whatever changed while deaf
	c.mu.Unlock()
	onNotice(0)
	c.listening.Store(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, err := strconv.ParseInt(n.Payload, 10, 64)
		if err != nil {
			continue
		}
		c.mu.Lock()
		c.gen[id]++
		delete(c.entries, id)
		c.mu.Unlock()
		onNotice(id)
	}
}

// Invalidate drops an event's cached availability at once: this instance's
// own seat changes are visible to its next read without waiting for the
// notification.
func (s *Service) Invalidate(eventID int64) {
	c := s.availability
	c.mu.Lock()
	c.gen[eventID]++
	delete(c.entries, eventID)
	c.mu.Unlock()
}

// Listening tells whether notifications keep the cache fresh right now.
func (s *Service) Listening() bool { return s.availability.listening.Load() }

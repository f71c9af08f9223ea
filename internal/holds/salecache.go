package holds

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
)

// saleCache keeps, for a short while, the event and its price list that
// every hold reads. The hold statement itself refuses an event that stopped
// selling, so a cached entry can only make a hold's price up to the TTL old
// after an organizer's price change.
type saleCache struct {
	ttl       time.Duration
	mu        sync.Mutex
	m         map[saleKey]saleEntry
	seats     map[int64]seatsEntry // an event's seats: zone, row, label, category
	seatCount int                  // seats in seats
	loads     singleflight.Group
}

type seatsEntry struct {
	seats   map[string]store.ReservedSeat
	version int64     // the event's seat_version they were read at
	at      time.Time // when
}

// seatListMaxAge: an event's seat list is read again this long after it
// was, whatever seat_version says, so a change made without it (a
// hand-run fix, a restore that took the version back) heals in minutes.
const seatListMaxAge = 5 * time.Minute

// maxCachedSeats bounds the seats kept, over all events (about 150 bytes
// each); past it, the seats cache starts over.
const maxCachedSeats = 200_000

type saleKey struct{ company, event int64 }

type saleEntry struct {
	event   *store.Event
	cats    []store.Category
	windows map[int64]window.Window // the channels' own, by channel id
	at      time.Time
}

// maxSaleEntries bounds the cache; past it, it starts over.
const maxSaleEntries = 10_000

func (c *saleCache) get(k saleKey, now time.Time) (saleEntry, bool) {
	if c == nil || c.ttl <= 0 {
		return saleEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.Sub(e.at) > c.ttl {
		return saleEntry{}, false
	}
	return e, true
}

func (c *saleCache) put(k saleKey, e saleEntry) {
	if c == nil || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSaleEntries {
		c.m = map[saleKey]saleEntry{}
	}
	c.m[k] = e
}

func (c *saleCache) dropSeats(event int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.seats[event]; ok {
		c.seatCount -= len(e.seats)
		delete(c.seats, event)
	}
}

func (c *saleCache) drop(k saleKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// loadSale reads an event and its categories, from the cache when allowed;
// onSaleCached caches only what passed its checks, so an event is on sale
// the moment it is published.
func (s *Service) loadSale(ctx context.Context, companyID, eventID int64, cached bool) (*store.Event, []store.Category, map[int64]window.Window, error) {
	k := saleKey{companyID, eventID}
	now := time.Now()
	if cached {
		if e, ok := s.sales.get(k, now); ok {
			return e.event, e.cats, e.windows, nil
		}
	}
	if !cached || s.sales == nil {
		return s.readSale(ctx, companyID, eventID)
	}
	// A rush's first requests for an event all miss at once: one reads it
	// for them all.
	v, err, _ := s.sales.loads.Do(fmt.Sprint(companyID, "/", eventID), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		e, cats, windows, err := s.readSale(lctx, companyID, eventID)
		return saleEntry{event: e, cats: cats, windows: windows}, err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	e := v.(saleEntry)
	return e.event, e.cats, e.windows, nil
}

func (s *Service) readSale(ctx context.Context, companyID, eventID int64) (*store.Event, []store.Category, map[int64]window.Window, error) {
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, nil, nil, err
	}
	cats, err := store.ListCategories(ctx, s.db, e.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	terms, err := store.ListChannelTerms(ctx, s.db, e.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	windows := make(map[int64]window.Window, len(terms))
	for _, t := range terms {
		windows[t.ChannelID] = t.Window()
	}
	return e, cats, windows, nil
}

// eventSeats returns the given seats of the event, as
// store.ListEventSeatsByID does; with the cache on, from the event's whole
// seat list, read again only when the event's seat_version has moved: a
// seat's zone and label never change, its category only by a catalog
// import, which moves seat_version. The event is the sale's, itself read
// at most the TTL ago, so a hold may miss an import's new categories for
// the TTL, as it may the new prices above (and the unpriced check in
// Reserve reads both afresh). Before, the whole list of a 10,000-seat hall
// was read every TTL through an on-sale (docs/performance.md).
func (s *Service) eventSeats(ctx context.Context, ev *store.Event, ids []string) (map[string]store.ReservedSeat, error) {
	c, eventID := s.sales, ev.ID
	if c == nil || c.ttl <= 0 {
		return store.ListEventSeatsByID(ctx, s.db, eventID, ids)
	}
	c.mu.Lock()
	e, ok := c.seats[eventID]
	c.mu.Unlock()
	if !ok || e.version != ev.SeatVersion || time.Since(e.at) > seatListMaxAge {
		v, err, _ := c.loads.Do(fmt.Sprint("seats/", eventID, "/", ev.SeatVersion), func() (any, error) {
			start := time.Now()
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			all, err := store.ListEventSeats(lctx, s.db, eventID)
			if err != nil {
				return nil, err
			}
			// Read after the sale's event: at least as new as ev.SeatVersion.
			e := seatsEntry{seats: all, version: ev.SeatVersion, at: start}
			c.mu.Lock()
			if old, ok := c.seats[eventID]; ok {
				c.seatCount -= len(old.seats)
			}
			if c.seats == nil || c.seatCount+len(all) > maxCachedSeats {
				c.seats, c.seatCount = map[int64]seatsEntry{}, 0
			}
			c.seats[eventID] = e
			c.seatCount += len(all)
			c.mu.Unlock()
			return e, nil
		})
		if err != nil {
			return nil, err
		}
		e = v.(seatsEntry)
	}
	out := make(map[string]store.ReservedSeat, len(ids))
	for _, id := range ids {
		if seat, ok := e.seats[id]; ok {
			out[id] = seat
		}
	}
	return out, nil
}

// dropEvent forgets an event's sale, whoever's company it was read for.
func (c *saleCache) dropEvent(event int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if k.event == event {
			delete(c.m, k)
		}
	}
}

// TermsChanged is told that an event's distribution changed (a window,
// an allocation, a release): this process reads the event's sale afresh
// and announces the seat change. Other api processes see a window change
// within their sale cache's TTL; the hold statement checks every window by
// Postgres's clock meanwhile.
func (s *Service) TermsChanged(eventID int64) {
	s.sales.dropEvent(eventID)
	s.SeatsChanged(eventID)
}

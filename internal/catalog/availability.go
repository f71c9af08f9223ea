package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Availability is the occupancy of an event.
type Availability struct {
	EventID    int64                  `json:"event_id"`
	Version    string                 `json:"version" doc:"Changes with every seat change; the ETag follows it."`
	Since      string                 `json:"since,omitempty" doc:"Present when the request's since was answered with changes: seats then lists only the seats whose status or price changed since the availability of that ETag, and categories are all as now. Absent, seats lists every seat on sale."`
	Seats      []SeatAvailability     `json:"seats" doc:"Every seat on sale, for events with a scheme."`
	Categories []CategoryAvailability `json:"categories"`
}

// SeatAvailability is one seat's status and current price.
type SeatAvailability struct {
	ZoneID           string            `json:"zone_id"`
	SeatID           string            `json:"seat_id"`
	Row              string            `json:"row"`
	Number           string            `json:"number"`
	Status           states.SeatStatus `json:"status"`
	TicketCategoryID int64             `json:"ticket_category_id"`
	Price            pricing.Money     `json:"price"`
}

// CategoryAvailability is what is left of a category.
type CategoryAvailability struct {
	TicketCategoryID int64         `json:"ticket_category_id"`
	Price            pricing.Money `json:"price"`
	Available        int           `json:"available" doc:"Free seats, or general-admission tickets left."`
}

// AvailabilityDoc is an encoded availability ready to serve.
type AvailabilityDoc struct {
	JSON []byte // the data member
	ETag string // strong, quoted
	Data *Availability
	gz   *splicedGzip // {"data":JSON compressed once
	// state is the seats as built, to answer a later ?since= from (nil
	// for an answer of changes).
	state *seatState
}

// Parts is the enveloped response {"data":…,"request_id":…}, gzipped when
// asked (the large data part was compressed when the entry was built), as
// slices to write one after another: the large shared parts are the
// cache's own (read-only), so serving copies nothing.
func (d AvailabilityDoc) Parts(requestID string, gzipped bool) [][]byte {
	tail := make([]byte, 0, len(requestID)+20)
	tail = append(tail, `,"request_id":`...)
	tail = strconv.AppendQuote(tail, requestID)
	tail = append(tail, '}')
	if gzipped && d.gz != nil {
		return [][]byte{d.gz.prefix, d.gz.Tail(tail)}
	}
	return [][]byte{[]byte(`{"data":`), d.JSON, tail}
}

type cachedAvailability struct {
	AvailabilityDoc
	version    store.SeatsVersion
	validUntil time.Time // the next hold expiry or price change
	companyID  int64
	gen        uint64    // the event's notification count when built
	readAt     time.Time // when the read it reflects (build or version check) began
}

// availabilityCache keeps the encoded availability per event; an entry is
// reused while the event's seat version is unchanged and no hold lapsed or
// price rule started since it was built.
type availabilityCache struct {
	mu sync.Mutex
	// entries by event, then by view: the channel whose caller it is
	// for (0: general sale), since a channel's seats are not for sale to
	// others and are left out of their availability.
	entries map[int64]map[int64]*cachedAvailability
	gen     map[int64]uint64 // notifications seen per event
	// listening: Listen is connected, so an entry whose gen is current is
	// fresh without asking Postgres, for trust after its read.
	listening  atomic.Bool
	trust      time.Duration // cacheTrust; tests lengthen it
	builds     map[view]*eventBuilds
	states     map[view][]*seatState // each view's latest builds, newest last
	layouts    map[int64]*seatLayout // the events' places, by the builds
	placesKept int                   // seats in layouts
	placesRead atomic.Int64          // builds that read places (tests watch it)
	built      atomic.Int64          // builds made
	// afterBuild, in tests, runs when a build has read, before its
	// waiters have it.
	afterBuild func()
}

// cacheTrust is how long after its read an entry is served on notices
// alone, without reading the event's version: a seat change whose notice
// is lost or late shows within this time (docs/decisions.md).
const cacheTrust = time.Second

func newAvailabilityCache() *availabilityCache {
	return &availabilityCache{entries: map[int64]map[int64]*cachedAvailability{}, gen: map[int64]uint64{}, trust: cacheTrust,
		builds: map[view]*eventBuilds{}, states: map[view][]*seatState{}, layouts: map[int64]*seatLayout{}}
}

// view is an event's availability as a caller of a channel sees it (0:
// general sale).
type view struct{ event, channel int64 }

func (ac *availabilityCache) entry(v view) *cachedAvailability { return ac.entries[v.event][v.channel] }

func (ac *availabilityCache) setEntry(v view, c *cachedAvailability) {
	m := ac.entries[v.event]
	if m == nil {
		m = map[int64]*cachedAvailability{}
		ac.entries[v.event] = m
	}
	m[v.channel] = c
}

// TrustCacheFor changes how long a cached availability is served on
// notices alone before its version is read again (1 s), for tests of the
// notices alone.
func (s *Service) TrustCacheFor(d time.Duration) {
	s.availability.mu.Lock()
	defer s.availability.mu.Unlock()
	s.availability.trust = d
}

// Availability returns the event's availability as general sale sees it.
func (s *Service) Availability(ctx context.Context, companyID, eventID int64) (AvailabilityDoc, error) {
	return s.AvailabilityFor(ctx, companyID, 0, eventID)
}

// AvailabilityFor returns the event's availability as a caller of the
// channel (0: general sale only) sees it, from the cache or rebuilt: the
// seats allocated to other channels are not for sale to it and are left
// out. It costs one indexed query when the cache is fresh.
func (s *Service) AvailabilityFor(ctx context.Context, companyID, channelID, eventID int64) (AvailabilityDoc, error) {
	now := s.now()
	ac := s.availability
	vw := view{eventID, channelID}
	ac.mu.Lock()
	c, gen, trust := ac.entry(vw), ac.gen[eventID], ac.trust
	ac.mu.Unlock()
	if ac.listening.Load() && c != nil && c.gen == gen && c.companyID == companyID && now.Before(c.validUntil) &&
		now.Before(c.readAt.Add(trust)) {
		return c.AvailabilityDoc, nil // no change notified since it was read
	}
	if c == nil || c.gen != gen || c.companyID != companyID || !now.Before(c.validUntil) {
		// Nothing to keep: no entry, a change notified since it was read,
		// or past its validity. Asking the seats' version (a pass over
		// them) would only tell what the build's own read tells again.
		if err := store.CheckEventOwner(ctx, s.db, companyID, eventID); err != nil {
			return AvailabilityDoc{}, err
		}
		return s.build(ctx, vw, companyID, gen, now)
	}
	v, err := store.GetEventVersion(ctx, s.db, companyID, eventID)
	if err != nil {
		return AvailabilityDoc{}, err
	}
	if c.version == v.Version {
		// Unchanged: served on notices alone for another while (gen was
		// read before the version, so it counts no change the read missed).
		checked := *c
		checked.readAt, checked.gen = now, gen
		ac.mu.Lock()
		if ac.entry(vw) == c {
			ac.setEntry(vw, &checked)
		}
		ac.mu.Unlock()
		return c.AvailabilityDoc, nil
	}
	return s.build(ctx, vw, companyID, gen, now)
}

// build makes the view's entry afresh (shared with builds of it already
// under way) and keeps it for the company.
func (s *Service) build(ctx context.Context, vw view, companyID int64, gen uint64, now time.Time) (AvailabilityDoc, error) {
	built, err := s.sharedBuild(ctx, vw)
	if err != nil {
		return AvailabilityDoc{}, err
	}
	// Its read began after now, and gen was read before: both on the
	// safe side for serving it on notices alone.
	c := &cachedAvailability{}
	*c = *built
	c.companyID, c.gen, c.readAt = companyID, gen, now
	s.availability.mu.Lock()
	s.availability.setEntry(vw, c)
	s.availability.mu.Unlock()
	if c.state != nil {
		s.availability.keep(vw, c.state)
	}
	return c.AvailabilityDoc, nil
}

func (s *Service) buildAvailability(ctx context.Context, v view, now time.Time) (*cachedAvailability, error) {
	eventID := v.event
	layout, m, err := s.readSeatMap(ctx, eventID, now)
	if err != nil {
		return nil, err
	}
	st, ok := layout.statuses(m.Taken)
	if !ok {
		// A taken seat the kept places lack: they changed without
		// seat_version moving. Read them again rather than trust them.
		s.availability.dropLayout(eventID)
		if layout, m, err = s.readSeatMap(ctx, eventID, now); err != nil {
			return nil, err
		}
		if st, ok = layout.statuses(m.Taken); !ok {
			return nil, fmt.Errorf("build availability of event %d: a taken seat is not among its seats", eventID)
		}
	}
	cats, err := store.ListCategories(ctx, s.db, eventID)
	if err != nil {
		return nil, err
	}
	general, err := store.GeneralLeft(ctx, s.db, eventID)
	if err != nil {
		return nil, err
	}
	own := map[int64]int{} // what the view's channel has left of its quotas, by category
	if v.channel != 0 {
		quotas, err := store.ListQuotaLeft(ctx, s.db, eventID, v.channel)
		if err != nil {
			return nil, err
		}
		for _, q := range quotas {
			own[q.CategoryID] += q.Left()
		}
	}
	currency, err := store.GetEventCurrency(ctx, s.db, eventID)
	if err != nil {
		return nil, err
	}
	validUntil := now.Add(time.Minute) // bounds staleness of anything not versioned
	if next := m.Taken.NextExpiry; next != nil && next.Before(validUntil) {
		validUntil = *next // a hold lapsing frees its seats
	}
	price := map[int64]int64{}
	free := map[int64]int{}
	for _, c := range cats {
		price[c.ID] = c.PriceAt(now)
		if next := c.NextPriceChange(now); !next.IsZero() && next.Before(validUntil) {
			validUntil = next
		}
	}
	shown := layout.shown(v.channel, m.Released)
	for _, i := range shown {
		if st[i] == states.SeatFree {
			free[layout.places[i].CategoryID]++
		}
	}
	a := Availability{EventID: eventID, Version: m.Version.String(), Seats: pricedSeats(layout, shown, st, price, currency)}
	for _, c := range cats {
		left := free[c.ID]
		if c.Capacity != nil {
			left = general[c.ID] + own[c.ID]
		}
		a.Categories = append(a.Categories, CategoryAvailability{TicketCategoryID: c.ID,
			Price: pricing.Money{Amount: price[c.ID], Currency: currency}, Available: left})
	}
	body, err := encodeAvailability(&a, layout, shown)
	if err != nil {
		return nil, fmt.Errorf("encode availability of event %d: %w", eventID, err)
	}
	gz, err := newSplicedGzip([]byte(`{"data":`), body)
	if err != nil {
		return nil, fmt.Errorf("compress availability of event %d: %w", eventID, err)
	}
	// The compressed body stands for the body (it decompresses to it) at
	// a tenth of its size: hashing it for the ETag costs a tenth.
	sum := sha256.Sum256(gz.prefix)
	state := s.availability.newSeatState(v, layout, shown, st, price, currency)
	state.etag = hex.EncodeToString(sum[:16])
	return &cachedAvailability{
		AvailabilityDoc: AvailabilityDoc{JSON: body, ETag: `"` + state.etag + `"`, Data: &a, gz: gz, state: state},
		version:         m.Version, validUntil: validUntil,
	}, nil
}

// readSeatMap reads the event's seat map, with its places from the kept
// layout while their seat_version holds (and for maxPlacesAge at most),
// and keeps any read afresh.
func (s *Service) readSeatMap(ctx context.Context, eventID int64, now time.Time) (*seatLayout, store.SeatMap, error) {
	ac := s.availability
	ac.mu.Lock()
	layout := ac.layouts[eventID]
	ac.mu.Unlock()
	placesOf := int64(-1) // none kept: read them
	if layout != nil && now.Sub(layout.readAt) < maxPlacesAge {
		placesOf = layout.eventVersion
	}
	m, err := store.ReadSeatMap(ctx, s.db, eventID, now, placesOf)
	if err != nil {
		return nil, m, err
	}
	if m.Places == nil {
		return layout, m, nil
	}
	ac.placesRead.Add(1)
	ac.mu.Lock()
	old := ac.layouts[eventID]
	ac.mu.Unlock()
	if old != nil && slices.Equal(old.places, m.Places) {
		// The same places read again (their age, or a version moved by no
		// change of them): their encoding is kept, and so are the states
		// built from them, which still compare (samePlaces).
		same := *old
		layout = &same
		layout.eventVersion = m.Version.Event
	} else if layout, err = newSeatLayout(m.Version.Event, m.Places); err != nil {
		return nil, m, fmt.Errorf("build availability of event %d: %w", eventID, err)
	}
	layout.readAt = now
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if old := ac.layouts[eventID]; old != nil {
		ac.placesKept -= len(old.places)
		if !old.samePlaces(layout) {
			ac.dropStates(eventID) // of the places replaced
		}
	}
	if ac.placesKept+len(layout.places) > maxKeptPlaces {
		ac.layouts, ac.placesKept = map[int64]*seatLayout{}, 0
		ac.states = map[view][]*seatState{}
	}
	ac.layouts[eventID] = layout
	ac.placesKept += len(layout.places)
	return layout, m, nil
}

// Kept places are read again after maxPlacesAge whatever seat_version
// says, so a change made without it (a hand-run fix, a restore that took
// the version back) heals in minutes; past maxKeptPlaces seats (about
// 250 bytes each) over all events, the layouts start over.
const (
	maxPlacesAge  = 5 * time.Minute
	maxKeptPlaces = 200_000
)

func (ac *availabilityCache) dropLayout(eventID int64) {
	ac.mu.Lock()
	defer ac.mu.Unlock()
	if old := ac.layouts[eventID]; old != nil {
		ac.placesKept -= len(old.places)
		delete(ac.layouts, eventID)
	}
	ac.dropStates(eventID)
}

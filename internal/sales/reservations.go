// Package sales holds the selling rules that /v1 and the aggregator adapter
// share: seat holds (reservations), orders, confirm and cancel, tickets,
// refunds, and the gateway payments they record.
package sales

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"ticketsales/internal/apikey"
	"ticketsales/internal/errs"
	"ticketsales/internal/metrics"
	"ticketsales/internal/pricing"
	"ticketsales/internal/states"
	"ticketsales/store"
	"ticketsales/workflows/contract"
)

// Limits of a reservation (DESIGN.md §3).
const (
	MaxSeats          = 20
	DefaultTTLMinutes = 15
	MinTTLMinutes     = 1
	MaxTTLMinutes     = 60
)

// Service sells seats for one company at a time.
type Service struct {
	db       *bun.DB
	temporal client.Client
	log      *slog.Logger
	now      func() time.Time
	metrics  *metrics.Registry
	changed  func(eventID int64)
	starter  *Starter
	sales    *saleCache
	taken    *takenSeats
	fresh    func() bool // seat-change notices are coming in
	// TTLUnit is the length of one "minute" of ttl_minutes: a minute in
	// production, shorter in tests that watch a hold expire.
	TTLUnit time.Duration
	// TaskQueue of the workflows this service starts.
	TaskQueue string
	// Orders configures the order saga (tests shorten its durations).
	Orders OrderSettings
}

// Deps are what the service works with.
type Deps struct {
	DB       *bun.DB
	Temporal client.Client
	Log      *slog.Logger
	Now      func() time.Time  // nil: time.Now
	Metrics  *metrics.Registry // counts hold decisions (nil: none)
	// SeatsChanged is told of every seat change this service makes, so the
	// availability cache reflects it at once (nil: none).
	SeatsChanged func(eventID int64)
	// Starter starts reservation workflows off the request path (nil: each
	// hold starts its workflow before answering).
	Starter *Starter
	// NoticesComing tells whether every seat change of other processes
	// reaches SeatsChangedElsewhere right now (LISTEN is connected): only
	// then are holds of seats known taken refused from memory (nil: never).
	NoticesComing func() bool
}

// Settings shape the selling.
type Settings struct {
	TaskQueue string
	Orders    OrderSettings
	// SaleCacheTTL: holds read an event and its prices from memory for up
	// to this long (0: every hold reads them). A hold on an event that
	// stopped selling meanwhile is still refused: the hold statement
	// checks it.
	SaleCacheTTL time.Duration
}

// New builds the service.
func New(d Deps, st Settings) *Service {
	s := &Service{db: d.DB, temporal: d.Temporal, log: d.Log, now: d.Now, metrics: d.Metrics, changed: d.SeatsChanged,
		starter: d.Starter, taken: newTakenSeats(), fresh: d.NoticesComing, TTLUnit: time.Minute, TaskQueue: cmp.Or(st.TaskQueue, contract.TaskQueue), Orders: st.Orders}
	clock := d.Now
	if clock == nil {
		clock = time.Now
	}
	// Postgres keeps microseconds: a time a create answers with must be
	// the one a later read returns.
	s.now = func() time.Time { return clock().Truncate(time.Microsecond) }
	if st.SaleCacheTTL > 0 {
		s.sales = &saleCache{ttl: st.SaleCacheTTL}
	}
	return s
}

// CacheSaleContext changes how long holds read an event and its prices
// from memory (Settings.SaleCacheTTL), for tests of either way.
func (s *Service) CacheSaleContext(ttl time.Duration) { s.sales = &saleCache{ttl: ttl} }

// UseStarter changes how holds start their workflows (Deps.Starter; nil:
// before answering), for tests of either way.
func (s *Service) UseStarter(st *Starter) { s.starter = st }

func (s *Service) seatsChanged(eventID int64) {
	s.taken.forget(eventID)
	if s.changed != nil {
		s.changed(eventID)
	}
}

// ReservationSeat is a held seat with the price fixed at hold time.
type ReservationSeat struct {
	ZoneID           string        `json:"zone_id"`
	SeatID           string        `json:"seat_id"`
	Row              string        `json:"row"`
	Number           string        `json:"number"`
	Label            string        `json:"label"`
	TicketCategoryID int64         `json:"ticket_category_id"`
	Price            pricing.Money `json:"price"`
}

// Reservation is a hold as partners see it.
type Reservation struct {
	ID         string                   `json:"id"`
	Status     states.ReservationStatus `json:"status" enum:"reserved,ordered,expired,released"`
	EventID    int64                    `json:"event_id"`
	ExpiresAt  time.Time                `json:"expires_at"`
	Seats      []ReservationSeat        `json:"seats"`
	Total      pricing.Money            `json:"total" doc:"Sum of seat prices."`
	ServiceFee pricing.Money            `json:"service_fee" doc:"The order fee these seats would carry (minimum once per order)."`
	TotalToPay pricing.Money            `json:"total_to_pay" doc:"What the buyer pays for these seats."`
	CreatedAt  time.Time                `json:"created_at"`
}

// BestAvailable asks the service to pick the seats.
type BestAvailable struct {
	Quantity          int      `json:"quantity" minimum:"1" maximum:"20" doc:"How many seats."`
	TicketCategoryIDs []int64  `json:"ticket_category_ids,omitempty" maxItems:"50" doc:"Only seats of these categories (none: any)."`
	ZoneIDs           []string `json:"zone_ids,omitempty" maxItems:"50" doc:"Only seats of these zones (none: any)."`
	Together          bool     `json:"together,omitempty" doc:"All in one row, side by side."`
}

// bestWindow is how many of the best free seats a pick considers: enough
// to find a group together in a busy hall, few enough to lock briefly.
const bestWindow = 400

// ReserveInput asks to hold seats of an event: the listed seats, or the
// best available.
type ReserveInput struct {
	EventID       int64
	Seats         []errs.SeatRef
	BestAvailable *BestAvailable
	TTLMinutes    int // 0: the default
	// IdempotencyKey of the request, which names its hold in flight.
	IdempotencyKey string
	// TTL, when set, is the hold's exact length (the aggregator counts in
	// seconds); TTLMinutes is then ignored.
	TTL time.Duration
}

func newReservationID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "rsv_" + hex.EncodeToString(b)
}

// saleContext is the event and its current category prices.
type saleContext struct {
	event  *store.Event
	prices map[int64]int64
}

// onSale loads an event the company may sell now, or says why not.
func (s *Service) onSale(ctx context.Context, companyID, eventID int64, needScheme bool) (*saleContext, error) {
	return s.onSaleCached(ctx, companyID, eventID, needScheme, false)
}

// MsgNoScheme is the field error of a seat hold on an event without seats;
// the aggregator adapter says it in its own words.
const MsgNoScheme = "the event has no seating scheme: order it by items"

func (s *Service) onSaleCached(ctx context.Context, companyID, eventID int64, needScheme, cached bool) (*saleContext, error) {
	e, cats, err := s.loadSale(ctx, companyID, eventID, cached)
	if err != nil {
		return nil, err
	}
	verr := &errs.ValidationError{}
	switch {
	case e.Status != "published":
		verr.Add("body.event_id", "the event is not on sale (status "+e.Status+")", eventID)
	case !e.StartsAt.After(s.now()):
		verr.Add("body.event_id", "the event has started", eventID)
	case needScheme && e.SchemeID == nil:
		verr.Add("body.event_id", MsgNoScheme, eventID)
	}
	if err := verr.OrNil(); err != nil {
		return nil, err
	}
	if cached {
		s.sales.put(saleKey{companyID, eventID}, saleEntry{event: e, cats: cats, at: time.Now()})
	}
	sc := &saleContext{event: e, prices: map[int64]int64{}}
	now := s.now()
	for _, c := range cats {
		sc.prices[c.ID] = c.PriceAt(now)
	}
	return sc, nil
}

// resolveSeats checks the requested seats against the event's inventory:
// each exists in the named zone, none twice, at most MaxSeats.
func (s *Service) resolveSeats(ctx context.Context, eventID int64, refs []errs.SeatRef) ([]string, map[string]store.ReservedSeat, error) {
	verr := &errs.ValidationError{}
	if len(refs) == 0 || len(refs) > MaxSeats {
		verr.Add("body.seats", fmt.Sprintf("a reservation holds 1 to %d seats", MaxSeats), len(refs))
		return nil, nil, verr
	}
	ids := make([]string, 0, len(refs))
	seen := map[string]bool{}
	for i, r := range refs {
		if seen[r.SeatID] {
			verr.Add(fmt.Sprintf("body.seats[%d].seat_id", i), "seat listed twice", r.SeatID)
		}
		seen[r.SeatID] = true
		ids = append(ids, r.SeatID)
	}
	if err := verr.OrNil(); err != nil {
		return nil, nil, err
	}
	seats, err := s.eventSeats(ctx, eventID, ids)
	if err != nil {
		return nil, nil, err
	}
	for i, r := range refs {
		seat, ok := seats[r.SeatID]
		switch {
		case !ok:
			verr.Add(fmt.Sprintf("body.seats[%d].seat_id", i), "the event sells no such seat", r.SeatID)
		case seat.ZoneID != r.ZoneID:
			verr.Add(fmt.Sprintf("body.seats[%d].zone_id", i), "the seat is in zone "+seat.ZoneID, r.ZoneID)
		}
	}
	return ids, seats, verr.OrNil()
}

func (s *Service) totals(e *store.Event, prices []int64) (total, fee, toPay int64) {
	q := e.Fee().Order(prices...)
	return q.Total, q.Fee, q.Amount
}

// Reserve holds all the seats or none. A lost race answers errs.SeatTakenError
// after one statement and starts nothing; a won race starts the workflow
// that expires the hold, and undoes the hold if that workflow cannot start.
func (s *Service) Reserve(ctx context.Context, p *apikey.Principal, in ReserveInput) (*Reservation, error) {
	ttl := in.TTLMinutes
	if ttl == 0 {
		ttl = DefaultTTLMinutes
	}
	if in.TTL == 0 && (ttl < MinTTLMinutes || ttl > MaxTTLMinutes) {
		return nil, errs.Invalid("body.ttl_minutes", fmt.Sprintf("must be %d..%d", MinTTLMinutes, MaxTTLMinutes), ttl)
	}
	hold := time.Duration(ttl) * s.TTLUnit
	if in.TTL > 0 {
		hold = in.TTL
	}
	if (in.BestAvailable == nil) == (len(in.Seats) == 0) {
		return nil, errs.Invalid("body.seats", "give either seats or best_available", nil)
	}
	sc, err := s.onSaleCached(ctx, p.CompanyID, in.EventID, true, true)
	if err != nil {
		return nil, err
	}
	// A pick locks its seats in a transaction that the hold then completes.
	var db bun.IDB = s.db
	var ids []string
	var seats map[string]store.ReservedSeat
	if ba := in.BestAvailable; ba != nil {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("best available on event %d: %w", in.EventID, err)
		}
		defer tx.Rollback() //nolint:errcheck // a no-op after Commit
		db = tx
		req := store.BestSeatsRequest{EventID: sc.event.ID, Quantity: ba.Quantity, CategoryIDs: ba.TicketCategoryIDs,
			ZoneIDs: ba.ZoneIDs, Together: ba.Together, Window: max(bestWindow, 20*ba.Quantity)}
		if seats, ids, err = store.PickBestSeats(ctx, tx, req); err != nil {
			return nil, err
		}
		if len(ids) < ba.Quantity {
			_ = tx.Rollback()
			left, err := store.FreeSeatsLeft(ctx, s.db, sc.event.ID, ba.TicketCategoryIDs, ba.ZoneIDs)
			if err != nil {
				return nil, err
			}
			s.metrics.Hold(false)
			return nil, &errs.SoldOutError{Available: &left, Together: ba.Together}
		}
	} else if ids, seats, err = s.resolveSeats(ctx, sc.event.ID, in.Seats); err != nil {
		return nil, err
	}
	unpriced := func() bool {
		for _, id := range ids {
			if _, ok := sc.prices[seats[id].CategoryID]; !ok {
				return true
			}
		}
		return false
	}
	if unpriced() {
		// The cached prices or seats are from before a catalog import that
		// moved a seat to a new category: read both afresh, never price 0.
		s.sales.drop(saleKey{p.CompanyID, in.EventID})
		s.sales.dropSeats(in.EventID)
		if sc, err = s.onSale(ctx, p.CompanyID, in.EventID, true); err != nil {
			return nil, err
		}
		if in.BestAvailable == nil {
			if seats, err = store.EventSeatsByID(ctx, s.db, sc.event.ID, ids); err != nil {
				return nil, err
			}
		}
		if unpriced() {
			return nil, errs.Invalid("body.seats", "a seat is not on sale for this event", nil)
		}
	}
	seatPrices := make(map[string]int64, len(ids))
	prices := make([]int64, 0, len(ids))
	for _, id := range ids {
		price := sc.prices[seats[id].CategoryID]
		seatPrices[id] = price
		prices = append(prices, price)
	}
	total, fee, toPay := s.totals(sc.event, prices)
	// Its deadline is set by the hold statement, by Postgres's clock.
	r := store.Reservation{
		ID: newReservationID(), CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(), EventID: sc.event.ID,
		Status: states.ReservationReserved, Currency: sc.event.Currency, Total: total, ServiceFee: fee, TotalToPay: toPay,
	}
	mark := s.taken.mark(sc.event.ID, s.now())
	outcome, err := store.Hold(ctx, db, store.NewHold{Reservation: r, TTL: hold, SeatIDs: ids, Prices: seatPrices})
	r.CreatedAt, r.ExpiresAt = outcome.CreatedAt, outcome.ExpiresAt
	// Decided: the seats leave flight (won ones are remembered below).
	s.taken.land(sc.event.ID, flightOf(p, in.IdempotencyKey))
	taken, ok := outcome.Taken, outcome.OK
	if tx, isTx := db.(bun.Tx); isTx && err == nil && ok {
		if err = tx.Commit(); err != nil {
			err = fmt.Errorf("hold best seats of event %d: %w", in.EventID, err)
		}
	}
	if errors.Is(err, store.ErrNotOnSale) {
		// The cached event stopped selling: say why from a fresh read.
		s.sales.drop(saleKey{p.CompanyID, in.EventID})
		if _, verr := s.onSale(ctx, p.CompanyID, in.EventID, true); verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("hold on event %d: %w: %w", in.EventID, errs.Unavailable, err)
	}
	if err != nil {
		return nil, err
	}
	s.metrics.Hold(ok)
	if !ok {
		known := make(map[string]takenSeat, len(outcome.TakenUntil))
		for id, until := range outcome.TakenUntil {
			known[id] = takenSeat{zone: seats[id].ZoneID, until: derefTime(until)}
		}
		s.taken.remember(p.CompanyID, sc.event.ID, mark, known)
		return nil, takenError(ids, taken, seats)
	}
	s.seatsChanged(r.EventID)
	mine := make(map[string]takenSeat, len(ids))
	for _, id := range ids {
		mine[id] = takenSeat{zone: seats[id].ZoneID, until: r.ExpiresAt}
	}
	s.taken.remember(p.CompanyID, sc.event.ID, s.taken.mark(sc.event.ID, s.now()), mine)
	if err := s.startReservationWorkflow(ctx, &r); err != nil {
		return nil, err
	}
	out := &Reservation{ID: r.ID, Status: r.Status, EventID: r.EventID, ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt}
	for _, id := range ids {
		rs := seats[id]
		rs.Price = seatPrices[id]
		out.Seats = append(out.Seats, reservationSeat(rs, r.Currency))
	}
	money := func(a int64) pricing.Money { return pricing.Money{Amount: a, Currency: r.Currency} }
	out.Total, out.ServiceFee, out.TotalToPay = money(total), money(fee), money(toPay)
	return out, nil
}

// flightOf names a request for takenSeats' flights: its API key and
// Idempotency-Key.
func flightOf(p *apikey.Principal, idempotencyKey string) string {
	return strconv.FormatInt(p.KeyID, 10) + "/" + idempotencyKey
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// RefuseKnownTaken answers a hold of listed seats that this instance knows
// are all taken or asked for by a hold in flight (see takenSeats) with the
// 409 seat_taken the hold statement would give, without the hold
// statement. Else it returns no refusal, and the hold runs as usual: its
// seats then count as in flight until landed is called (a seat a hold in
// flight has locked is refused in Postgres too: NOWAIT). It checks what
// Reserve checks first: the event is the company's and on sale, the ttl
// and the seat list are valid, the seats are the event's, in their zones.
// A refusal given as the answer is counted by RefusedFromMemory.
func (s *Service) RefuseKnownTaken(ctx context.Context, p *apikey.Principal, in ReserveInput) (landed func(), refusal error) {
	if s.fresh == nil || !s.fresh() || in.BestAvailable != nil || len(in.Seats) == 0 || len(in.Seats) > MaxSeats || in.TTL != 0 {
		return nil, nil
	}
	if ttl := cmp.Or(in.TTLMinutes, DefaultTTLMinutes); ttl < MinTTLMinutes || ttl > MaxTTLMinutes {
		return nil, nil
	}
	zones := make(map[string]string, len(in.Seats))
	for _, r := range in.Seats {
		if _, twice := zones[r.SeatID]; twice {
			return nil, nil
		}
		zones[r.SeatID] = r.ZoneID
	}
	sc, err := s.onSaleCached(ctx, p.CompanyID, in.EventID, true, true)
	if err != nil {
		return nil, nil // the ordinary path says why
	}
	who := flightOf(p, in.IdempotencyKey)
	if refs := s.taken.taken(p.CompanyID, sc.event.ID, in.Seats, who, s.now()); refs != nil {
		return nil, &errs.SeatTakenError{Seats: slices.Clone(refs)}
	}
	if s.sales == nil || s.sales.ttl <= 0 {
		// Without the seat cache, a flight would cost each hold a second
		// seat read (Reserve reads them again): refusals from memory only.
		return nil, nil
	}
	// Only seats the event sells, in their zones, count as in flight: a
	// request the ordinary path refuses with 422 turns no one away.
	ids := slices.Collect(maps.Keys(zones))
	seats, err := s.eventSeats(ctx, sc.event.ID, ids)
	if err != nil || len(seats) != len(ids) {
		return nil, nil
	}
	for id, zone := range zones {
		if seats[id].ZoneID != zone {
			return nil, nil
		}
	}
	if !s.fresh() {
		return nil, nil // the listener dropped while the seats were read
	}
	refs, landed := s.taken.takenOrFly(p.CompanyID, sc.event.ID, in.Seats, zones, who, s.now())
	if refs == nil {
		return landed, nil
	}
	return nil, &errs.SeatTakenError{Seats: slices.Clone(refs)}
}

// RefusedFromMemory counts a refusal of RefuseKnownTaken given as the
// answer (the caller decides: not under a key whose first answer stands).
func (s *Service) RefusedFromMemory() { s.metrics.Hold(false) }

// RememberTakenFor changes how long a seat found taken is refused from
// memory without a fresh read (1 s), for tests of the notices alone.
func (s *Service) RememberTakenFor(d time.Duration) { s.taken.rememberFor(d) }

// SeatsChangedElsewhere is told of a seat change another process (or
// this one, announced) made to an event; event 0: changes may have been
// missed, of any event.
func (s *Service) SeatsChangedElsewhere(eventID int64) { s.taken.forget(eventID) }

// takenError names the seats that made a hold fail; when none was reported
// taken (a seat vanished meanwhile), all requested seats are named.
func takenError(requested, taken []string, seats map[string]store.ReservedSeat) error {
	if len(taken) == 0 {
		taken = requested
	}
	e := &errs.SeatTakenError{}
	for _, id := range taken {
		e.Seats = append(e.Seats, errs.SeatRef{ZoneID: seats[id].ZoneID, SeatID: id})
	}
	return e
}

func reservationSeat(rs store.ReservedSeat, currency string) ReservationSeat {
	return ReservationSeat{ZoneID: rs.ZoneID, SeatID: rs.SeatID, Row: rs.Row, Number: rs.Number, Label: rs.Label,
		TicketCategoryID: rs.CategoryID, Price: pricing.Money{Amount: rs.Price, Currency: currency}}
}

// startReservationWorkflow hands the hold to the starter, or, when there
// is none or it is full, to its event's holds workflow before answering.
func (s *Service) startReservationWorkflow(ctx context.Context, r *store.Reservation) error {
	if s.starter != nil && s.starter.Enqueue(*r) {
		return nil
	}
	err := HandOverHolds(ctx, s.temporal, s.TaskQueue, []store.Reservation{*r})
	if err == nil {
		var marks bun.IDB = s.db
		if s.starter != nil {
			marks = s.starter.db // no WAL flush on the request path
		}
		if merr := store.MarkWorkflowsStarted(ctx, marks, []string{r.ID}); merr != nil {
			s.log.WarnContext(ctx, "record hold handed to its workflow", "reservation_id", r.ID, "err", merr)
		}
		return nil
	}
	// Without its workflow nothing would ever expire the hold for good:
	// give the seats back and tell the partner to retry.
	undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, uerr := store.EndReservation(undoCtx, s.db, r.ID, states.ReservationReleased); uerr != nil {
		s.log.ErrorContext(ctx, "undo hold after failed workflow start", "reservation_id", r.ID, "err", uerr)
	}
	s.seatsChanged(r.EventID)
	return fmt.Errorf("%w: %w", errs.Unavailable, err)
}

// GetReservation returns a company's reservation.
func (s *Service) GetReservation(ctx context.Context, p *apikey.Principal, id string) (*Reservation, error) {
	r, seats, err := store.GetReservation(ctx, s.db, p.CompanyID, id)
	if err != nil {
		return nil, err
	}
	if r.IsTest != p.IsTest() {
		return nil, fmt.Errorf("reservation %s of the other environment: %w", id, errs.NotFound)
	}
	out := &Reservation{ID: r.ID, Status: r.EffectiveStatus(), EventID: r.EventID, ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt}
	for _, rs := range seats {
		out.Seats = append(out.Seats, reservationSeat(rs, r.Currency))
	}
	if out.Seats == nil {
		out.Seats = []ReservationSeat{}
	}
	money := func(a int64) pricing.Money { return pricing.Money{Amount: a, Currency: r.Currency} }
	out.Total, out.ServiceFee, out.TotalToPay = money(r.Total), money(r.ServiceFee), money(r.TotalToPay)
	return out, nil
}

// ReplaceSeats replaces the composition of a live reservation as a whole.
// Its deadline does not move.
func (s *Service) ReplaceSeats(ctx context.Context, p *apikey.Principal, id string, refs []errs.SeatRef) (*Reservation, error) {
	cur, err := s.GetReservation(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := reservationLive(cur); err != nil {
		return nil, err
	}
	sc, err := s.onSale(ctx, p.CompanyID, cur.EventID, true)
	if err != nil {
		return nil, err
	}
	ids, seats, err := s.resolveSeats(ctx, sc.event.ID, refs)
	if err != nil {
		return nil, err
	}
	taken, err := store.ReplaceSeats(ctx, s.db, store.Replacement{
		ReservationID: id, CompanyID: p.CompanyID, SeatIDs: ids,
		Prices: func(categoryID int64) int64 { return sc.prices[categoryID] },
		Totals: func(prices []int64) (int64, int64, int64) { return s.totals(sc.event, prices) },
	})
	var se *errs.StateError
	switch {
	case errors.As(err, &se):
		return nil, stateError(se)
	case err != nil:
		return nil, err
	case len(taken) > 0:
		return nil, takenError(ids, taken, seats)
	}
	s.seatsChanged(cur.EventID)
	return s.GetReservation(ctx, p, id)
}

// Release gives a live reservation's seats back. Releasing a released
// reservation again returns it unchanged.
func (s *Service) Release(ctx context.Context, p *apikey.Principal, id string) (*Reservation, error) {
	cur, err := s.GetReservation(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if cur.Status == states.ReservationReleased {
		return cur, nil
	}
	if err := reservationLive(cur); err != nil {
		return nil, err
	}
	changed, err := store.EndReservation(ctx, s.db, id, states.ReservationReleased)
	if err != nil {
		return nil, err
	}
	if changed {
		// No word to Temporal: the event's holds workflow finds the hold
		// released at its deadline and leaves it (one call per hold less).
		s.seatsChanged(cur.EventID)
	}
	out, err := s.GetReservation(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if out.Status != states.ReservationReleased {
		return nil, reservationLive(out)
	}
	return out, nil
}

func reservationLive(r *Reservation) error {
	switch r.Status {
	case states.ReservationReserved:
		return nil
	case states.ReservationExpired:
		return fmt.Errorf("reservation %s: %w", r.ID, errs.ReservationExpired)
	default:
		return &errs.StateError{Entity: "reservation", ID: r.ID, Status: string(r.Status)}
	}
}

// stateError tells an expired reservation apart: it has its own error code.
func stateError(se *errs.StateError) error {
	if se.Status == string(states.ReservationExpired) {
		return fmt.Errorf("reservation %s: %w", se.ID, errs.ReservationExpired)
	}
	return se
}

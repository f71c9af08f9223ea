package holds

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

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

// resolveSeats checks the requested seats against the event's inventory:
// each exists in the named zone, none twice, at most MaxSeats.
func (s *Service) resolveSeats(ctx context.Context, ev *store.Event, refs []errs.SeatRef) ([]string, map[string]store.ReservedSeat, error) {
	ids, err := seatIDs(refs)
	if err != nil {
		return nil, nil, err
	}
	seats, err := s.eventSeats(ctx, ev, ids)
	if err != nil {
		return nil, nil, err
	}
	verr := &errs.ValidationError{}
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

// seatIDs checks a list of seats before any is read: 1 to MaxSeats seats,
// none listed twice. It returns their ids in the order given.
func seatIDs(refs []errs.SeatRef) ([]string, error) {
	verr := &errs.ValidationError{}
	if len(refs) == 0 || len(refs) > MaxSeats {
		verr.Add("body.seats", fmt.Sprintf("a reservation holds 1 to %d seats", MaxSeats), len(refs))
		return nil, verr
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
		return nil, err
	}
	return ids, nil
}

// Reserve holds all the seats or none. A lost race answers errs.SeatTakenError
// after one statement and starts nothing; a won race starts the workflow
// that expires the hold, and undoes the hold if that workflow cannot start.
func (s *Service) Reserve(ctx context.Context, p *apikey.Principal, in ReserveInput) (*Reservation, error) {
	hold, err := holdLength(in, s.TTLUnit)
	if err != nil {
		return nil, err
	}
	sc, err := s.onSaleCached(ctx, p.CompanyID, in.EventID, true, true)
	if err != nil {
		return nil, err
	}
	if err := sc.Open(p, s.now()); err != nil {
		return nil, err
	}
	// A pick locks its seats in a transaction that the hold then completes.
	var db bun.IDB = s.db
	var ids []string
	var seats map[string]store.ReservedSeat
	// picked forgets the pick's seats in flight (once its transaction has
	// ended; calling it again does nothing).
	picked := func() {}
	if ba := in.BestAvailable; ba != nil {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("best available on event %d: %w", in.EventID, err)
		}
		defer func() {
			_ = tx.Rollback() // a no-op after Commit
			picked()          // the seats are held or free again: no longer in flight
		}()
		db = tx
		req := store.BestSeatsRequest{EventID: sc.Event.ID, Quantity: ba.Quantity, CategoryIDs: ba.TicketCategoryIDs,
			ZoneIDs: ba.ZoneIDs, Together: ba.Together, Window: max(bestWindow, 20*ba.Quantity), ChannelID: p.ChannelID}
		if ba.Together {
			req.Avoid, req.Busy = s.picking.inFlight(sc.Event.ID), s.picking.busy(sc.Event.ID)
		}
		if seats, ids, err = store.PickBestSeats(ctx, tx, req); err != nil {
			return nil, err
		}
		picked = s.picking.add(sc.Event.ID, ids)
		if len(ids) < ba.Quantity {
			_ = tx.Rollback()
			picked()
			left, withheld, err := store.FreeSeatsLeft(ctx, s.db, sc.Event.ID, p.ChannelID, ba.TicketCategoryIDs, ba.ZoneIDs)
			if err != nil {
				return nil, err
			}
			s.metrics.Hold(false)
			return nil, &errs.SoldOutError{Available: &left, Together: ba.Together, Withheld: withheld}
		}
	} else if ids, seats, err = s.resolveSeats(ctx, sc.Event, in.Seats); err != nil {
		return nil, err
	}
	unpriced := func() bool {
		for _, id := range ids {
			if _, ok := sc.Prices[seats[id].CategoryID]; !ok {
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
		if sc, err = s.OnSale(ctx, p.CompanyID, in.EventID, true); err != nil {
			return nil, err
		}
		if in.BestAvailable == nil {
			if seats, err = store.ListEventSeatsByID(ctx, s.db, sc.Event.ID, ids); err != nil {
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
		price := sc.Prices[seats[id].CategoryID]
		seatPrices[id] = price
		prices = append(prices, price)
	}
	total, fee, toPay := sc.Totals(prices)
	// Its deadline is set by the hold statement, by Postgres's clock.
	r := store.Reservation{
		ID: newReservationID(), CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(), EventID: sc.Event.ID,
		Status: states.ReservationReserved, Currency: sc.Event.Currency, Total: total, ServiceFee: fee, TotalToPay: toPay,
	}
	mark := s.taken.mark(sc.Event.ID, s.now())
	outcome, err := store.Hold(ctx, db, store.NewHold{Reservation: r, TTL: hold, SeatIDs: ids, Prices: seatPrices, ChannelID: p.ChannelID})
	r.CreatedAt, r.ExpiresAt = outcome.CreatedAt, outcome.ExpiresAt
	// Decided: the seats leave flight (won ones are remembered below).
	s.taken.land(sc.Event.ID, flightOf(p, in.IdempotencyKey))
	taken, ok := outcome.Taken, outcome.OK
	if tx, isTx := db.(bun.Tx); isTx {
		if err == nil && ok {
			if err = tx.Commit(); err != nil {
				err = fmt.Errorf("hold best seats of event %d: %w", in.EventID, err)
			}
		} else {
			_ = tx.Rollback()
		}
		picked() // held or given back: no longer in flight
	}
	if errors.Is(err, store.ErrNotOnSale) {
		// The cached event stopped selling: say why from a fresh read.
		s.sales.drop(saleKey{p.CompanyID, in.EventID})
		fresh, verr := s.OnSale(ctx, p.CompanyID, in.EventID, true)
		if verr == nil {
			verr = fresh.Open(p, s.now())
		}
		if verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("hold on event %d: %w: %w", in.EventID, errs.Unavailable, err)
	}
	if err != nil {
		return nil, err
	}
	s.metrics.Hold(ok)
	if !ok && len(outcome.Withheld) > 0 {
		return nil, notForSale(outcome.Withheld, seats)
	}
	if !ok {
		known := make(map[string]takenSeat, len(outcome.TakenUntil))
		for id, until := range outcome.TakenUntil {
			known[id] = takenSeat{zone: seats[id].ZoneID, until: derefTime(until)}
		}
		s.taken.remember(p.CompanyID, sc.Event.ID, mark, known)
		return nil, takenError(ids, taken, seats)
	}
	s.SeatsChanged(r.EventID)
	mine := make(map[string]takenSeat, len(ids))
	for _, id := range ids {
		mine[id] = takenSeat{zone: seats[id].ZoneID, until: r.ExpiresAt}
	}
	s.taken.remember(p.CompanyID, sc.Event.ID, s.taken.mark(sc.Event.ID, s.now()), mine)
	if err := s.handOver(ctx, &r); err != nil {
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

// holdLength checks what a hold request says before anything is read (its
// ttl; seats or best_available, one of the two, within their bounds) and
// returns how long the hold lasts: in.TTL exactly when set (the aggregator
// counts in seconds), else ttl_minutes (1..60, default 15) of unit. Either
// way a hold lasts 1 to 60 minutes: these bounds keep seats from being held
// out of sale, so they are checked here, where the hold is made, and not
// only by the API's schema.
func holdLength(in ReserveInput, unit time.Duration) (time.Duration, error) {
	ttl := in.TTLMinutes
	if ttl == 0 {
		ttl = DefaultTTLMinutes
	}
	if in.TTL == 0 && (ttl < MinTTLMinutes || ttl > MaxTTLMinutes) {
		return 0, errs.Invalid("body.ttl_minutes", fmt.Sprintf("must be %d..%d", MinTTLMinutes, MaxTTLMinutes), ttl)
	}
	hold := time.Duration(ttl) * unit
	if in.TTL != 0 {
		if in.TTL < MinTTLMinutes*time.Minute || in.TTL > MaxTTLMinutes*time.Minute {
			return 0, errs.Invalid("body.ttl", fmt.Sprintf("must be %d..%d seconds", MinTTLMinutes*60, MaxTTLMinutes*60), int64(in.TTL/time.Second))
		}
		hold = in.TTL
	}
	if (in.BestAvailable == nil) == (len(in.Seats) == 0) {
		return 0, errs.Invalid("body.seats", "give either seats or best_available", nil)
	}
	if ba := in.BestAvailable; ba != nil {
		verr := &errs.ValidationError{}
		if ba.Quantity < 1 || ba.Quantity > MaxSeats {
			verr.Add("body.best_available.quantity", fmt.Sprintf("must be 1..%d", MaxSeats), ba.Quantity)
		}
		if len(ba.TicketCategoryIDs) > MaxPickFilters {
			verr.Add("body.best_available.ticket_category_ids", fmt.Sprintf("at most %d", MaxPickFilters), len(ba.TicketCategoryIDs))
		}
		if len(ba.ZoneIDs) > MaxPickFilters {
			verr.Add("body.best_available.zone_ids", fmt.Sprintf("at most %d", MaxPickFilters), len(ba.ZoneIDs))
		}
		if err := verr.OrNil(); err != nil {
			return 0, err
		}
	}
	return hold, nil
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
	if err != nil || sc.Open(p, s.now()) != nil {
		return nil, nil // the ordinary path says why
	}
	who := flightOf(p, in.IdempotencyKey)
	if refs := s.taken.taken(p.CompanyID, sc.Event.ID, in.Seats, who, s.now()); refs != nil {
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
	seats, err := s.eventSeats(ctx, sc.Event, ids)
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
	refs, landed := s.taken.takenOrFly(p.CompanyID, sc.Event.ID, in.Seats, zones, who, s.now())
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

// notForSale names the requested seats allocated to a channel the caller
// does not sell in.
func notForSale(withheld []string, seats map[string]store.ReservedSeat) error {
	e := &errs.NotForSaleError{}
	for _, id := range withheld {
		e.Seats = append(e.Seats, errs.SeatRef{ZoneID: seats[id].ZoneID, SeatID: id})
	}
	return e
}

// handOver hands the hold to the starter, or, when there
// is none or it is full, to its event's holds workflow before answering.
func (s *Service) handOver(ctx context.Context, r *store.Reservation) error {
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
	s.SeatsChanged(r.EventID)
	return fmt.Errorf("%w: %w", errs.Unavailable, err)
}

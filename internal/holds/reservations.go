package holds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

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
	sc, err := s.OnSale(ctx, p.CompanyID, cur.EventID, true)
	if err != nil {
		return nil, err
	}
	ids, seats, err := s.resolveSeats(ctx, sc.Event, refs)
	if err != nil {
		return nil, err
	}
	taken, withheld, err := store.ReplaceSeats(ctx, s.db, store.Replacement{
		ReservationID: id, CompanyID: p.CompanyID, SeatIDs: ids, ChannelID: p.ChannelID,
		Prices: func(categoryID int64) int64 { return sc.Prices[categoryID] },
		Totals: func(prices []int64) (int64, int64, int64) { return sc.Totals(prices) },
	})
	switch {
	case errors.Is(err, store.ErrNotOnSale):
		// Seats were to be added outside the caller's window (a PATCH that
		// only drops seats is not a hold).
		if werr := sc.Open(p, s.now()); werr != nil {
			return nil, werr
		}
		return nil, &errs.SalesWindowError{}
	case err != nil:
		return nil, err
	case len(withheld) > 0:
		return nil, notForSale(withheld, seats)
	case len(taken) > 0:
		return nil, takenError(ids, taken, seats)
	}
	s.SeatsChanged(cur.EventID)
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
		s.SeatsChanged(cur.EventID)
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

// Extend makes a live reservation's hold last ttlMinutes from now (1..60,
// 0: the default 15, in TTLUnit), never shorter than it already lasts, and at most
// MaxTTLMinutes from its creation: a hold keeps seats out of sale, so its
// whole life has the bound its creation has (errs.HoldLimitError beyond
// it). Postgres decides, by one guarded update under the reservation's row
// lock (store.ExtendHold), against an expiry, an order or a release at the
// same moment. A hold whose deadline moved to another minute is handed to
// that minute's holds workflow; the old minute's run, finding it still
// reserved with a later deadline, passes it on too (activities), so the
// hold is made final at its new deadline either way.
func (s *Service) Extend(ctx context.Context, p *apikey.Principal, id string, ttlMinutes int) (*Reservation, error) {
	if ttlMinutes == 0 {
		ttlMinutes = DefaultTTLMinutes
	}
	if ttlMinutes < MinTTLMinutes || ttlMinutes > MaxTTLMinutes {
		return nil, errs.Invalid("body.ttl_minutes", fmt.Sprintf("must be %d..%d", MinTTLMinutes, MaxTTLMinutes), ttlMinutes)
	}
	cur, err := s.GetReservation(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := reservationLive(cur); err != nil {
		return nil, err
	}
	// Holding longer is holding: only in the caller's window (checked
	// again by Postgres's clock in the update).
	sc, err := s.OnSale(ctx, p.CompanyID, cur.EventID, true)
	if err != nil {
		return nil, err
	}
	if err := sc.Open(p, s.now()); err != nil {
		return nil, err
	}
	out, err := store.ExtendHold(ctx, s.db, store.Extension{ReservationID: id, CompanyID: p.CompanyID, IsTest: p.IsTest(),
		ChannelID: p.ChannelID, TTL: time.Duration(ttlMinutes) * s.TTLUnit, MaxLife: MaxTTLMinutes * s.TTLUnit})
	switch {
	case errors.Is(err, store.ErrHoldLifeCap):
		return nil, &errs.HoldLimitError{MaxMinutes: MaxTTLMinutes, Latest: out.Latest}
	case errors.Is(err, store.ErrNotOnSale):
		s.sales.drop(saleKey{p.CompanyID, cur.EventID})
		fresh, verr := s.OnSale(ctx, p.CompanyID, cur.EventID, true)
		if verr == nil {
			verr = fresh.Open(p, s.now())
		}
		if verr != nil {
			return nil, verr
		}
		return nil, fmt.Errorf("extend reservation %s: %w: %w", id, errs.Unavailable, err)
	case err != nil:
		return nil, err
	}
	if out.Moved {
		s.SeatsChanged(out.EventID)
		if contract.HoldsMinute(out.ExpiresAt) != contract.HoldsMinute(cur.ExpiresAt) {
			s.handOverMoved(ctx, &store.Reservation{ID: id, CompanyID: p.CompanyID, EventID: out.EventID, ExpiresAt: out.ExpiresAt})
		}
	}
	return s.GetReservation(ctx, p, id)
}

// handOverMoved hands an extended hold to the holds workflow of its new
// deadline's minute, off the request path when the starter has room. A
// failed hand-over is not the partner's: the extension stands, and the
// old minute's workflow passes the hold on at the old deadline (or the
// sweep hands over a hold that never was).
func (s *Service) handOverMoved(ctx context.Context, r *store.Reservation) {
	if s.starter != nil && s.starter.Enqueue(*r) {
		return
	}
	if err := HandOverHolds(ctx, s.temporal, s.TaskQueue, []store.Reservation{*r}); err != nil {
		s.log.WarnContext(ctx, "extended hold not handed to its new minute's workflow; the old one passes it on",
			"reservation_id", r.ID, "err", err)
	}
}

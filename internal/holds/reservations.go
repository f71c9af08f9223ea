package holds

import (
	"context"
	"errors"
	"fmt"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
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

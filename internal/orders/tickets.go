package orders

import (
	"context"
	"errors"
	"fmt"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/store"
)

// Tickets lists an order's tickets (none until it is paid).
func (s *Service) Tickets(ctx context.Context, p *apikey.Principal, id int64) ([]Ticket, error) {
	o, err := store.GetOrder(ctx, s.db, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	return s.TicketsOf(ctx, o)
}

// TicketsOf lists the tickets of an order read from the store.
func (s *Service) TicketsOf(ctx context.Context, o *store.Order) ([]Ticket, error) {
	rows, err := store.ListOrderTickets(ctx, s.db, o.ID)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	// A link sent already must keep working: a token sealed with a secret
	// no longer configured is not replaced here, only left out (and the
	// operators told: ORDER_TOKEN_PREVIOUS_SECRETS lacks that secret).
	url, err := s.Settings.Links.OrderPage(ctx, s.db, o, false)
	if errors.Is(err, delivery.ErrUnknownKey) {
		s.log.ErrorContext(ctx, "order page link cannot be shown: its token was sealed with a secret no longer configured",
			"order_id", o.ID, "err", err)
		url, err = "", nil
	}
	if err != nil {
		return nil, fmt.Errorf("order page link: %w", err)
	}
	var signed []string
	if codes := s.Settings.Links.Codes; codes != nil {
		signed, err = codes.Sign(ctx, s.db, o.EventID, o.IsTest, delivery.TicketCodes(rows))
		if delivery.CannotSign(err) {
			s.log.ErrorContext(ctx, "signed ticket codes cannot be shown: the event's key does not open (a secret no longer configured, or a damaged row)",
				"order_id", o.ID, "event_id", o.EventID, "err", err)
			signed, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ticket codes of order %d: %w", o.ID, err)
		}
	}
	out := make([]Ticket, len(rows))
	for i, t := range rows {
		out[i] = Ticket{ID: t.ID, Number: t.Number, Barcode: t.Barcode, Status: t.Status, IsTest: o.IsTest,
			Price: pricing.Money{Amount: t.Price, Currency: o.Currency}, OrderURL: url}
		if signed != nil {
			out[i].SignedBarcode = signed[i]
		}
		if t.SeatID != nil {
			out[i].Seat = &TicketSeat{ZoneID: *t.ZoneID, SeatID: *t.SeatID, Label: *t.Label}
		}
	}
	return out, nil
}

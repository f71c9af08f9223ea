package holds

import (
	"context"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
)

// Sale is an event on sale and its current category prices: what a hold
// and an order are priced from.
type Sale struct {
	Event  *store.Event
	Prices map[int64]int64
	// Windows are the channels' own windows for the event, by channel id.
	Windows map[int64]window.Window
}

// Window is the sales window of a caller of the channel (0: general sale).
func (sc *Sale) Window(channelID int64) window.Window {
	return window.For(sc.Event.GeneralSale(), sc.Windows[channelID])
}

// Open refuses a caller whose sales window is not open at now
// (errs.SalesWindowError, saying when it opens), or lets it sell.
func (sc *Sale) Open(p *apikey.Principal, now time.Time) error {
	return sc.Window(p.ChannelID).Refusal(now, sc.Event.StartsAt)
}

// OnSale loads an event the company may sell now, or says why not.
func (s *Service) OnSale(ctx context.Context, companyID, eventID int64, needScheme bool) (*Sale, error) {
	return s.onSaleCached(ctx, companyID, eventID, needScheme, false)
}

// MsgNoScheme is the field error of a seat hold on an event without seats;
// the aggregator adapter says it in its own words.
const MsgNoScheme = "the event has no seating scheme: order it by items"

func (s *Service) onSaleCached(ctx context.Context, companyID, eventID int64, needScheme, cached bool) (*Sale, error) {
	e, cats, windows, err := s.loadSale(ctx, companyID, eventID, cached)
	if err != nil {
		return nil, err
	}
	if err := saleRefusal(e, s.now(), needScheme); err != nil {
		return nil, err
	}
	if cached {
		s.sales.put(saleKey{companyID, eventID}, saleEntry{event: e, cats: cats, windows: windows, at: time.Now()})
	}
	sc := &Sale{Event: e, Prices: map[int64]int64{}, Windows: windows}
	now := s.now()
	for _, c := range cats {
		sc.Prices[c.ID] = c.PriceAt(now)
	}
	return sc, nil
}

// saleRefusal says why the event cannot be sold at now, or nil: it sells
// while published and not started, and holds seats only with a scheme.
func saleRefusal(e *store.Event, now time.Time, needScheme bool) error {
	verr := &errs.ValidationError{}
	switch {
	case e.Status != states.EventPublished:
		verr.Add("body.event_id", "the event is not on sale (status "+string(e.Status)+")", e.ID)
	case !e.StartsAt.After(now):
		verr.Add("body.event_id", "the event has started", e.ID)
	case needScheme && e.SchemeID == nil:
		verr.Add("body.event_id", MsgNoScheme, e.ID)
	}
	return verr.OrNil()
}

// Totals are the sums of seats or tickets at prices: the ticket prices,
// the order's fee (the minimum once), and what the buyer pays.
func (sc *Sale) Totals(prices []int64) (total, fee, toPay int64) {
	q := sc.Event.Fee().Order(prices...)
	return q.Total, q.Fee, q.Amount
}

// EventsOnSale lists the company's published events that have not started.
func (s *Service) EventsOnSale(ctx context.Context, p *apikey.Principal) ([]store.Event, error) {
	return store.ListEventsOnSale(ctx, s.db, p.CompanyID, s.now())
}

// Now is the service's clock, by which windows and prices are read.
func (s *Service) Now() time.Time { return s.now() }

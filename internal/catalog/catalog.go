// Package catalog is the read side of the catalog that /v1 and the
// aggregator adapter share: events with current prices and fee estimates,
// sessions, venues, cities, scheme geometry and seat availability.
package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Service answers catalog reads for one company at a time.
type Service struct {
	db           *bun.DB
	now          func() time.Time
	availability *availabilityCache
	schemes      *schemeCache
}

// New builds the service; now is the clock (time.Now in production).
func New(db *bun.DB, now func() time.Time) *Service {
	return &Service{db: db, now: now, availability: newAvailabilityCache(), schemes: newSchemeCache()}
}

// Venue is the venue summary of an event.
type Venue struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	City string `json:"city"`
}

// Event is a list item of GET /v1/events.
type Event struct {
	ID        int64              `json:"id"`
	Title     string             `json:"title"`
	Slug      string             `json:"slug"`
	Status    states.EventStatus `json:"status"`
	StartsAt  time.Time          `json:"starts_at"`
	HasScheme bool               `json:"has_scheme"`
	Venue     Venue              `json:"venue"`
	PriceFrom *pricing.Money     `json:"price_from" doc:"Lowest current ticket price; null when the event has no categories."`
	UpdatedAt time.Time          `json:"updated_at"`
}

// Category is a ticket category with its current price and fee estimate.
type Category struct {
	ID             int64          `json:"id"`
	Name           string         `json:"name"`
	Price          pricing.Money  `json:"price"`
	CommissionMode pricing.Mode   `json:"commission_mode"`
	ServiceFee     pricing.Money  `json:"service_fee" doc:"Fee estimate for one ticket; the order fee is computed from the order sum."`
	PriceTotal     *pricing.Money `json:"price_total,omitempty" doc:"price + service_fee; present when commission_mode is separate."`
	Capacity       *int           `json:"capacity,omitempty" doc:"General-admission capacity; absent for seated categories."`
	Available      *int           `json:"available,omitempty" doc:"General-admission tickets left."`
}

// Page is a 1-based page request, or the rows after a position.
type Page = store.Paging

// ListEvents lists the company's events with their lowest current price.
func (s *Service) ListEvents(ctx context.Context, companyID int64, f store.EventFilter) ([]Event, int, error) {
	return s.ListEventsFor(ctx, companyID, 0, f)
}

// ListEventsFor lists the company's events as a caller of the channel (0:
// general sale only) sees them: price_from leaves out the categories
// wholly allocated to other channels.
func (s *Service) ListEventsFor(ctx context.Context, companyID, channelID int64, f store.EventFilter) ([]Event, int, error) {
	rows, total, err := store.ListEvents(ctx, s.db, companyID, f)
	if err != nil {
		return nil, 0, err
	}
	out, err := s.eventsFor(ctx, rows, channelID)
	return out, total, err
}

// GetEventFor returns one of the company's events, of any status, as a
// key of channelID sees it (its price_from is the caller's own, as in the
// list).
func (s *Service) GetEventFor(ctx context.Context, companyID, channelID, eventID int64) (*Event, error) {
	row, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	out, err := s.eventsFor(ctx, []store.Event{*row}, channelID)
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

// eventsFor makes partners' events of rows: price_from is the lowest
// current price of a category the caller's channel may sell.
func (s *Service) eventsFor(ctx context.Context, rows []store.Event, channelID int64) ([]Event, error) {
	ids := make([]int64, len(rows))
	for i, e := range rows {
		ids[i] = e.ID
	}
	cats, err := store.ListCategories(ctx, s.db, ids...)
	if err != nil {
		return nil, err
	}
	withheld, err := store.WithheldCategories(ctx, s.db, ids, channelID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	minPrice := map[int64]int64{}
	for _, c := range cats {
		if withheld[c.ID] {
			continue
		}
		p := c.PriceAt(now)
		if cur, ok := minPrice[c.EventID]; !ok || p < cur {
			minPrice[c.EventID] = p
		}
	}
	out := make([]Event, len(rows))
	for i, e := range rows {
		out[i] = Event{ID: e.ID, Title: e.Title, Slug: e.Slug, Status: e.Status, StartsAt: e.StartsAt,
			HasScheme: e.SchemeID != nil, Venue: Venue{ID: e.VenueID, Name: e.VenueName, City: e.CityName},
			UpdatedAt: e.UpdatedAt}
		if p, ok := minPrice[e.ID]; ok {
			out[i].PriceFrom = &pricing.Money{Amount: p, Currency: e.Currency}
		}
	}
	return out, nil
}

// Categories returns an event's categories with current prices.
func (s *Service) Categories(ctx context.Context, companyID, eventID int64) ([]Category, error) {
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	cats, err := store.ListCategories(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	fee, now := e.Fee(), s.now()
	out := make([]Category, len(cats))
	for i, c := range cats {
		price := c.PriceAt(now)
		out[i] = Category{ID: c.ID, Name: c.Name, CommissionMode: e.FeeMode,
			Price:      pricing.Money{Amount: price, Currency: e.Currency},
			ServiceFee: pricing.Money{Amount: fee.PerTicket(price), Currency: e.Currency},
			Capacity:   c.Capacity}
		if fee.Mode == pricing.Separate {
			out[i].PriceTotal = &pricing.Money{Amount: fee.PriceTotal(price), Currency: e.Currency}
		}
		if c.Capacity != nil {
			left := max(*c.Capacity-c.Sold, 0)
			out[i].Available = &left
		}
	}
	return out, nil
}

// Session is a schedule slot: its id is the schedule_slot_id of an order.
type Session struct {
	ID        int64     `json:"id"`
	EventID   int64     `json:"event_id"`
	StartsAt  time.Time `json:"starts_at"`
	Capacity  int       `json:"capacity"`
	Available int       `json:"available"`
}

// Sessions lists schedule slots of the company's published events, or of
// one of its events.
func (s *Service) Sessions(ctx context.Context, companyID, eventID int64, p Page) ([]Session, int, error) {
	if eventID != 0 {
		if _, err := store.GetEvent(ctx, s.db, companyID, eventID); err != nil {
			return nil, 0, err
		}
	}
	rows, total, err := store.ListSessions(ctx, s.db, companyID, eventID, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = Session{ID: r.ID, EventID: r.EventID, StartsAt: r.StartsAt, Capacity: r.Capacity, Available: max(r.Capacity-r.Sold, 0)}
	}
	return out, total, nil
}

// VenueItem is a /v1/venues item.
type VenueItem struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	City     string `json:"city"`
	CityID   int64  `json:"city_id"`
	Timezone string `json:"timezone"`
}

// Venues lists the company's venues.
func (s *Service) Venues(ctx context.Context, companyID int64, p Page) ([]VenueItem, int, error) {
	rows, total, err := store.ListVenues(ctx, s.db, companyID, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]VenueItem, len(rows))
	for i, r := range rows {
		out[i] = VenueItem{ID: r.ID, Name: r.Name, City: r.CityName, CityID: r.CityID, Timezone: r.Timezone}
	}
	return out, total, nil
}

// City is a /v1/cities item.
type City struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// Cities lists the company's cities.
func (s *Service) Cities(ctx context.Context, companyID int64, p Page) ([]City, int, error) {
	rows, total, err := store.ListCities(ctx, s.db, companyID, p)
	if err != nil {
		return nil, 0, err
	}
	out := make([]City, len(rows))
	for i, r := range rows {
		out[i] = City{ID: r.ID, Name: r.Name}
	}
	return out, total, nil
}

// CheckEvent tells whether the company has the event (any status), by
// the rule the scheme is read by: errs.NotFound if not.
func (s *Service) CheckEvent(ctx context.Context, companyID, eventID int64) error {
	_, err := store.GetEventVersion(ctx, s.db, companyID, eventID)
	return err
}

// Scheme returns the event's hall geometry (JSON) and its strong ETag:
// every seat with its place, the stage, outlines, labels and bounds.
func (s *Service) Scheme(ctx context.Context, companyID, eventID int64) ([]byte, string, error) {
	e, err := store.GetEventVersion(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, "", err
	}
	if e.SchemeID == nil {
		return nil, "", fmt.Errorf("scheme of event %d: %w", eventID, errs.NoScheme)
	}
	geometry, etag, err := store.GetSchemeGeometry(ctx, s.db, *e.SchemeID)
	if err != nil || catalogfile.HasDrawing(geometry) {
		return geometry, etag, err
	}
	return s.schemes.laidOut(*e.SchemeID, etag, geometry)
}

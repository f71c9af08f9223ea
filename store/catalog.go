package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/window"
)

// Event is an event row with its venue and city names.
type Event struct {
	bun.BaseModel `bun:"table:events,alias:e"`
	ID            int64              `bun:"id,pk"`
	CompanyID     int64              `bun:"company_id"`
	Ref           string             `bun:"ref"`
	Title         string             `bun:"title"`
	Slug          string             `bun:"slug"`
	Status        states.EventStatus `bun:"status"`
	StartsAt      time.Time          `bun:"starts_at"`
	VenueID       int64              `bun:"venue_id"`
	SchemeID      *int64             `bun:"scheme_id"`
	Currency      string             `bun:"currency"`
	FeeMode       pricing.Mode       `bun:"fee_mode"`
	FeeRateBP     int64              `bun:"fee_rate_bp"`
	MinFee        int64              `bun:"min_fee"`
	SeatVersion   int64              `bun:"seat_version"`
	AllowReentry  bool               `bun:"allow_reentry"` // a checked-in ticket may go out and in again
	// General sale's window (nil: from publication; until the start).
	SalesStart *time.Time `bun:"sales_start"`
	SalesEnd   *time.Time `bun:"sales_end"`
	CreatedAt  time.Time  `bun:"created_at"`
	UpdatedAt  time.Time  `bun:"updated_at"`
	VenueName  string     `bun:"venue_name,scanonly"`
	CityID     int64      `bun:"city_id,scanonly"`
	CityName   string     `bun:"city_name,scanonly"`
}

// GeneralSale is the window of general sale (internal/window).
func (e *Event) GeneralSale() window.Window {
	return window.Window{Start: e.SalesStart, End: e.SalesEnd}
}

// Fee is the event's fee setting.
func (e *Event) Fee() pricing.Fee {
	return pricing.Fee{Mode: pricing.Mode(e.FeeMode), RateBP: e.FeeRateBP, MinFee: e.MinFee}
}

// Category is a ticket category of an event.
type Category struct {
	bun.BaseModel `bun:"table:ticket_categories,alias:c"`
	ID            int64                 `bun:"id,pk"`
	EventID       int64                 `bun:"event_id"`
	Ref           string                `bun:"ref"`
	Name          string                `bun:"name"`
	Position      int                   `bun:"position"`
	BasePrice     int64                 `bun:"base_price"`
	Capacity      *int                  `bun:"capacity"`
	Sold          int                   `bun:"sold"`
	Zones         []string              `bun:"zones,array"`
	PriceChanges  []pricing.PriceChange `bun:"price_changes,type:jsonb"`
	UpdatedAt     time.Time             `bun:"updated_at"`
}

// PriceAt is the category's price at now after its price changes.
func (c *Category) PriceAt(now time.Time) int64 {
	return pricing.CurrentPrice(c.BasePrice, c.PriceChanges, now, c.Sold)
}

// NextPriceChange is the next moment a date rule changes the price, or zero.
func (c *Category) NextPriceChange(now time.Time) time.Time {
	var next time.Time
	for _, pc := range c.PriceChanges {
		if pc.From != nil && pc.From.After(now) && (next.IsZero() || pc.From.Before(next)) {
			next = *pc.From
		}
	}
	return next
}

// EventFilter selects a company's events; zero fields match all.
type EventFilter struct {
	Status       states.EventStatus
	CityID       int64
	VenueID      int64
	DateFrom     time.Time
	DateTo       time.Time
	HasScheme    *bool
	UpdatedSince time.Time
	Page         int
	PerPage      int
	After        *Seek // {starts_at, id} of the last event seen
}

func eventQuery(db bun.IDB, out any) *bun.SelectQuery {
	return db.NewSelect().Model(out).
		ColumnExpr("e.*").
		ColumnExpr("v.name AS venue_name, v.city_id, ci.name AS city_name").
		Join("JOIN venues AS v ON v.id = e.venue_id").
		Join("JOIN cities AS ci ON ci.id = v.city_id")
}

// ListEvents returns one page of the company's events and the total count.
func ListEvents(ctx context.Context, db bun.IDB, companyID int64, f EventFilter) ([]Event, int, error) {
	var events []Event
	q := eventQuery(db, &events).Where("e.company_id = ?", companyID).Where("e.status = ?", f.Status)
	if f.CityID != 0 {
		q.Where("v.city_id = ?", f.CityID)
	}
	if f.VenueID != 0 {
		q.Where("e.venue_id = ?", f.VenueID)
	}
	if !f.DateFrom.IsZero() {
		q.Where("e.starts_at >= ?", f.DateFrom)
	}
	if !f.DateTo.IsZero() {
		q.Where("e.starts_at < ?", f.DateTo)
	}
	if f.HasScheme != nil {
		if *f.HasScheme {
			q.Where("e.scheme_id IS NOT NULL")
		} else {
			q.Where("e.scheme_id IS NULL")
		}
	}
	if !f.UpdatedSince.IsZero() {
		q.Where("e.updated_at > ?", f.UpdatedSince)
	}
	total, err := scanPage(ctx, q, "e.starts_at, e.id", Paging{f.Page, f.PerPage, f.After},
		"(e.starts_at, e.id) > (?, ?)", func(s *Seek) []any { return []any{s.Time, s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list events of company %d: %w", companyID, err)
	}
	return events, int(total), nil
}

// GetEvent returns a company's event of any status.
func GetEvent(ctx context.Context, db bun.IDB, companyID, eventID int64) (*Event, error) {
	e := new(Event)
	if err := scanPrepared(ctx, db, e, getEventSQL(), eventID, companyID); err != nil {
		return nil, notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return e, nil
}

// getEventSQL is GetEvent's read, prepared: every hold and order reads it.
var getEventSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
	return db.NewSelect().Model((*Event)(nil)).ColumnExpr("?TableColumns").
		ColumnExpr("v.name AS venue_name, v.city_id, ci.name AS city_name").
		Join("JOIN venues AS v ON v.id = e.venue_id").
		Join("JOIN cities AS ci ON ci.id = v.city_id").
		Where("e.id = $1::bigint AND e.company_id = $2::bigint")
})

// EventVersion is the little an availability request needs to know first.
type EventVersion struct {
	ID       int64
	Status   states.EventStatus
	SchemeID *int64
	StartsAt time.Time
	Version  SeatsVersion
}

// SeatsVersion changes with every change of an event's seats: the event's
// own counter (bumped by catalog imports and GA sales) and the seats' sum.
type SeatsVersion struct {
	Event int64 `bun:"seat_version"`
	Seats int64 `bun:"seats_version"`
}

// String renders the version for ETags and the availability body.
func (v SeatsVersion) String() string { return fmt.Sprintf("%d.%d", v.Event, v.Seats) }

// The sum, not the max: every seat change raises one row's version, so the
// sum grows with each committed change whatever order they commit in.
const seatsVersionSQL = "(SELECT coalesce(sum(version), 0)::bigint FROM event_seats WHERE event_id = e.id) AS seats_version"

// GetEventVersion reads the event's seat version in one indexed lookup.
func GetEventVersion(ctx context.Context, db bun.IDB, companyID, eventID int64) (*EventVersion, error) {
	v := new(EventVersion)
	var row struct {
		ID       int64
		Status   states.EventStatus
		SchemeID *int64
		StartsAt time.Time
		SeatsVersion
	}
	err := db.NewRaw("SELECT e.id, e.status, e.scheme_id, e.starts_at, e.seat_version, "+seatsVersionSQL+
		" FROM events e WHERE e.id = ? AND e.company_id = ?", eventID, companyID).Scan(ctx, &row)
	*v = EventVersion{ID: row.ID, Status: row.Status, SchemeID: row.SchemeID, StartsAt: row.StartsAt, Version: row.SeatsVersion}
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return v, nil
}

// CheckEventOwner answers errs.NotFound unless the event is the company's:
// one indexed lookup, for a caller about to read the event's seats anyway.
func CheckEventOwner(ctx context.Context, db bun.IDB, companyID, eventID int64) error {
	var id int64
	err := db.NewRaw("SELECT id FROM events WHERE id = ? AND company_id = ?", eventID, companyID).Scan(ctx, &id)
	if err != nil {
		return notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return nil
}

// ListCategories returns the categories of the given events in file order.
func ListCategories(ctx context.Context, db bun.IDB, eventIDs ...int64) ([]Category, error) {
	var cats []Category
	if len(eventIDs) == 0 {
		return nil, nil
	}
	if err := scanPrepared(ctx, db, &cats, listCategoriesSQL(), eventIDs); err != nil {
		return nil, fmt.Errorf("load categories: %w", err)
	}
	return cats, nil
}

// listCategoriesSQL is ListCategories' read, prepared: every hold and
// order prices by it. $1 is the events' ids.
var listCategoriesSQL = preparedSelect(func(db *bun.DB) *bun.SelectQuery {
	return db.NewSelect().Model((*Category)(nil)).Where("c.event_id = ANY($1::bigint[])").OrderExpr("c.event_id, c.position")
})

// Session is a schedule slot of an event.
type Session struct {
	bun.BaseModel `bun:"table:sessions,alias:s"`
	ID            int64     `bun:"id,pk"`
	EventID       int64     `bun:"event_id"`
	Ref           string    `bun:"ref"`
	StartsAt      time.Time `bun:"starts_at"`
	Capacity      int       `bun:"capacity"`
	Sold          int       `bun:"sold"`
}

// ListSessions returns the sessions of the company's published events, or of
// one own event of any status when eventID is given.
func ListSessions(ctx context.Context, db bun.IDB, companyID, eventID int64, p Paging) ([]Session, int, error) {
	var out []Session
	q := db.NewSelect().Model(&out).ColumnExpr("s.id, s.event_id, s.ref, s.starts_at, s.capacity, s.sold").
		Join("JOIN events AS e ON e.id = s.event_id").Where("e.company_id = ?", companyID)
	if eventID != 0 {
		q.Where("s.event_id = ?", eventID)
	} else {
		q.Where("e.status = 'published'")
	}
	total, err := scanPage(ctx, q, "s.starts_at, s.id", p,
		"(s.starts_at, s.id) > (?, ?)", func(s *Seek) []any { return []any{s.Time, s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list sessions of company %d: %w", companyID, err)
	}
	return out, int(total), nil
}

// Venue is a venue with its city.
type Venue struct {
	bun.BaseModel `bun:"table:venues,alias:v"`
	ID            int64  `bun:"id,pk"`
	Name          string `bun:"name"`
	CityID        int64  `bun:"city_id"`
	Timezone      string `bun:"timezone"`
	CityName      string `bun:"city_name,scanonly"`
}

// ListVenues returns one page of the company's venues.
func ListVenues(ctx context.Context, db bun.IDB, companyID int64, p Paging) ([]Venue, int, error) {
	var out []Venue
	q := db.NewSelect().Model(&out).ColumnExpr("v.id, v.name, v.city_id, v.timezone, ci.name AS city_name").
		Join("JOIN cities AS ci ON ci.id = v.city_id").Where("v.company_id = ?", companyID)
	total, err := scanPage(ctx, q, "v.name, v.id", p,
		"(v.name, v.id) > (?, ?)", func(s *Seek) []any { return []any{s.Text, s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list venues of company %d: %w", companyID, err)
	}
	return out, int(total), nil
}

// City is a city of a company's catalog.
type City struct {
	bun.BaseModel `bun:"table:cities,alias:ci"`
	ID            int64  `bun:"id,pk"`
	Name          string `bun:"name"`
}

// ListCities returns one page of the company's cities.
func ListCities(ctx context.Context, db bun.IDB, companyID int64, p Paging) ([]City, int, error) {
	var out []City
	q := db.NewSelect().Model(&out).Column("id", "name").Where("company_id = ?", companyID)
	total, err := scanPage(ctx, q, "name, id", p,
		"(name, id) > (?, ?)", func(s *Seek) []any { return []any{s.Text, s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list cities of company %d: %w", companyID, err)
	}
	return out, int(total), nil
}

// GetSchemeGeometry returns a scheme's served geometry and its ETag.
func GetSchemeGeometry(ctx context.Context, db bun.IDB, schemeID int64) (geometry []byte, etag string, err error) {
	var row struct {
		Geometry string
		ETag     string `bun:"etag"`
	}
	if err := db.NewRaw("SELECT geometry::text AS geometry, etag FROM schemes WHERE id = ?", schemeID).Scan(ctx, &row); err != nil {
		return nil, "", notFound(err, fmt.Sprintf("scheme %d", schemeID))
	}
	return []byte(row.Geometry), row.ETag, nil
}

// GetEventTitle reads an event's title.
func GetEventTitle(ctx context.Context, db bun.IDB, eventID int64) (string, error) {
	var title string
	if err := db.NewRaw("SELECT title FROM events WHERE id = ?", eventID).Scan(ctx, &title); err != nil {
		return "", notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return title, nil
}

// GetEventCurrency reads the currency an event sells in.
func GetEventCurrency(ctx context.Context, db bun.IDB, eventID int64) (string, error) {
	var currency string
	if err := db.NewRaw("SELECT currency FROM events WHERE id = ?", eventID).Scan(ctx, &currency); err != nil {
		return "", notFound(err, fmt.Sprintf("currency of event %d", eventID))
	}
	return currency, nil
}

// Place is where and when an event happens, as tickets print it.
type Place struct {
	Title    string
	StartsAt time.Time
	Venue    string
	City     string
	Timezone string
}

// GetEventPlace reads an event's title, start, venue, city and time zone.
func GetEventPlace(ctx context.Context, db bun.IDB, eventID int64) (Place, error) {
	var p Place
	err := scanPrepared(ctx, db, &p, `SELECT e.title, e.starts_at, v.name AS venue, ci.name AS city, v.timezone
		FROM events e JOIN venues v ON v.id = e.venue_id JOIN cities ci ON ci.id = v.city_id WHERE e.id = $1::bigint`, eventID)
	if err != nil {
		return Place{}, notFound(err, fmt.Sprintf("event %d", eventID))
	}
	return p, nil
}

// CountSessions counts an event's schedule slots.
func CountSessions(ctx context.Context, db bun.IDB, eventID int64) (int, error) {
	var n int
	if err := db.NewRaw("SELECT count(*) FROM sessions WHERE event_id = ?", eventID).Scan(ctx, &n); err != nil {
		return 0, fmt.Errorf("sessions of event %d: %w", eventID, err)
	}
	return n, nil
}

// IsSessionOf tells whether a schedule slot belongs to an event.
func IsSessionOf(ctx context.Context, db bun.IDB, sessionID, eventID int64) (bool, error) {
	var ok bool
	if err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ? AND event_id = ?)", sessionID, eventID).Scan(ctx, &ok); err != nil {
		return false, fmt.Errorf("session %d of event %d: %w", sessionID, eventID, err)
	}
	return ok, nil
}

// ListEventsOnSale lists a company's published events that have not started,
// with their venue and city.
func ListEventsOnSale(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]Event, error) {
	var events []Event
	err := eventQuery(db, &events).Where("e.company_id = ? AND e.status = 'published' AND e.starts_at > ?", companyID, now).
		OrderExpr("e.starts_at, e.id").Limit(1000).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("events on sale of company %d: %w", companyID, err)
	}
	return events, nil
}

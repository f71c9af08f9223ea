package store

import (
	"time"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
)

// CatalogPlan is a validated catalog file, ready to be upserted by ref.
type CatalogPlan struct {
	Cities   []PlanCity
	Venues   []PlanVenue
	Events   []PlanEvent
	Channels []PlanChannel
}

// PlanChannel is a sales channel and applications the file puts in it.
type PlanChannel struct {
	Ref, Name    string
	Applications []PlanApplication
}

// PlanApplication is an application of the company by environment and
// name (made when missing).
type PlanApplication struct{ Environment, Name string }

// PlanAllocation is what an event allocates to a channel, and the
// channel's terms for it (nil times: none).
type PlanAllocation struct {
	ChannelRef           string
	SeatIDs              []string // resolved from the file's selector
	Quantities           []PlanQuantity
	SalesStart, SalesEnd *time.Time
	ReleaseAt            *time.Time
}

// PlanQuantity is a channel's quantity of a general-admission category
// (and session).
type PlanQuantity struct {
	CategoryRef, SessionRef string
	Quantity                int
}

type PlanCity struct{ Ref, Name string }

type PlanVenue struct {
	Ref, Name, CityRef, Timezone string
	Schemes                      []PlanScheme
}

type PlanScheme struct {
	Ref, Name string
	Geometry  []byte // JSON served by GET /v1/events/{id}/scheme
	ETag      string // hash of Geometry
	Seats     []PlanSeat
}

type PlanSeat struct {
	SeatID, ZoneID, Row, Number, Label string
	Pos                                int // 1-based place in its row, in the file's order
	Rank                               int // best-available order, lower is better
}

type PlanEvent struct {
	Ref, Title, Slug    string
	Status              states.EventStatus
	StartsAt            time.Time
	VenueRef, SchemeRef string // SchemeRef is empty for events without seats
	Fee                 pricing.Fee
	// AllowReentry lets a ticket out and in again at the door.
	AllowReentry bool
	Categories   []PlanCategory
	Sessions     []PlanSession
	// Seats maps every sold seat of the scheme to its category ref.
	Seats []PlanEventSeat
	// SalesStart and SalesEnd are general sale's window (nil: none).
	SalesStart, SalesEnd *time.Time
	Allocations          []PlanAllocation
}

type PlanEventSeat struct {
	PlanSeat
	CategoryRef string
}

type PlanCategory struct {
	Ref, Name    string
	BasePrice    int64
	Capacity     *int
	Zones        []string
	Rows         map[string][]string
	PriceChanges []pricing.PriceChange
}

type PlanSession struct {
	Ref      string
	StartsAt time.Time
	Capacity int
}

// KnownCatalog is what a company already has in the store, so a catalog file
// may refer to cities, venues and schemes imported earlier.
type KnownCatalog struct {
	Cities map[string]bool
	Venues map[string]map[string][]PlanSeat // venue ref → scheme ref → seats
	// Channels are the refs of the company's sales channels.
	Channels map[string]bool
}

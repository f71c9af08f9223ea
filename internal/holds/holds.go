// Package holds keeps seats for a buyer for a while: the seat holds of /v1
// reservations and of the aggregator's reserve, the best-available pick,
// refusals from memory in an on-sale rush, the sale context (an event on
// sale and its prices) that orders price from, and the hand-over of holds
// to their event's per-minute workflow.
//
// Names: a reservation is the partner's resource (POST /v1/reservations,
// its id, its status); a hold is what it does to seats (state "held" until
// a deadline). So types and functions about the resource say Reservation,
// and those about seats and deadlines say hold.
package holds

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Limits of a reservation (docs/decisions.md).
const (
	MaxSeats          = 20
	DefaultTTLMinutes = 15
	MinTTLMinutes     = 1
	MaxTTLMinutes     = 60
	// MaxPickFilters bounds best available's category and zone filters.
	MaxPickFilters = 50
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
	picking  *pickingSeats
	fresh    func() bool // seat-change notices are coming in
	// TTLUnit is the length of one "minute" of ttl_minutes: a minute in
	// production, shorter in tests that watch a hold expire.
	TTLUnit time.Duration
	// TaskQueue of the workflows this service starts.
	TaskQueue string
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
	// Starter hands holds to their event's holds workflow off the request
	// path (nil: each hold is handed over before answering).
	Starter *Starter
	// NoticesComing tells whether every seat change of other processes
	// reaches SeatsChangedElsewhere right now (LISTEN is connected): only
	// then are holds of seats known taken refused from memory (nil: never).
	NoticesComing func() bool
}

// Settings shape the selling.
type Settings struct {
	TaskQueue string
	// SaleCacheTTL: holds read an event and its prices from memory for up
	// to this long (0: every hold reads them). A hold on an event that
	// stopped selling meanwhile is still refused: the hold statement
	// checks it.
	SaleCacheTTL time.Duration
}

// New builds the service.
func New(d Deps, st Settings) *Service {
	s := &Service{db: d.DB, temporal: d.Temporal, log: d.Log, now: d.Now, metrics: d.Metrics, changed: d.SeatsChanged,
		starter: d.Starter, taken: newTakenSeats(), picking: newPickingSeats(), fresh: d.NoticesComing, TTLUnit: time.Minute, TaskQueue: cmp.Or(st.TaskQueue, contract.TaskQueue)}
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

// SeatsChanged is told of every seat change this process makes (holds,
// orders, refunds): the memory of taken seats forgets the event, and the
// availability cache is told.
func (s *Service) SeatsChanged(eventID int64) {
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
	Status     states.ReservationStatus `json:"status"`
	EventID    int64                    `json:"event_id"`
	ExpiresAt  time.Time                `json:"expires_at"`
	Seats      []ReservationSeat        `json:"seats"`
	Total      pricing.Money            `json:"total" doc:"Sum of seat prices."`
	ServiceFee pricing.Money            `json:"service_fee" doc:"The order fee these seats would carry (minimum once per order)."`
	TotalToPay pricing.Money            `json:"total_to_pay" doc:"What the buyer pays for these seats."`
	CreatedAt  time.Time                `json:"created_at"`
}

func reservationSeat(rs store.ReservedSeat, currency string) ReservationSeat {
	return ReservationSeat{ZoneID: rs.ZoneID, SeatID: rs.SeatID, Row: rs.Row, Number: rs.Number, Label: rs.Label,
		TicketCategoryID: rs.CategoryID, Price: pricing.Money{Amount: rs.Price, Currency: currency}}
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

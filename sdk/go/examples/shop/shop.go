// Package shop is the example shop of docs/example-shop.md: a partner's
// web shop that sells one seated event with the service's seat map.
//
// The buyer's browser draws the hall with <ticket-seat-map>, which reads the
// scheme and availability straight from the service with a seat map token.
// Everything that sells goes through this server with the partner's key,
// which never reaches the browser: the hold (picked seats, or the best
// available ones), the order with the buyer's details, and its tickets once
// the buyer has paid on the payment page. A buyer's cart (the hold, then
// the orders) is kept here, under a cookie, not in the browser (cart.go).
package shop

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
)

//go:embed page.html shop.js shop.css
var files embed.FS

var page = template.Must(template.ParseFS(files, "page.html"))

// MaxSeats is the most seats one cart holds (the component's max-seats).
const MaxSeats = 6

// Shop serves the shop's page and its five calls. Set the fields, then
// serve Handler().
type Shop struct {
	// Tickets is the SDK's client with the partner's key.
	Tickets *ticketsales.ClientWithResponses
	// ServiceURL is the service's origin as buyers' browsers reach it:
	// the component's script and reads come from there.
	ServiceURL string
	// EventID is the seated event on sale.
	EventID int64
	// HTTPS says buyers reach the shop over https (directly or through a
	// proxy): the cart's cookie is then __Host- and Secure.
	HTTPS bool
	Log   *slog.Logger

	mu    sync.Mutex
	carts map[string]*cart
	zones map[int64]*time.Location // venues' time zones, by venue id
}

// Handler is the shop: the page, its static files and the JSON calls the
// page makes.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.Handle("GET /shop.js", http.FileServerFS(files))
	mux.Handle("GET /shop.css", http.FileServerFS(files))
	mux.HandleFunc("POST /api/seat-map-token", s.seatMapToken)
	mux.HandleFunc("POST /api/hold", s.hold)
	mux.HandleFunc("POST /api/order", s.order)
	mux.HandleFunc("GET /api/orders", s.orders)
	return mux
}

// page renders the event with a fresh seat map token and its categories,
// under a Content-Security-Policy that allows the service for the
// component's script and reads and nothing else.
func (s *Shop) page(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The cart starts with the page, so the page's first calls, however
	// many at once, share it.
	s.cartOf(w, r, true)
	ev, err := ticketsales.Check(s.Tickets.GetEventWithResponse(ctx, s.EventID))
	if err != nil {
		s.fail(w, r, fmt.Errorf("read event %d: %w", s.EventID, err))
		return
	}
	cats, err := ticketsales.Check(s.Tickets.ListEventCategoriesWithResponse(ctx, s.EventID))
	if err != nil {
		s.fail(w, r, fmt.Errorf("read categories of event %d: %w", s.EventID, err))
		return
	}
	token, err := s.newToken(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	e := ev.JSON200.Data
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' "+s.ServiceURL+
		"; connect-src 'self' "+s.ServiceURL+"; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	err = page.Execute(w, map[string]any{
		"Event":    e,
		"StartsAt": e.StartsAt.In(s.zone(ctx, e.Venue.Id)).Format("Mon 2 January 2006, 15:04 MST"),
		"Script":   s.ServiceURL + "/seat-map/v1/seat-map.js",
		"Service":  s.ServiceURL,
		"Token":    token,
		// In the page's <script type="application/json">: html/template
		// writes it as JSON.
		"Categories": cats.JSON200.Data,
		"MaxSeats":   MaxSeats,
	})
	if err != nil {
		s.log().ErrorContext(ctx, "render the shop page", "err", err)
	}
}

// zone is a venue's time zone, in which its events' times are written for
// the buyers going there. Venues are read once: a venue does not move.
func (s *Shop) zone(ctx context.Context, venue int64) *time.Location {
	s.mu.Lock()
	loc, ok := s.zones[venue]
	s.mu.Unlock()
	if ok {
		return loc
	}
	venues := ticketsales.All(ctx, func(ctx context.Context, cursor *string) ([]ticketsales.VenueItem, *ticketsales.Meta, error) {
		res, err := ticketsales.Check(s.Tickets.ListVenuesWithResponse(ctx, &ticketsales.ListVenuesParams{Cursor: cursor}))
		if err != nil {
			return nil, nil, err
		}
		return res.JSON200.Data, res.JSON200.Meta, nil
	})
	for v, err := range venues {
		if err != nil {
			s.log().WarnContext(ctx, "read the venues; times shown in UTC", "err", err)
			return time.UTC
		}
		if v.Id != venue {
			continue
		}
		loc, err := time.LoadLocation(v.Timezone)
		if err != nil {
			s.log().WarnContext(ctx, "a venue's time zone is unknown here; times shown in UTC", "venue", venue, "zone", v.Timezone, "err", err)
			loc = time.UTC
		}
		s.mu.Lock()
		if s.zones == nil {
			s.zones = map[int64]*time.Location{}
		}
		s.zones[venue] = loc
		s.mu.Unlock()
		return loc
	}
	return time.UTC
}

// newToken makes a seat map token for a buyer's browser: it reads this
// event's hall and availability, nothing else, for an hour.
func (s *Shop) newToken(ctx context.Context) (string, error) {
	ttl := int64(60)
	res, err := ticketsales.Check(s.Tickets.CreateSeatMapTokenWithResponse(ctx, s.EventID,
		ticketsales.SeatMapTokenBody{TtlMinutes: &ttl}))
	if err != nil {
		return "", fmt.Errorf("make a seat map token for event %d: %w", s.EventID, err)
	}
	return res.JSON201.Data.Token, nil
}

// seatMapToken gives the page a new token when the component reports its
// token expired (a buyer who kept the page open for over an hour).
func (s *Shop) seatMapToken(w http.ResponseWriter, r *http.Request) {
	token, err := s.newToken(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": token})
}

func (s *Shop) log() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Venues and cities change rarely: partners may cache them for a day.
const cacheOneDay = "private, max-age=86400"

type listEventsInput struct {
	PageParams
	Status       states.EventStatus `query:"filter.status" default:"published" doc:"Event status; draft and archived list the company's own events of that status."`
	CityID       int64              `query:"filter.city_id" minimum:"1"`
	VenueID      int64              `query:"filter.venue_id" minimum:"1"`
	DateFrom     string             `query:"filter.date_from" doc:"Events starting at or after: a date (YYYY-MM-DD, UTC) or an ISO 8601 timestamp."`
	DateTo       string             `query:"filter.date_to" doc:"Events starting before the end of this date (YYYY-MM-DD, UTC) or before this timestamp."`
	HasScheme    string             `query:"filter.has_scheme" enum:"0,1,true,false" doc:"1: only events with seat choice; 0: only events without."`
	UpdatedSince string             `query:"updated_since" doc:"Events changed after this ISO 8601 timestamp."`

	filter store.EventFilter
}

// Resolve parses the date filters, reporting every bad one at once.
func (in *listEventsInput) Resolve(ctx huma.Context) []error {
	errs := in.PageParams.Resolve(ctx)
	in.filter = store.EventFilter{Status: in.Status, CityID: in.CityID, VenueID: in.VenueID, Page: in.Page, PerPage: in.PerPage, After: in.after}
	parse := func(name, value string, endOfDay bool) time.Time {
		t, err := parseDateOrTime("query."+name, value, endOfDay)
		if err != nil {
			errs = append(errs, err)
		}
		return t
	}
	in.filter.DateFrom = parse("filter.date_from", in.DateFrom, false)
	in.filter.DateTo = parse("filter.date_to", in.DateTo, true)
	if in.UpdatedSince != "" {
		t, err := time.Parse(time.RFC3339Nano, in.UpdatedSince)
		if err != nil {
			errs = append(errs, &huma.ErrorDetail{Location: "query.updated_since", Value: in.UpdatedSince,
				Message: "expected an ISO 8601 timestamp with offset"})
		}
		in.filter.UpdatedSince = t
	}
	switch in.HasScheme {
	case "1", "true":
		v := true
		in.filter.HasScheme = &v
	case "0", "false":
		v := false
		in.filter.HasScheme = &v
	}
	return errs
}

// parseDateOrTime reads a filter bound: an ISO 8601 timestamp with offset,
// or a plain date (UTC), taken as its start, or with endOfDay as the start
// of the next day (for "before the end of this date").
func parseDateOrTime(location, value string, endOfDay bool) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, value); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, value); err == nil {
		if endOfDay {
			return d.AddDate(0, 0, 1), nil
		}
		return d, nil
	}
	return time.Time{}, &huma.ErrorDetail{Location: location, Value: value,
		Message: "expected a date (YYYY-MM-DD) or an ISO 8601 timestamp with offset"}
}

type EventPath struct {
	ID int64 `path:"id" minimum:"1" doc:"Event id."`
}

type conditionalEventInput struct {
	EventPath
	IfNoneMatch    string `header:"If-None-Match" doc:"An ETag from an earlier response: 304 when unchanged."`
	AcceptEncoding string `header:"Accept-Encoding" doc:"gzip is served when accepted."`
}

// availabilityInput is a read of availability; a poll names what it holds
// by since to be answered with the changes alone.
type availabilityInput struct {
	EventPath
	IfNoneMatch    string `header:"If-None-Match" doc:"An ETag from an earlier response: 304 when unchanged."`
	AcceptEncoding string `header:"Accept-Encoding" doc:"gzip is served when accepted."`
	Since          string `query:"since" pattern:"^[0-9a-f]{32}$" doc:"The ETag (without its quotes) of the availability you hold: the answer then lists only the seats changed since it, with data.since set to it, when the service still has that state; otherwise (data.since absent) every seat, as without since. Apply the changed seats to what you hold, replace the categories, and keep the new ETag for the next poll."`
}

type sessionsInput struct {
	PageParams
	EventID int64 `query:"filter.event_id" minimum:"1"`
}

type pageInput struct{ PageParams }

func (s *Server) registerCatalog(api huma.API) {
	tags := []string{"Catalog"}
	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-events", Method: http.MethodGet, Path: "/events", Tags: tags,
		Summary: "List the company's events", Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *listEventsInput) (*listOutput[catalog.Event], error) {
		p := request.Caller(ctx)
		events, total, err := s.deps.Catalog.ListEventsFor(ctx, p.CompanyID, p.ChannelID, in.filter)
		return replyPage(ctx, events, in.PageParams, total, err, eventSeek)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-event", Method: http.MethodGet, Path: "/events/{id}", Tags: tags,
		Summary:     "Get one event",
		Description: "The event as the list shows it, whatever its status (draft, published, archived): its price_from is the lowest current price this key may sell.",
		Errors:      []int{http.StatusNotFound},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *EventPath) (*dataOutput[*catalog.Event], error) {
		p := request.Caller(ctx)
		ev, err := s.deps.Catalog.GetEventFor(ctx, p.CompanyID, p.ChannelID, in.ID)
		if err != nil {
			return nil, err
		}
		return ok(ctx, ev), nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-event-categories", Method: http.MethodGet, Path: "/events/{id}/categories", Tags: tags,
		Summary: "List an event's ticket categories with current prices and fee estimates", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *EventPath) (*dataOutput[[]catalog.Category], error) {
		cats, err := s.deps.Catalog.Categories(ctx, request.Caller(ctx).CompanyID, in.ID)
		if err != nil {
			return nil, err
		}
		if cats == nil {
			cats = []catalog.Category{}
		}
		return ok(ctx, cats), nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-sessions", Method: http.MethodGet, Path: "/sessions", Tags: tags,
		Summary: "List schedule slots (sessions); an order of a scheduled event names one as schedule_slot_id",
		Errors:  []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *sessionsInput) (*listOutput[catalog.Session], error) {
		items, total, err := s.deps.Catalog.Sessions(ctx, request.Caller(ctx).CompanyID, in.EventID, in.paging())
		return replyPage(ctx, items, in.PageParams, total, err, sessionSeek)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-venues", Method: http.MethodGet, Path: "/venues", Tags: tags,
		Summary: "List venues (cache for one day)", Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *pageInput) (*listOutput[catalog.VenueItem], error) {
		items, total, err := s.deps.Catalog.Venues(ctx, request.Caller(ctx).CompanyID, in.paging())
		if err != nil {
			return nil, err
		}
		out := page(ctx, items, in.PageParams, total, venueSeek)
		out.CacheControl = cacheOneDay
		return out, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-cities", Method: http.MethodGet, Path: "/cities", Tags: tags,
		Summary: "List cities (cache for one day)", Errors: []int{http.StatusUnprocessableEntity},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *pageInput) (*listOutput[catalog.City], error) {
		items, total, err := s.deps.Catalog.Cities(ctx, request.Caller(ctx).CompanyID, in.paging())
		if err != nil {
			return nil, err
		}
		out := page(ctx, items, in.PageParams, total, citySeek)
		out.CacheControl = cacheOneDay
		return out, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-event-allocation", Method: http.MethodGet, Path: "/events/{id}/allocation", Tags: tags,
		Summary:     "What this key may sell of an event, and when",
		Description: "The sales channel of this key's application, its sales window, what is allocated to the channel (sold, held, left, released) and what general sale has. Seats and tickets allocated to other channels are not for sale through this key: availability leaves them out and a hold of them answers 409 seat_not_for_sale.",
		Errors:      []int{http.StatusNotFound},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *EventPath) (*dataOutput[*distribution.Share], error) {
		share, err := s.deps.Distribution.ShareOf(ctx, request.Caller(ctx), in.ID, s.deps.Holds.Now())
		if err != nil {
			return nil, err
		}
		return ok(ctx, share), nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-event-scheme", Method: http.MethodGet, Path: "/events/{id}/scheme", Tags: tags,
		Summary:     "Get the hall geometry of an event (cache by ETag)",
		Description: "Everything a drawing of the hall needs: every seat with its id, label, rank and place (x, y), the stage, each zone's outline and label point, row label points and the drawing's bounds (a viewBox). Coordinates are in seat pitches (neighbouring seats of a laid-out row are 1 apart), x to the right with the stage at the top, y away from the stage; seats the catalog does not place are laid out by zones and rows. Large and rarely changing: send If-None-Match.",
		Errors:      []int{http.StatusNotFound},
		Responses:   s.schemeResponses(api),
	}, apikey.ScopeCatalogRead), s.getScheme)

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-event-availability", Method: http.MethodGet, Path: "/events/{id}/availability", Tags: tags,
		Summary:     "Get seat occupancy of an event (light, poll with If-None-Match)",
		Description: "Every seat on sale with its status (free, reserved, sold), category and current price; for general admission, what is left per category. A poll that sends the ETag it holds as If-None-Match gets a 304 while nothing changed; one that also sends it as since gets only the seats changed since, when the service still has that state (data.since set), so one changed seat of a large hall costs one seat, not the hall.",
		Errors:      []int{http.StatusNotFound},
		Responses:   s.availabilityResponses(api),
	}, apikey.ScopeCatalogRead), s.getAvailability)
}

func (s *Server) schemeResponses(api huma.API) map[string]*huma.Response {
	return jsonResponse[catalogfile.Geometry](api, "Hall geometry")
}

func (s *Server) availabilityResponses(api huma.API) map[string]*huma.Response {
	return jsonResponse[catalog.Availability](api, "Availability")
}

// getScheme answers the caller's event's hall geometry: for a key on
// /v1, for a seat map token's key on /seat-map/v1.
func (s *Server) getScheme(ctx context.Context, in *conditionalEventInput) (*rawOutput, error) {
	geometry, etag, err := s.deps.Catalog.Scheme(ctx, request.Caller(ctx).CompanyID, in.ID)
	if err != nil {
		return nil, err
	}
	return rawEnvelope(ctx, geometry, `"`+etag+`"`, in.IfNoneMatch, "private, no-cache"), nil
}

// getAvailability answers the event's availability as the caller's
// channel sees it: for a key on /v1, for a seat map token's key on
// /seat-map/v1.
func (s *Server) getAvailability(ctx context.Context, in *availabilityInput) (*partsOutput, error) {
	p := request.Caller(ctx)
	doc, err := s.deps.Catalog.AvailabilityFor(ctx, p.CompanyID, p.ChannelID, in.ID)
	if err != nil {
		return nil, err
	}
	out := &partsOutput{ETag: doc.ETag, CacheControl: "private, no-cache", ContentType: "application/json", Vary: "Accept-Encoding"}
	if etagMatches(in.IfNoneMatch, doc.ETag) {
		return out.serve(http.StatusNotModified), nil
	}
	if doc, err = s.deps.Catalog.ChangesSince(doc, p.ChannelID, in.ID, in.Since); err != nil {
		return nil, err
	}
	gzipped := acceptsGzip(in.AcceptEncoding)
	if gzipped {
		out.ContentEncoding = "gzip"
	}
	return out.serve(http.StatusOK, doc.Parts(request.ID(ctx), gzipped)...), nil
}

// principal is the authenticated caller; every /v1 operation has one.
func principal(ctx context.Context) *apikey.Principal {
	p := request.Principal(ctx)
	if p == nil {
		panic(fmt.Sprintf("no principal for request %s", request.ID(ctx)))
	}
	return p
}

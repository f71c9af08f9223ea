package api

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
)

type createReservationInput struct {
	Body struct {
		EventID       int64                `json:"event_id" minimum:"1"`
		Seats         []errs.SeatRef       `json:"seats,omitempty" minItems:"1" maxItems:"20" doc:"The seats to hold, at most 20; or best_available instead."`
		BestAvailable *holds.BestAvailable `json:"best_available,omitempty" doc:"Let the service pick the best free seats, instead of seats."`
		TTLMinutes    int                  `json:"ttl_minutes,omitempty" minimum:"1" maximum:"60" default:"15" doc:"Hold duration in minutes."`
	}
}

// ReservationPath is the {id} of a reservation (exported: Huma reads the
// fields of embedded structs only when they are exported).
type ReservationPath struct {
	ID string `path:"id" maxLength:"64" doc:"Reservation id."`
}

type replaceSeatsInput struct {
	ReservationPath
	Body struct {
		Seats []errs.SeatRef `json:"seats" minItems:"1" maxItems:"20" doc:"The full new list of seats; it replaces the composition."`
	}
}

type extendReservationInput struct {
	ReservationPath
	Body struct {
		TTLMinutes int `json:"ttl_minutes,omitempty" minimum:"1" maximum:"60" default:"15" doc:"The hold lasts this many minutes from now (never less than it already does)."`
	}
}

type reservationOutput struct {
	Location string `header:"Location"`
	Body     Envelope[*holds.Reservation]
}

func (s *Server) registerReservations(api huma.API) {
	tags := []string{"Reservations"}
	huma.Register(api, refusesFromMemory(idempotent(request.Scoped(huma.Operation{
		OperationID: "create-reservation", Method: http.MethodPost, Path: "/reservations", Tags: tags,
		Summary: "Hold seats", DefaultStatus: http.StatusCreated,
		Description: "Holds every listed seat or none. If any seat is taken: 409 `seat_taken` with `unavailable_seats`; " +
			"refresh availability and offer other seats. The hold expires at `expires_at`.\n\n" +
			"With `best_available` instead of `seats`, the service picks the best free seats (rows nearer the stage, " +
			"seats nearer the row's centre; a group `together` in one row, leaving no single seat alone where it can) " +
			"and holds them in the same way; 409 `sold_out` with `available` (free seats left in the filters) when none fit.",
		Errors: []int{http.StatusNotFound, http.StatusServiceUnavailable},
	}, apikey.ScopeOrdersWrite)), s.refuseKnownTaken, s.deps.Holds.RefusedFromMemory), func(ctx context.Context, in *createReservationInput) (*reservationOutput, error) {
		r, err := s.deps.Holds.Reserve(ctx, request.Caller(ctx), holds.ReserveInput{
			EventID: in.Body.EventID, Seats: in.Body.Seats, BestAvailable: in.Body.BestAvailable, TTLMinutes: in.Body.TTLMinutes,
			IdempotencyKey: request.IdempotencyKey(ctx)})
		if err != nil {
			return nil, err
		}
		return &reservationOutput{Location: "/v1/reservations/" + r.ID, Body: Envelope[*holds.Reservation]{Data: r, RequestID: request.ID(ctx)}}, nil
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-reservation", Method: http.MethodGet, Path: "/reservations/{id}", Tags: tags,
		Summary: "Get a reservation", Errors: []int{http.StatusNotFound},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *ReservationPath) (*dataOutput[*holds.Reservation], error) {
		r, err := s.deps.Holds.GetReservation(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, r, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "replace-reservation-seats", Method: http.MethodPatch, Path: "/reservations/{id}", Tags: tags,
		Summary:     "Replace a reservation's seats",
		Description: "The body's seat list replaces the composition as a whole: kept seats stay held at their price, dropped ones are freed, new ones held — or 409 and nothing changes. `expires_at` does not move.",
		Errors:      []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *replaceSeatsInput) (*dataOutput[*holds.Reservation], error) {
		r, err := s.deps.Holds.ReplaceSeats(ctx, request.Caller(ctx), in.ID, in.Body.Seats)
		return reply(ctx, r, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "extend-reservation", Method: http.MethodPost, Path: "/reservations/{id}/extend", Tags: tags,
		Summary: "Extend a reservation's hold",
		Description: "Sets `expires_at` to `ttl_minutes` (default 15) from now, the seats staying held until then; a hold is never shortened " +
			"(asking for less than is left changes nothing). A hold lasts at most 60 minutes from its `created_at`: beyond that, " +
			"409 `hold_limit_reached` with `latest_expires_at`, and nothing changes. Only a `reserved` hold can be extended: " +
			"an expired one answers 409 `reservation_expired`, an ordered or released one 409 `invalid_state`. " +
			"Repeating the request is harmless: it sets the deadline from the moment it runs.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *extendReservationInput) (*dataOutput[*holds.Reservation], error) {
		r, err := s.deps.Holds.Extend(ctx, request.Caller(ctx), in.ID, in.Body.TTLMinutes)
		return reply(ctx, r, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "release-reservation", Method: http.MethodDelete, Path: "/reservations/{id}", Tags: tags,
		Summary: "Release a reservation's seats", Description: "Status becomes `released`; releasing again returns the same result.",
		Errors: []int{http.StatusNotFound, http.StatusConflict},
	}, apikey.ScopeOrdersWrite), func(ctx context.Context, in *ReservationPath) (*dataOutput[*holds.Reservation], error) {
		r, err := s.deps.Holds.Release(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, r, err)
	})
}

// refuseKnownTaken refuses, from the instance's memory, a hold of listed
// seats all known to be taken or in a hold in flight (an on-sale rush's
// attempts at seats already gone or going); a hold it lets through counts
// as in flight until landed. It reads only a body of exactly the schema's
// fields, so a body the schema would refuse still gets its 422 from the
// ordinary path.
func (s *Server) refuseKnownTaken(ctx context.Context, idempotencyKey string, body []byte) (landed func(), refusal error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, nil
	}
	in := holds.ReserveInput{IdempotencyKey: idempotencyKey}
	for k, v := range top {
		var err error
		switch k {
		case "event_id":
			err = json.Unmarshal(v, &in.EventID)
		case "ttl_minutes":
			err = json.Unmarshal(v, &in.TTLMinutes)
		case "seats":
			var items []map[string]string
			if err = json.Unmarshal(v, &items); err == nil {
				for _, it := range items {
					if len(it) != 2 || it["zone_id"] == "" || it["seat_id"] == "" {
						return nil, nil
					}
					in.Seats = append(in.Seats, errs.SeatRef{ZoneID: it["zone_id"], SeatID: it["seat_id"]})
				}
			}
		default:
			return nil, nil
		}
		if err != nil {
			return nil, nil
		}
	}
	if _, given := top["ttl_minutes"]; given && in.TTLMinutes == 0 {
		return nil, nil
	}
	return s.deps.Holds.RefuseKnownTaken(ctx, request.Caller(ctx), in)
}

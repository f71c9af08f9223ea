package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/seatmap"
)

// SeatMapPrefix is where a buyer's browser reads an event's scheme and
// availability with a seat map token instead of an API key.
const SeatMapPrefix = "/seat-map/v1"

// seatMapScheme is the security scheme of the seat map routes.
const seatMapScheme = "seatMapToken"

// SeatMapToken is what a partner's server puts in its shop page.
type SeatMapToken struct {
	Token     string    `json:"token" doc:"The seat map token (smt_…): send it as Authorization: Bearer <token> to /seat-map/v1. A credential for this event's scheme and availability only."`
	EventID   int64     `json:"event_id"`
	ExpiresAt time.Time `json:"expires_at" doc:"After this the token answers 401 seat_map_token_expired: make a new one."`
}

type seatMapTokenInput struct {
	EventPath
	Body *seatMapTokenBody // none: the default life
}

type seatMapTokenBody struct {
	TTLMinutes int `json:"ttl_minutes,omitempty" minimum:"1" maximum:"240" default:"60" doc:"How long the token works, in minutes."`
}

type seatMapTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         Envelope[SeatMapToken]
}

func (s *Server) registerSeatMapTokens(api huma.API) {
	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "create-seat-map-token", Method: http.MethodPost, Path: "/events/{id}/seat-map-tokens", Tags: []string{"Seat map"},
		Summary: "Make a seat map token for a buyer's browser", DefaultStatus: http.StatusCreated,
		Description: "A short-lived token with which a page in the buyer's browser (the seat map component) reads this event's " +
			"scheme and availability at `/seat-map/v1/events/{id}/…`, as this key sees them, without the key. Make one per page " +
			"view (or cache it for less than its life) on your server and put it in the page; never put the key there. " +
			"It opens no other event and nothing else; it stops working at `expires_at`, or within `AUTH_CACHE_TTL` of " +
			"this key's revocation. Nothing is stored: no Idempotency-Key is needed.",
		Errors: []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikey.ScopeCatalogRead), func(ctx context.Context, in *seatMapTokenInput) (*seatMapTokenOutput, error) {
		p := request.Caller(ctx)
		if err := s.deps.Catalog.CheckEvent(ctx, p.CompanyID, in.ID); err != nil {
			return nil, err
		}
		ttl := seatmap.DefaultTTL
		if in.Body != nil && in.Body.TTLMinutes > 0 {
			ttl = time.Duration(in.Body.TTLMinutes) * time.Minute
		}
		c := seatmap.Claims{CompanyID: p.CompanyID, KeyID: p.KeyID, EventID: in.ID, Sandbox: p.IsTest(),
			ExpiresAt: s.now().Add(ttl).Truncate(time.Second).UTC()}
		tok := s.seatMapSigner().Make(c)
		return &seatMapTokenOutput{CacheControl: "no-store",
			Body: Envelope[SeatMapToken]{Data: SeatMapToken{Token: tok, EventID: in.ID, ExpiresAt: c.ExpiresAt}, RequestID: request.ID(ctx)}}, nil
	})
}

// registerSeatMap registers the public reads: the same operations as
// /v1's scheme and availability (one handler each), behind a seat map
// token instead of a key.
func (s *Server) registerSeatMap(api huma.API) {
	tags := []string{"Seat map"}
	huma.Register(api, seatMapScoped(huma.Operation{
		OperationID: "get-seat-map-scheme", Method: http.MethodGet, Path: "/events/{id}/scheme", Tags: tags,
		Summary:     "Get the hall geometry of the token's event (for the buyer's browser)",
		Description: "As `GET /v1/events/{id}/scheme` answers the key that made the token: the same body, ETag (304 on If-None-Match) and gzip.",
		Errors:      []int{http.StatusNotFound},
		Responses:   s.schemeResponses(api),
	}), s.getScheme)
	huma.Register(api, seatMapScoped(huma.Operation{
		OperationID: "get-seat-map-availability", Method: http.MethodGet, Path: "/events/{id}/availability", Tags: tags,
		Summary:     "Get seat occupancy of the token's event (for the buyer's browser; poll with If-None-Match)",
		Description: "As `GET /v1/events/{id}/availability` answers the key that made the token (its sales channel's view, its environment): the same body, ETag (304 on If-None-Match), changes alone with since, and gzip.",
		Errors:      []int{http.StatusNotFound},
		Responses:   s.availabilityResponses(api),
	}), s.getAvailability)
}

// seatMapScoped declares the seat map token's security on an operation.
func seatMapScoped(op huma.Operation) huma.Operation {
	op.Security = []map[string][]string{{seatMapScheme: {}}}
	if op.Description != "" {
		op.Description += "\n\n"
	}
	op.Description += "Requires a seat map token of this event (`POST /v1/events/{id}/seat-map-tokens`), not an API key. " +
		"Answers carry CORS headers for any origin."
	op.Errors = append(op.Errors, http.StatusUnauthorized, http.StatusForbidden)
	return op
}

func (s *Server) now() time.Time {
	if s.deps.Holds != nil {
		return s.deps.Holds.Now()
	}
	return time.Now()
}

func (s *Server) seatMapSigner() *seatmap.Signer {
	if s.deps.SeatMapTokens == nil {
		panic("api: no seat map token signer (Deps.SeatMapTokens)")
	}
	return s.deps.SeatMapTokens
}

// seatMapWWWAuth is the challenge of a refused seat map token.
const seatMapWWWAuth = `Bearer realm="ticketsales-seat-map", error="invalid_token"`

// authenticateSeatMap admits a request with a valid seat map token of the
// path's event: 401 seat_map_token_invalid (none, malformed, forged, of a
// secret no longer configured, its key revoked — an API key too: keys are
// not accepted here), 401 seat_map_token_expired, 403
// seat_map_token_elsewhere (another event's). Checking a token is a MAC,
// so a valid one costs no budget check; an invalid one counts against the
// client's failed-authentication budget, as a bad key does. The key behind
// the token is read through the authenticator's cache, so its current
// channel and environment decide what availability shows.
func (s *Server) authenticateSeatMap(ctx huma.Context, next func(huma.Context)) {
	rctx := ctx.Context()
	token, sent := bearer(ctx)
	refuse := func(detail string) {
		client := s.clientAddr(ctx)
		if s.deps.AuthFailures != nil {
			if wait, blocked := s.deps.AuthFailures.Blocked(rctx, client); blocked {
				s.writeErr(ctx, newProblem(rctx, http.StatusTooManyRequests, "rate_limited",
					"Too many failed authentications from this address; retry after the number of seconds in Retry-After.").
					withHeader("Retry-After", strconv.Itoa(max(int(math.Ceil(wait.Seconds())), 1))))
				return
			}
		}
		s.authFailed(rctx, client)
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "seat_map_token_invalid", detail).withHeader("WWW-Authenticate", seatMapWWWAuth))
	}
	switch {
	case !sent || token == "":
		refuse("Send a seat map token as `Authorization: Bearer smt_…` (POST /v1/events/{id}/seat-map-tokens makes one).")
		return
	case strings.HasPrefix(token, "tk_"):
		refuse("API keys are not accepted here: send a seat map token (smt_…), which your server makes with POST /v1/events/{id}/seat-map-tokens.")
		return
	}
	c, err := s.seatMapSigner().Open(token, s.now())
	switch {
	case errors.Is(err, seatmap.ErrExpired):
		s.writeErr(ctx, newProblem(rctx, http.StatusUnauthorized, "seat_map_token_expired",
			"The seat map token expired at "+c.ExpiresAt.Format(time.RFC3339)+": ask the shop's server for a new one.").
			withHeader("WWW-Authenticate", `Bearer realm="ticketsales-seat-map", error="invalid_token", error_description="expired"`))
		return
	case err != nil:
		refuse("The seat map token is not valid: not one this service made, altered, or made with a secret it no longer holds.")
		return
	}
	p, err := s.deps.Auth.ByID(rctx, c.KeyID)
	switch {
	case errors.Is(err, apikey.ErrInvalidKey) || err == nil && (p.CompanyID != c.CompanyID || p.IsTest() != c.Sandbox):
		refuse("The API key that made this seat map token was revoked.")
		return
	case err != nil:
		s.writeErr(ctx, fromError(rctx, s.log, err))
		return
	case p.IsTest() && !s.deps.SandboxEnabled:
		refuse("This deployment serves no sandbox.")
		return
	case !p.Has(apikey.ScopeCatalogRead):
		refuse("The API key that made this seat map token no longer has the scope catalog:read.")
		return
	}
	if id, err := strconv.ParseInt(ctx.Param("id"), 10, 64); err == nil && id != c.EventID {
		s.writeErr(ctx, newProblem(rctx, http.StatusForbidden, "seat_map_token_elsewhere",
			"This seat map token is for event "+strconv.FormatInt(c.EventID, 10)+" only."))
		return
	}
	if !s.seatMapRateLimit(ctx, token) {
		return
	}
	if ri := request.From(rctx); ri != nil {
		ri.Principal = p
	}
	next(ctx)
}

// seatMapRateLimit applies SeatMapLimit per client address and token: each
// buyer's page polls with its own token, and a token a shop shares among
// its buyers is still limited per buyer's address, not used up by all of
// them. A limiter failure lets the request through, as for keys.
func (s *Server) seatMapRateLimit(ctx huma.Context, token string) bool {
	if s.deps.Limiter == nil || s.deps.SeatMapLimit.Rate <= 0 {
		return true
	}
	sum := sha256.Sum256([]byte(token))
	return s.takeToken(ctx, "seatmap:"+s.clientAddr(ctx)+":"+hex.EncodeToString(sum[:8]), s.deps.SeatMapLimit,
		"Too many seat map requests from this address with this token")
}

// seatMapCORSMaxAge is how long a browser may keep a preflight's answer
// (Chromium keeps at most 2 hours, Firefox a day).
const seatMapCORSMaxAge = "7200"

// withSeatMapCORS lets any origin's page read /seat-map/v1: the token is
// a bearer header, no cookie or other ambient credential is involved, so
// "*" grants nothing a page could not do with the token anyway. A
// preflight (OPTIONS) is answered here, before routing; answers expose
// the headers a poller reads. /v1 gets no CORS headers: a partner's key
// belongs on its server, never in a page.
func withSeatMapCORS(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, SeatMapPrefix+"/") {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET")
			h.Set("Access-Control-Allow-Headers", "Authorization, If-None-Match")
			h.Set("Access-Control-Max-Age", seatMapCORSMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", "ETag, RateLimit, RateLimit-Policy, Retry-After, X-Request-Id")
		next.ServeHTTP(w, r)
	})
}

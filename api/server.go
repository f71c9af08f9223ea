// Package api is the HTTP interface: Huma operations for /v1 (the
// aggregator adapter's are in api/aggregator), the error model,
// authentication, rate limits, idempotency and request middleware, the
// buyer's order page and the gateways' callbacks. Handlers translate HTTP
// to the service packages and back; business rules live in those packages.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/klauspost/compress/gzhttp"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/api/aggregator"
	"github.com/ticketsales/ticketsales/api/reference"
	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/api/seatmapjs"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/internal/seatmap"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// Deps are what the API serves from.
type Deps struct {
	DB *bun.DB
	// Bookkeeping is the pool for records that need no WAL flush of their
	// own (store.OpenBookkeeping): idempotency claims (nil: DB).
	Bookkeeping *bun.DB
	Temporal    client.Client // may be a lazy client; used for readiness here
	Auth        *apikey.Authenticator
	Catalog     *catalog.Service
	Holds       *holds.Service
	Orders      *orders.Service
	Refunds     *refunds.Service
	// Distribution answers what a key may sell (GET /v1/events/{id}/allocation).
	Distribution *distribution.Service
	Webhooks     *webhooks.Service
	CheckIn      *checkin.Service
	Offline      *checkin.Offline
	RequestLog   *requestlog.Writer // nil: no request log
	// Gateway is the built-in test gateway whose pages the api serves (nil:
	// not mounted: sandbox disabled outside development). HostedGateway says
	// a hosted provider takes production payments. GatewaySecret verifies
	// their callbacks (the test gateway's through TestCallbackKey).
	Gateway       *payment.TestGateway
	HostedGateway bool
	GatewaySecret []byte
	// PublicBaseURL is where partners reach this API: the document's server.
	PublicBaseURL string
	// SandboxEnabled serves sandbox keys; without it they are refused.
	SandboxEnabled bool
	// Limiter limits requests per API key (nil: no limit); DefaultLimit
	// applies to keys without their own.
	Limiter      ratelimit.Limiter
	DefaultLimit ratelimit.Limit
	// AuthFailures limits failed authentications per client (nil: no
	// limit): an IPv4 address or an IPv6 /64, of the TCP peer or, with
	// ClientIPHeader set, of the address a trusted proxy put in that
	// header. In memory, or in Redis shared by every instance.
	AuthFailures   ratelimit.Budget
	ClientIPHeader string
	// SeatMapTokens makes and checks seat map tokens (nil: none made or
	// accepted, as when only the document is built). SeatMapLimit is the
	// budget of /seat-map/v1 per client address and token (Rate 0: none).
	SeatMapTokens *seatmap.Signer
	SeatMapLimit  ratelimit.Limit
	// Cabinet serves the organizer's cabinet under /cabinet (nil: not
	// mounted, as when only the document is built).
	Cabinet http.Handler
	// Metrics records the HTTP metrics (nil: none). The api serves it on a
	// listener of its own (Process.Run, METRICS_ADDR), never on this handler.
	Metrics *metrics.Registry
	Log     *slog.Logger
}

func (d Deps) bookkeeping() *bun.DB {
	if d.Bookkeeping != nil {
		return d.Bookkeeping
	}
	return d.DB
}

// Timeouts of the HTTP server (NewHTTPServer). Request bodies have their
// own, shorter deadlines (bodyReadTimeout; the cabinet's): ReadTimeout is
// the backstop for a request no handler reads, and each handler clears it
// once the body is in memory, so a long confirm is not cut off by it.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second
	// idleTimeout closes a keep-alive connection that sends nothing more.
	idleTimeout = 120 * time.Second
)

// Version is the API's release, the OpenAPI document's info.version: it
// moves with the SDKs' versions, one number per release (docs/releasing.md;
// scripts/release.sh checks they agree).
const Version = "1.1.0"

// NewHTTPServer is the api's public HTTP server serving h: headers, bodies
// and idle connections each bounded in time, so a client that opens
// connections and sends nothing (or a few bytes of a promised body) costs
// itself the wait, not the service a connection held for good. There is no
// WriteTimeout: a confirm or a refund may wait on its workflow.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
}

// Server is the HTTP handler with the Huma API behind it.
type Server struct {
	deps Deps
	log  *slog.Logger
	// usedKeys asks, for many requests refused from memory at once,
	// whether their idempotency keys were seen before.
	usedKeys *store.UsedKeys
	API      huma.API
	http     http.Handler
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// New registers every operation and wraps them in the request middleware.
func New(deps Deps) *Server {
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	installErrorModel(deps.Log)
	// Arrays are never null in requests or answers (an empty list is []):
	// the document says so, and generated clients need no null checks.
	huma.DefaultArrayNullable = false
	// Member names are case-sensitive: a member that differs from a
	// declared one only in case is unknown, so refused (422). Matching it
	// case-insensitively validated one member while Go's decoding used
	// another (strictBody refuses the twins themselves).
	huma.ValidateStrictCasing = true
	mux := http.NewServeMux()
	cfg := huma.DefaultConfig("Ticket Sales API", Version)
	cfg.Components.Schemas = huma.NewMapRegistry("#/components/schemas/", schemaName)
	registerVocabulary(cfg.Components.Schemas)
	cfg.Info.Description = "Catalog, seat maps, availability, reservations, orders, payment, tickets and refunds " +
		"for partners selling an organizer's events. Authenticate with `Authorization: Bearer <API key>`."
	cfg.Info.Contact = &huma.Contact{Name: "Ticket sales service support", Email: "support@ticketsales.example"}
	// The API is the service's, used under each partner's agreement; SPDX
	// has no identifier for that, so a LicenseRef names it.
	cfg.Info.License = &huma.License{Name: "Proprietary: used under the partner agreement", Identifier: "LicenseRef-Partner-Agreement"}
	cfg.Servers = []*huma.Server{{URL: "/", Description: "This deployment"}}
	cfg.Tags = []*huma.Tag{
		{Name: "Catalog", Description: "Events, categories, sessions, venues, cities, hall schemes and availability."},
		{Name: "Reservations", Description: "Seat holds with a deadline."},
		{Name: "Orders", Description: "Orders, payment, tickets, cancellation and refunds."},
		{Name: "Webhooks", Description: "Signed, retried event deliveries to the partner's endpoints (Standard Webhooks)."},
		{Name: "Seat map", Description: "A buyer's browser reads one event's scheme and availability with a short-lived seat map token, never the key."},
		{Name: "Check-in", Description: "Tickets scanned at the door with door keys (scope checkin)."},
		{Name: "Aggregator adapter", Description: "The same sales in an external aggregator's contract."},
		{Name: "Health", Description: "Liveness and readiness."},
		{Name: "Gateway", Description: "The built-in test payment gateway's callback."},
	}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "API key issued by the organizer (tk_sandbox_… or tk_production_…)."},
		seatMapScheme: {Type: "http", Scheme: "bearer", BearerFormat: "smt_…",
			Description: "Seat map token (smt_…) made by POST /v1/events/{id}/seat-map-tokens: reads that event's scheme and availability at /seat-map/v1, from any origin."},
	}
	// Responses are wrapped in an envelope, so the $schema link Huma adds
	// to bodies would be misleading.
	cfg.CreateHooks = nil
	// /docs is served from the binary's own copy of its assets (reference).
	cfg.DocsPath = ""
	s := &Server{deps: deps, log: deps.Log, usedKeys: store.NewUsedKeys(deps.bookkeeping())}
	s.API = humago.New(mux, cfg)

	s.registerHealth(s.API)
	v1 := huma.NewGroup(s.API, "/v1")
	v1.UseMiddleware(s.authenticate, s.withIdempotency)
	s.registerCatalog(v1)
	s.registerSeatMapTokens(v1)
	s.registerReservations(v1)
	s.registerOrders(v1)
	s.registerRefunds(v1)
	s.registerWebhooks(v1)
	s.registerCheckIns(v1)
	s.registerOfflineCheckIns(v1)
	agg := huma.NewGroup(s.API, "/aggregator/v1")
	agg.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		// The adapter's errors name seats in its own terms (fromError).
		if ri := request.From(ctx.Context()); ri != nil {
			ri.Adapter = true
		}
		next(ctx)
	}, s.authenticate)
	aggregator.Register(agg, deps.Holds, deps.Orders, deps.Catalog, deps.Distribution)
	seatMap := huma.NewGroup(s.API, SeatMapPrefix)
	seatMap.UseMiddleware(s.authenticateSeatMap)
	s.registerSeatMap(seatMap)
	s.registerGatewayCallbacks(s.API)
	s.registerOrderPage(mux)
	if deps.Cabinet != nil {
		// HTML pages outside the OpenAPI document: they are for people.
		mux.Handle("/cabinet/", deps.Cabinet)
	}
	reference.Register(mux, cfg.Info.Title+" Reference", "/openapi.yaml")
	reference.RegisterProblems(mux, ProblemTypesPath, cfg.Info.Title+": problem types", referenceProblemTypes())
	// The seat map component partners' pages load (docs/seat-map.md).
	seatmapjs.Register(mux)
	if deps.Gateway != nil {
		mux.Handle("/pay/", deps.Gateway.Handler())
	}

	polishDocument(s.API.OpenAPI(), deps.PublicBaseURL)

	s.http = withRequest(gzipUnlessEncoded(withSeatMapCORS(withRoutingProblems(mux))), deps.Log, deps.RequestLog, deps.Metrics)
	return s
}

// gzipUnlessEncoded compresses responses for clients that accept gzip,
// except availability, which serves its own pre-compressed bytes: the
// wrapper would only pass them through, at a cost on the hottest route.
func gzipUnlessEncoded(next http.Handler) http.Handler {
	gz := gzhttp.GzipHandler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (strings.HasPrefix(r.URL.Path, "/v1/events/") || strings.HasPrefix(r.URL.Path, SeatMapPrefix+"/events/")) &&
			strings.HasSuffix(r.URL.Path, "/availability") {
			next.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}

type healthOutput struct {
	Body struct {
		Status string `json:"status" example:"ok" enum:"ok"`
	}
}

func (s *Server) registerHealth(api huma.API) {
	huma.Register(api, huma.Operation{
		OperationID: "get-health", Method: http.MethodGet, Path: "/healthz", Tags: []string{"Health"}, Security: []map[string][]string{},
		Summary: "Liveness: the process answers", Description: "Always 200 while the process serves HTTP; no dependency is checked.",
	}, func(ctx context.Context, _ *struct{}) (*healthOutput, error) {
		out := &healthOutput{}
		out.Body.Status = "ok"
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "get-readiness", Method: http.MethodGet, Path: "/readyz", Tags: []string{"Health"}, Security: []map[string][]string{},
		Summary: "Readiness: Postgres is reachable", Errors: []int{http.StatusServiceUnavailable},
		Description: "200 when Postgres answers within 3 s, with the state of each dependency. The catalog and holds " +
			"need only Postgres, so an unreachable Temporal (`temporal`: `unreachable`) does not take the instance " +
			"out of service; /readyz/temporal reports it on its own. Postgres unreachable: 503 unavailable with Retry-After.",
	}, func(ctx context.Context, _ *struct{}) (*readinessOutput, error) {
		ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
		defer cancel()
		// Both at once: a Temporal that does not answer must not add its
		// wait to Postgres's.
		temporal := make(chan string, 1)
		go func() { temporal <- s.temporalState(ctx) }()
		if err := s.deps.DB.PingContext(ctx); err != nil {
			s.log.WarnContext(ctx, "readiness: postgres unreachable", "err", err)
			return nil, newProblem(ctx, http.StatusServiceUnavailable, "unavailable", "Postgres is unreachable.").withHeader("Retry-After", "5")
		}
		out := &readinessOutput{}
		out.Body.Status, out.Body.Postgres, out.Body.Temporal = "ready", "ok", <-temporal
		return out, nil
	})
	huma.Register(api, huma.Operation{
		OperationID: "get-readiness-temporal", Method: http.MethodGet, Path: "/readyz/temporal", Tags: []string{"Health"}, Security: []map[string][]string{},
		Summary: "Readiness of Temporal: orders, payment and refunds can run", Errors: []int{http.StatusServiceUnavailable},
		Description: "200 when the Temporal frontend answers within 3 s; otherwise 503 unavailable with Retry-After.",
	}, func(ctx context.Context, _ *struct{}) (*temporalReadinessOutput, error) {
		ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
		defer cancel()
		switch state := s.temporalState(ctx); state {
		case temporalOK:
			out := &temporalReadinessOutput{}
			out.Body.Status, out.Body.Temporal = "ready", state
			return out, nil
		case temporalNotConfigured:
			return nil, newProblem(ctx, http.StatusServiceUnavailable, "unavailable", "Temporal is not configured.")
		default:
			return nil, newProblem(ctx, http.StatusServiceUnavailable, "unavailable", "Temporal is unreachable.").withHeader("Retry-After", "5")
		}
	})
}

// readinessTimeout bounds each readiness check.
const readinessTimeout = 3 * time.Second

// States of Temporal in readiness answers.
const (
	temporalOK            = "ok"
	temporalUnreachable   = "unreachable"
	temporalNotConfigured = "not_configured"
)

type readinessOutput struct {
	Body struct {
		Status   string `json:"status" example:"ready" enum:"ready"`
		Postgres string `json:"postgres" example:"ok" enum:"ok"`
		Temporal string `json:"temporal" example:"ok" enum:"ok,unreachable,not_configured" doc:"Orders, confirm and refunds need Temporal; the catalog and holds do not."`
	}
}

type temporalReadinessOutput struct {
	Body struct {
		Status   string `json:"status" example:"ready" enum:"ready"`
		Temporal string `json:"temporal" example:"ok" enum:"ok"`
	}
}

// temporalState asks the Temporal frontend for its health.
func (s *Server) temporalState(ctx context.Context) string {
	if s.deps.Temporal == nil {
		return temporalNotConfigured
	}
	if _, err := s.deps.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		s.log.WarnContext(ctx, "readiness: temporal unreachable", "err", err)
		return temporalUnreachable
	}
	return temporalOK
}

package webhooks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// SecretOverlap is how long a rotated secret keeps signing beside the new one.
const SecretOverlap = 24 * time.Hour

// Service is the partner's side of webhooks: endpoints, deliveries,
// redelivery and test pings.
type Service struct {
	DB       *bun.DB
	Temporal client.Client
	// TaskQueue is the deliveries' own (redeliveries start there).
	TaskQueue string
	Retry     contract.WebhookRetry
	// Rules say which addresses endpoints may name.
	Rules Rules
	// Limits cap each company's environment; Limiter counts its test
	// pings and redeliveries (the api's: in Redis when several instances
	// share one budget, else in memory); nil counts nothing.
	Limits  Limits
	Limiter ratelimit.Limiter
	Log     *slog.Logger
}

// Limits are the caps on a company's environment: endpoints, and test
// pings and redeliveries per minute (0: no cap on those).
type Limits struct {
	Endpoints                             int
	TestsPerMinute, RedeliveriesPerMinute int
}

// DefaultMaxEndpoints applies when Limits.Endpoints is not set.
const DefaultMaxEndpoints = 10

// allow takes one of the environment's test pings or redeliveries of the
// minute (a bucket of perMinute refilling over a minute). An unreachable
// limiter lets it pass: the cap protects the service and must not take
// webhooks down with Redis.
func (s *Service) allow(ctx context.Context, p *apikey.Principal, what, kind string, perMinute int) error {
	if s.Limiter == nil || perMinute <= 0 {
		return nil
	}
	env := "production"
	if p.IsTest() {
		env = "sandbox"
	}
	key := fmt.Sprintf("webhook-%s:%d:%s", kind, p.CompanyID, env)
	res, err := s.Limiter.Allow(ctx, key, ratelimit.Limit{Rate: float64(perMinute) / 60, Burst: perMinute})
	if err != nil {
		if s.Log != nil {
			s.Log.WarnContext(ctx, "webhook cap not checked", "key", key, "err", err)
		}
		return nil
	}
	if !res.Allowed {
		return &errs.RateError{What: what, PerMinute: perMinute, RetryAfter: res.RetryAfter}
	}
	return nil
}

// Endpoint is an endpoint as partners see it.
type Endpoint struct {
	ID          int64    `json:"id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	EventTypes  []string `json:"event_types" doc:"The event types sent; empty: all of them."`
	Enabled     bool     `json:"enabled"`
	IsTest      bool     `json:"is_test" doc:"A sandbox endpoint: it receives sandbox events only."`
	Secret      string   `json:"secret,omitempty" doc:"The signing secret (whsec_…): shown only when the endpoint is created and when the secret is rotated."`
	// SecretRotatedUntil is when a rotated secret stops signing.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty" doc:"Until then the previous secret signs beside the current one."`
	FailingSince            *time.Time `json:"failing_since,omitempty" doc:"Every delivery has failed since then."`
	DisabledAt              *time.Time `json:"disabled_at,omitempty"`
	DisabledReason          string     `json:"disabled_reason,omitempty" doc:"Why the endpoint was disabled (by the API, or after failing every delivery for three days)."`
	CreatedAt               time.Time  `json:"created_at"`
	UpdatedAt               time.Time  `json:"updated_at"`
}

func endpointView(e *store.WebhookEndpoint, withSecret bool) *Endpoint {
	out := &Endpoint{ID: e.ID, URL: e.URL, Description: e.Description, EventTypes: e.EventTypes, Enabled: e.Enabled, IsTest: e.IsTest,
		FailingSince: e.FailingSince, DisabledAt: e.DisabledAt, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if out.EventTypes == nil {
		out.EventTypes = []string{}
	}
	if e.DisabledReason != nil && !e.Enabled {
		out.DisabledReason = *e.DisabledReason
	}
	if e.PreviousSecretExpiresAt != nil && time.Now().Before(*e.PreviousSecretExpiresAt) {
		out.PreviousSecretExpiresAt = e.PreviousSecretExpiresAt
	}
	if withSecret {
		out.Secret = e.Secret
	}
	return out
}

// EndpointInput creates an endpoint, or changes one (nil: unchanged).
type EndpointInput struct {
	URL         *string
	Description *string
	EventTypes  *[]states.WebhookEventType
	Enabled     *bool
	// DisabledReason says who disabled the endpoint ("": the API did).
	DisabledReason string
	// CreationToken is the cabinet form's one-time token: a second
	// creation with it makes nothing (CreatedBefore).
	CreationToken string
}

// CreatedBefore: the creation's token made endpoint ID already (a form
// sent twice).
type CreatedBefore struct{ ID int64 }

func (c *CreatedBefore) Error() string {
	return fmt.Sprintf("webhook endpoint %d made with this form already", c.ID)
}

// The bounds of an endpoint, as the API's schema states them.
const (
	MaxURLLength         = 2000
	MaxDescriptionLength = 500
	MaxEventTypes        = 20
)

// validate checks the input, every problem at once; the URL's address
// check resolves its host.
func (s *Service) validate(ctx context.Context, p *apikey.Principal, in EndpointInput) error {
	verr := &errs.ValidationError{}
	if in.URL != nil && utf8.RuneCountInString(*in.URL) > MaxURLLength {
		verr.Text("body.url", *in.URL, 1, MaxURLLength)
		return verr // not resolved: it may hold any host
	}
	if in.Description != nil {
		verr.Text("body.description", *in.Description, 0, MaxDescriptionLength)
	}
	if in.EventTypes != nil && len(*in.EventTypes) > MaxEventTypes {
		verr.Add("body.event_types", fmt.Sprintf("at most %d", MaxEventTypes), len(*in.EventTypes))
	}
	if in.URL != nil {
		if err := s.Rules.For(p.IsTest()).CheckURL(ctx, *in.URL); err != nil {
			verr.Fields = append(verr.Fields, errs.FieldError{Location: "body.url", Message: err.Error(), Value: *in.URL})
		}
	}
	if in.EventTypes != nil {
		for i, t := range *in.EventTypes {
			if !slices.Contains(states.WebhookEventTypes, t) {
				verr.Fields = append(verr.Fields, errs.FieldError{Location: fmt.Sprintf("body.event_types[%d]", i),
					Message: "unknown event type", Value: t})
			}
		}
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	return nil
}

// Create makes an endpoint of the caller's application with a new secret,
// returned this once.
func (s *Service) Create(ctx context.Context, p *apikey.Principal, in EndpointInput) (*Endpoint, error) {
	if err := s.validate(ctx, p, in); err != nil {
		return nil, err
	}
	e := &store.WebhookEndpoint{ApplicationID: p.ApplicationID, CompanyID: p.CompanyID, IsTest: p.IsTest(), URL: *in.URL,
		Enabled: true, Secret: NewSecret()}
	if in.Description != nil {
		e.Description = *in.Description
	}
	if in.EventTypes != nil {
		e.EventTypes = dedupe(*in.EventTypes)
	}
	if in.Enabled != nil {
		e.Enabled = *in.Enabled
	}
	if in.CreationToken != "" {
		e.CreationToken = &in.CreationToken
	}
	most := cmp.Or(s.Limits.Endpoints, DefaultMaxEndpoints)
	if err := store.CreateWebhookEndpoint(ctx, s.DB, e, most); errors.Is(err, store.ErrEndpointLimit) {
		return nil, &errs.LimitError{Max: most}
	} else if errors.Is(err, store.ErrCreationTokenUsed) {
		return nil, &CreatedBefore{ID: e.ID}
	} else if err != nil {
		return nil, err
	}
	return endpointView(e, true), nil
}

// dedupe lists each type once, as the store keeps them.
func dedupe(types []states.WebhookEventType) []string {
	out := []string{}
	for _, t := range types {
		if !slices.Contains(out, string(t)) {
			out = append(out, string(t))
		}
	}
	return out
}

// Get returns an endpoint of the caller's application.
func (s *Service) Get(ctx context.Context, p *apikey.Principal, id int64) (*Endpoint, error) {
	e, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	return endpointView(e, false), nil
}

// List returns a page of the caller's endpoints.
func (s *Service) List(ctx context.Context, p *apikey.Principal, page store.Paging) ([]*Endpoint, int, error) {
	rows, n, err := store.ListWebhookEndpoints(ctx, s.DB, p.CompanyID, p.IsTest(), page)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Endpoint, len(rows))
	for i := range rows {
		out[i] = endpointView(&rows[i], false)
	}
	return out, n, nil
}

// Update changes an endpoint; the URL is checked as at creation.
func (s *Service) Update(ctx context.Context, p *apikey.Principal, id int64, in EndpointInput) (*Endpoint, error) {
	e, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	if err := s.validate(ctx, p, in); err != nil {
		return nil, err
	}
	c := store.WebhookEndpointChange{URL: in.URL, Description: in.Description, Enabled: in.Enabled, DisabledReason: in.DisabledReason}
	if in.EventTypes != nil {
		types := dedupe(*in.EventTypes)
		c.EventTypes = &types
	}
	if err := store.UpdateWebhookEndpoint(ctx, s.DB, e, c); err != nil {
		return nil, err
	}
	return endpointView(e, false), nil
}

// Delete deletes an endpoint.
func (s *Service) Delete(ctx context.Context, p *apikey.Principal, id int64) error {
	return store.DeleteWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), id)
}

// RotateSecret gives an endpoint a new secret, returned this once; the old
// one signs beside it for SecretOverlap.
func (s *Service) RotateSecret(ctx context.Context, p *apikey.Principal, id int64) (*Endpoint, error) {
	return s.rotateSecret(ctx, p, id, false)
}

// ErrSecretOverlap: the previous secret still signs beside the current
// one (until the endpoint's PreviousSecretExpiresAt).
var ErrSecretOverlap = store.ErrSecretOverlap

// RotateSecretAfterOverlap rotates as RotateSecret does, but only once the
// previous secret's overlap is over (else ErrSecretOverlap): the cabinet's
// rotation, which a double click must not run twice.
func (s *Service) RotateSecretAfterOverlap(ctx context.Context, p *apikey.Principal, id int64) (*Endpoint, error) {
	return s.rotateSecret(ctx, p, id, true)
}

func (s *Service) rotateSecret(ctx context.Context, p *apikey.Principal, id int64, afterOverlap bool) (*Endpoint, error) {
	e, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), id)
	if err != nil {
		return nil, err
	}
	if err := store.RotateWebhookSecret(ctx, s.DB, e, NewSecret(), SecretOverlap, afterOverlap); err != nil {
		return nil, err
	}
	return endpointView(e, true), nil
}

// Attempt is one POST of a delivery.
type Attempt struct {
	Attempt         int       `json:"attempt"`
	AttemptedAt     time.Time `json:"attempted_at"`
	DurationMS      int       `json:"duration_ms"`
	StatusCode      *int      `json:"status_code,omitempty" doc:"The endpoint's HTTP status; absent when it did not answer."`
	Error           string    `json:"error,omitempty" doc:"Why there was no answer (timeout, refused connection, forbidden address)."`
	ResponseExcerpt string    `json:"response_excerpt" doc:"The first 512 bytes of the answer."`
}

// Delivery is an event's delivery to an endpoint.
type Delivery struct {
	EventID        string                `json:"event_id"`
	EventType      string                `json:"event_type"`
	EndpointID     int64                 `json:"endpoint_id"`
	Status         states.DeliveryStatus `json:"status" doc:"pending: being delivered or waiting for its next attempt."`
	Attempts       int                   `json:"attempts"`
	LastAttemptAt  *time.Time            `json:"last_attempt_at,omitempty"`
	LastStatus     *int                  `json:"last_status,omitempty"`
	LastError      string                `json:"last_error,omitempty"`
	DeliveredAt    *time.Time            `json:"delivered_at,omitempty"`
	FailedAt       *time.Time            `json:"failed_at,omitempty"`
	CreatedAt      time.Time             `json:"created_at"`
	RecentAttempts []Attempt             `json:"recent_attempts" doc:"The latest attempts, newest first (at most 10)."`
}

// Deliveries returns a page of an endpoint's deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, p *apikey.Principal, endpointID int64, status states.DeliveryStatus, page store.Paging) ([]*Delivery, int, error) {
	if _, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), endpointID); err != nil {
		return nil, 0, err
	}
	return deliveries(ctx, s.DB, endpointID, status, page, 10)
}

// deliveries is a page of an endpoint's deliveries, each with its latest
// attempts (at most recent of them), newest first.
func deliveries(ctx context.Context, db bun.IDB, endpointID int64, status states.DeliveryStatus, page store.Paging, recent int) ([]*Delivery, int, error) {
	rows, n, err := store.ListDeliveries(ctx, db, endpointID, status, page)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.EventID
	}
	attempts, err := store.ListDeliveryAttempts(ctx, db, endpointID, ids, recent)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*Delivery, len(rows))
	for i := range rows {
		out[i] = deliveryView(&rows[i], attempts[rows[i].EventID])
	}
	return out, n, nil
}

func deliveryView(r *store.WebhookDelivery, attempts []store.WebhookAttempt) *Delivery {
	d := &Delivery{EventID: r.EventID, EventType: string(r.EventType), EndpointID: r.EndpointID, Status: r.Status, Attempts: r.Attempts,
		LastAttemptAt: r.LastAttemptAt, LastStatus: r.LastStatus, DeliveredAt: r.DeliveredAt, FailedAt: r.FailedAt,
		CreatedAt: r.CreatedAt, RecentAttempts: []Attempt{}}
	if r.LastError != nil {
		d.LastError = *r.LastError
	}
	for _, a := range attempts {
		d.RecentAttempts = append(d.RecentAttempts, attemptView(a))
	}
	return d
}

func attemptView(a store.WebhookAttempt) Attempt {
	v := Attempt{Attempt: a.Attempt, AttemptedAt: a.AttemptedAt, DurationMS: a.DurationMS, StatusCode: a.StatusCode,
		ResponseExcerpt: a.ResponseExcerpt}
	if a.Error != nil {
		v.Error = *a.Error
	}
	return v
}

// Sent is an event made due: its id and the endpoints it goes to.
type Sent struct {
	EventID     string  `json:"event_id"`
	EventType   string  `json:"event_type"`
	EndpointIDs []int64 `json:"endpoint_ids" doc:"The endpoints the event is being delivered to."`
	// dispatched: the event had gone out before (none in EndpointIDs then
	// means no endpoint takes it now).
	dispatched bool
}

// ErrNotDispatched: an event not yet sent cannot be sent again.
var ErrNotDispatched = errors.New("event not dispatched yet")

// Redeliver sends an event again to every enabled endpoint of the caller's
// application that takes it (for a test ping: its endpoint), as a new run
// of each delivery's workflow.
func (s *Service) Redeliver(ctx context.Context, p *apikey.Principal, eventID string) (*Sent, error) {
	return s.redeliver(ctx, p, eventID, nil)
}

// RedeliverTo sends an event again to one endpoint of the caller's
// environment, as Redeliver does (the same cap, the same new run): the
// cabinet's "redeliver" of one delivery. A disabled endpoint, or one that
// no longer takes the event's type, is a StateError and nothing is sent.
func (s *Service) RedeliverTo(ctx context.Context, p *apikey.Principal, eventID string, endpointID int64) (*Sent, error) {
	e, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), endpointID)
	if err != nil {
		return nil, err
	}
	if !e.Enabled {
		return nil, &errs.StateError{Entity: "webhook endpoint", ID: fmt.Sprint(e.ID), Status: "disabled"}
	}
	sent, err := s.redeliver(ctx, p, eventID, &endpointID)
	if err != nil {
		return nil, err
	}
	if len(sent.EndpointIDs) == 0 && sent.dispatched {
		return nil, &errs.StateError{Entity: "webhook endpoint", ID: fmt.Sprint(e.ID),
			Status: "no longer subscribed to " + sent.EventType + " events"}
	}
	return sent, nil
}

func (s *Service) redeliver(ctx context.Context, p *apikey.Principal, eventID string, only *int64) (*Sent, error) {
	ev, err := store.GetWebhookEvent(ctx, s.DB, p.CompanyID, p.IsTest(), eventID)
	if err != nil {
		return nil, err
	}
	if ev.DispatchedAt == nil || ev.Payload == nil {
		// The relay sends it shortly for the first time.
		return &Sent{EventID: ev.ID, EventType: string(ev.Type), EndpointIDs: []int64{}}, nil
	}
	if err := s.allow(ctx, p, "redeliveries", "redeliver", s.Limits.RedeliveriesPerMinute); err != nil {
		return nil, err
	}
	ds, err := store.Redeliver(ctx, s.DB, ev, only)
	if err != nil {
		return nil, err
	}
	sent, err := s.start(ctx, ev, ds)
	if err != nil {
		return nil, err
	}
	sent.dispatched = true
	return sent, nil
}

func (s *Service) start(ctx context.Context, ev *store.WebhookEvent, ds []store.WebhookDelivery) (*Sent, error) {
	out := &Sent{EventID: ev.ID, EventType: string(ev.Type), EndpointIDs: []int64{}}
	for _, d := range ds {
		if err := StartDelivery(ctx, s.Temporal, s.TaskQueue, s.Retry, d.EventID, d.EndpointID, true); err != nil {
			// The worker's sweep starts it.
			return nil, fmt.Errorf("%w: %w", errs.Unavailable, err)
		}
		if err := store.MarkDeliveryStarted(ctx, s.DB, d.EventID, d.EndpointID); err != nil {
			return nil, err
		}
		out.EndpointIDs = append(out.EndpointIDs, d.EndpointID)
	}
	return out, nil
}

// Ping sends a webhook.test event to one endpoint.
func (s *Service) Ping(ctx context.Context, p *apikey.Principal, endpointID int64) (*Sent, error) {
	e, err := store.GetWebhookEndpoint(ctx, s.DB, p.CompanyID, p.IsTest(), endpointID)
	if err != nil {
		return nil, err
	}
	if !e.Enabled {
		return nil, &errs.StateError{Entity: "webhook endpoint", ID: fmt.Sprint(e.ID), Status: "disabled"}
	}
	if err := s.allow(ctx, p, "test events", "test", s.Limits.TestsPerMinute); err != nil {
		return nil, err
	}
	ev, err := store.CreatePingEvent(ctx, s.DB, e, states.EventPing, func(id string, at time.Time) ([]byte, error) {
		return Body(id, states.EventPing, at, Ping{EndpointID: e.ID, Message: "A test event: this endpoint receives webhooks."})
	})
	if err != nil {
		return nil, err
	}
	// The worker's relay sends it within its interval.
	return &Sent{EventID: ev.ID, EventType: string(ev.Type), EndpointIDs: []int64{e.ID}}, nil
}

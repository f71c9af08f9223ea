package webhooks

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// The organizer's cabinet sees a company's endpoints of both environments
// at once (partners see one environment's, by their key): these read them.

// CompanyEndpoint is an endpoint with the environment it is of.
type CompanyEndpoint struct {
	Endpoint
	Environment string // "production" or "sandbox"
	// LastFailure is the latest attempt of a failing endpoint (nil when
	// it is not failing): what went wrong, and when.
	LastFailure *Attempt
}

// environments in the order the cabinet lists them.
var environments = []struct {
	name   string
	isTest bool
}{{"production", false}, {"sandbox", true}}

// CompanyEndpoints lists the company's endpoints, production's first (at
// most 200 of each environment).
func CompanyEndpoints(ctx context.Context, db bun.IDB, companyID int64) ([]CompanyEndpoint, error) {
	var out []CompanyEndpoint
	for _, env := range environments {
		list, _, err := store.ListWebhookEndpoints(ctx, db, companyID, env.isTest, store.Paging{Page: 1, PerPage: 200})
		if err != nil {
			return nil, err
		}
		for i := range list {
			out = append(out, CompanyEndpoint{Endpoint: *endpointView(&list[i], false), Environment: env.name})
		}
	}
	if err := lastFailures(ctx, db, out); err != nil {
		return nil, err
	}
	return out, nil
}

// lastFailures gives each failing endpoint its latest attempt: since
// failing_since every attempt failed, so it is the last failure.
func lastFailures(ctx context.Context, db bun.IDB, eps []CompanyEndpoint) error {
	var ids []int64
	for _, e := range eps {
		if e.FailingSince != nil {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	latest, err := store.ListLatestAttempts(ctx, db, ids)
	if err != nil {
		return err
	}
	for i := range eps {
		if a, ok := latest[eps[i].ID]; ok && eps[i].FailingSince != nil {
			v := attemptView(a)
			eps[i].LastFailure = &v
		}
	}
	return nil
}

// CompanyEndpointByID returns one of the company's endpoints, of either
// environment; another company's is errs.NotFound.
func CompanyEndpointByID(ctx context.Context, db bun.IDB, companyID, id int64) (*CompanyEndpoint, error) {
	for _, env := range environments {
		e, err := store.GetWebhookEndpoint(ctx, db, companyID, env.isTest, id)
		if errors.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out := []CompanyEndpoint{{Endpoint: *endpointView(e, false), Environment: env.name}}
		if err := lastFailures(ctx, db, out); err != nil {
			return nil, err
		}
		return &out[0], nil
	}
	return nil, fmt.Errorf("webhook endpoint %d of company %d: %w", id, companyID, errs.NotFound)
}

// EndpointDeliveries returns a page of the endpoint's deliveries (status
// "": any), newest first, each with at most recent of its latest attempts,
// and how many there are. The caller has made sure the endpoint is the
// company's (CompanyEndpointByID).
func EndpointDeliveries(ctx context.Context, db bun.IDB, endpointID int64, status states.DeliveryStatus, page, perPage, recent int) ([]*Delivery, int, error) {
	return deliveries(ctx, db, endpointID, status, store.Paging{Page: page, PerPage: perPage}, recent)
}

// Principal is the caller the cabinet acts as on the service: the
// company's environment of the endpoint (the service's checks and caps are
// the API's, counted in the same budget as the environment's keys).
func Principal(companyID int64, environment string) *apikey.Principal {
	env := apikey.Production
	if environment == apikey.Sandbox {
		env = apikey.Sandbox
	}
	return &apikey.Principal{CompanyID: companyID, Environment: env}
}

// DeliveryDetail is one delivery as the cabinet's page shows it.
type DeliveryDetail struct {
	Delivery
	// Payload is the body sent, indented ("": not made yet: the relay
	// makes it when it first sends the event).
	Payload string
	// NextRetry is when the next attempt is due, for a pending delivery
	// whose last attempt failed (nil otherwise); a time past means one is
	// due or under way.
	NextRetry *time.Time
}

// maxShownAttempts bounds the attempts a delivery's page lists (three days
// of retries an hour apart are about 80).
const maxShownAttempts = 100

// CompanyDelivery returns an endpoint's delivery of an event, with its
// body, its attempts newest first and its next retry; the endpoint is the
// company's (CompanyEndpointByID), and the event must be too.
func (s *Service) CompanyDelivery(ctx context.Context, companyID int64, ep *CompanyEndpoint, eventID string) (*DeliveryDetail, error) {
	ev, err := store.GetWebhookEvent(ctx, s.DB, companyID, ep.IsTest, eventID)
	if err != nil {
		return nil, err
	}
	row, err := store.GetWebhookDelivery(ctx, s.DB, ep.ID, eventID)
	if err != nil {
		return nil, err
	}
	attempts, err := store.ListDeliveryAttempts(ctx, s.DB, ep.ID, []string{eventID}, maxShownAttempts)
	if err != nil {
		return nil, err
	}
	out := &DeliveryDetail{Delivery: *deliveryView(row, attempts[eventID])}
	if len(ev.Payload) > 0 {
		var b bytes.Buffer
		if err := json.Indent(&b, ev.Payload, "", "  "); err != nil {
			out.Payload = string(ev.Payload)
		} else {
			out.Payload = b.String()
		}
	}
	if row.Status == states.DeliveryPending && ep.Enabled {
		out.NextRetry = NextRetry(s.Retry, attempts[eventID])
	}
	return out, nil
}

// NextRetry is when the delivery workflow tries again after the latest of
// the attempts (newest first), by its schedule (contract.WebhookRetry, as
// the workflow applies it): the wait after a run's n-th attempt is Initial
// times Backoff^(n-1), at most Maximum, and never past the run's first
// attempt plus GiveUpAfter. Nil when there was no attempt yet.
func NextRetry(r contract.WebhookRetry, attempts []store.WebhookAttempt) *time.Time {
	if len(attempts) == 0 {
		return nil
	}
	if r.Initial <= 0 || r.GiveUpAfter <= 0 {
		r = contract.DefaultWebhookRetry
	}
	if r.Backoff < 1 {
		r.Backoff = 2
	}
	if r.Maximum < r.Initial {
		r.Maximum = r.Initial
	}
	last := attempts[0]
	wait := r.Initial
	for i := 1; i < last.Attempt && wait < r.Maximum; i++ {
		wait = min(time.Duration(float64(wait)*r.Backoff), r.Maximum)
	}
	// The wait starts once the attempt has ended.
	at := last.AttemptedAt.Add(time.Duration(last.DurationMS)*time.Millisecond + wait)
	for _, a := range attempts {
		if a.RunID == last.RunID && a.Attempt == 1 {
			at = minTime(at, a.AttemptedAt.Add(r.GiveUpAfter))
		}
	}
	return &at
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// IsCurrentSecret says whether secret is the endpoint's signing secret now
// (compared in constant time): the cabinet shows a secret kept in the
// session only while it is still the one that signs.
func IsCurrentSecret(ctx context.Context, db bun.IDB, companyID int64, ep *CompanyEndpoint, secret string) (bool, error) {
	e, err := store.GetWebhookEndpoint(ctx, db, companyID, ep.Environment == "sandbox", ep.ID)
	if err != nil {
		return false, err
	}
	return secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(e.Secret)) == 1, nil
}

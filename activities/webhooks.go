package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/activity"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// WebhookSettings shape deliveries.
type WebhookSettings struct {
	// Rules say which addresses deliveries may reach.
	Rules webhooks.Rules
	// Timeout bounds one POST, answer included (0: 10 s).
	Timeout time.Duration
}

// webhookClients are HTTP clients, one per address policy, kept so that
// deliveries reuse connections.
type webhookClients struct {
	mu      sync.Mutex
	clients map[webhooks.Policy]*http.Client
}

var deliveryClients = &webhookClients{clients: map[webhooks.Policy]*http.Client{}}

func (c *webhookClients) get(p webhooks.Policy, timeout time.Duration) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.clients[p]; ok {
		return hc
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, Control: p.Control}
	hc := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy: nil, DialContext: dialer.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second, ResponseHeaderTimeout: timeout,
		},
		// A redirect is an answer, not a place to follow: it could lead to
		// an address the endpoint's own check never saw.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.clients[p] = hc
	return hc
}

// Outcomes of a webhook attempt.
const (
	WebhookDelivered = "delivered" // 2xx
	WebhookRetry     = "retry"     // try again later
	WebhookGone      = "gone"      // the endpoint is deleted or disabled: stop
)

// WebhookAttemptInput is one attempt of a delivery. DisableAfter is how
// long an endpoint may fail every delivery before it is disabled.
type WebhookAttemptInput struct {
	EventID      string
	EndpointID   int64
	Attempt      int
	DisableAfter time.Duration
}

// WebhookAttemptResult is what an attempt found.
type WebhookAttemptResult struct {
	Outcome  string
	Status   int    // HTTP status (0: no answer)
	Error    string // why it failed, for the workflow's status
	Disabled bool   // this failure disabled the endpoint
}

// excerptBytes bounds the part of an answer kept with the attempt.
const excerptBytes = 512

// DeliverWebhook POSTs an event to an endpoint once, signed with the
// endpoint's secrets, and records the attempt with its effect. Running it
// again POSTs again (receivers dedupe by webhook-id) and records the same
// attempt once.
func (a *Activities) DeliverWebhook(ctx context.Context, in WebhookAttemptInput) (WebhookAttemptResult, error) {
	t, err := store.GetDeliveryTarget(ctx, a.DB, in.EventID, in.EndpointID)
	if errors.Is(err, errs.NotFound) {
		return WebhookAttemptResult{Outcome: WebhookGone, Error: "the event or the endpoint no longer exists"}, nil
	} else if err != nil {
		return WebhookAttemptResult{}, err
	}
	if t.Delivery.Status == states.DeliveryDelivered {
		return WebhookAttemptResult{Outcome: WebhookDelivered}, nil
	}
	if ep := t.Endpoint; ep.DeletedAt != nil || !ep.Enabled {
		why := "the endpoint was deleted"
		if ep.DeletedAt == nil {
			why = "the endpoint is disabled"
			if ep.DisabledReason != nil {
				why += ": " + *ep.DisabledReason
			}
		}
		if err := store.FailDelivery(ctx, a.DB, in.EventID, in.EndpointID, why); err != nil {
			return WebhookAttemptResult{}, err
		}
		return WebhookAttemptResult{Outcome: WebhookGone, Error: why}, nil
	}
	runID := ""
	if activity.IsActivity(ctx) {
		runID = activity.GetInfo(ctx).WorkflowExecution.RunID
	}
	rec := &store.WebhookAttempt{EventID: in.EventID, EndpointID: in.EndpointID, RunID: runID, Attempt: in.Attempt}
	status, excerpt, took, postErr := a.postWebhook(ctx, t)
	rec.AttemptedAt, rec.DurationMS, rec.ResponseExcerpt = time.Now().Add(-took), int(took.Milliseconds()), excerpt
	res := WebhookAttemptResult{Outcome: WebhookRetry, Status: status}
	switch {
	case postErr != nil:
		msg := postErr.Error()
		rec.Error, res.Error = &msg, msg
	case status >= 200 && status < 300:
		res.Outcome = WebhookDelivered
	default:
		res.Error = fmt.Sprintf("HTTP %d", status)
	}
	if status != 0 {
		rec.StatusCode = &status
	}
	out, err := store.RecordAttempt(ctx, a.DB, rec, t.Delivery.Redeliveries, res.Outcome == WebhookDelivered, in.DisableAfter)
	if err != nil {
		return WebhookAttemptResult{}, err
	}
	res.Disabled = out.Disabled
	if out.Disabled {
		a.logDisabled(ctx, in.EndpointID, res.Error)
	}
	return res, nil
}

// postWebhook sends the signed event: the answer's status and first bytes,
// or why there was none.
func (a *Activities) postWebhook(ctx context.Context, t *store.DeliveryTarget) (status int, excerpt string, took time.Duration, err error) {
	policy := a.Webhooks.Rules.For(t.Endpoint.IsTest)
	start := time.Now()
	defer func() { took = time.Since(start) }()
	if err := policy.CheckURL(ctx, t.Endpoint.URL); err != nil {
		return 0, "", 0, err
	}
	body := []byte(t.Event.Payload)
	headers, err := webhooks.Headers(t.Endpoint.Secrets(start), t.Event.ID, start, body)
	if err != nil {
		return 0, "", 0, err
	}
	timeout := a.Webhooks.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.Endpoint.URL, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ticketsales-webhooks/1")
	resp, err := deliveryClients.get(policy, timeout).Do(req)
	if err != nil {
		return 0, "", 0, errors.New(strings.TrimPrefix(err.Error(), "Post \""+t.Endpoint.URL+"\": "))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, excerptBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	for !utf8.Valid(b) && len(b) > 0 {
		b = b[:len(b)-1]
	}
	return resp.StatusCode, string(b), 0, nil
}

// FailWebhookDelivery marks a delivery failed when its retries ran out, and
// disables the endpoint if nothing reached it since the delivery began (it
// failed for the whole window). Repeating it changes nothing.
func (a *Activities) FailWebhookDelivery(ctx context.Context, eventID string, endpointID int64, reason string) error {
	disabled, err := store.GiveUpDelivery(ctx, a.DB, eventID, endpointID, reason)
	if disabled {
		a.logDisabled(ctx, endpointID, reason)
	}
	return err
}

func (a *Activities) logDisabled(ctx context.Context, endpointID int64, last string) {
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	log.WarnContext(ctx, "webhook endpoint disabled after failing every delivery", "endpoint_id", endpointID, "last", last)
}

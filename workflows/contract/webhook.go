package contract

import (
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// WebhookWorkflow delivers one event to one endpoint.
const WebhookWorkflow = "WebhookDelivery"

// WebhookWorkflowID is the readable workflow id of a delivery:
// webhook/{event_id}/{endpoint_id}.
func WebhookWorkflowID(eventID string, endpointID int64) string {
	return "webhook/" + eventID + "/" + strconv.FormatInt(endpointID, 10)
}

// WebhookFromWorkflowID is the inverse of WebhookWorkflowID.
func WebhookFromWorkflowID(wid string) (eventID string, endpointID int64, ok bool) {
	rest, ok := strings.CutPrefix(wid, "webhook/")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", 0, false
	}
	id, err := strconv.ParseInt(rest[i+1:], 10, 64)
	return rest[:i], id, err == nil
}

// WebhookRetry is a delivery's schedule: the first retry after Initial,
// each wait Backoff times the last up to Maximum, and no attempt started
// once GiveUpAfter has passed since the first one. An endpoint whose every
// delivery failed for GiveUpAfter is disabled.
type WebhookRetry struct {
	Initial     time.Duration
	Backoff     float64
	Maximum     time.Duration
	GiveUpAfter time.Duration
}

// DefaultWebhookRetry: 15 s, doubling, at most an hour apart, for 3 days.
var DefaultWebhookRetry = WebhookRetry{Initial: 15 * time.Second, Backoff: 2, Maximum: time.Hour, GiveUpAfter: 72 * time.Hour}

// WebhookInput starts a delivery workflow: ids only, the body stays in
// Postgres.
type WebhookInput struct {
	EventID    string
	EndpointID int64
	Retry      WebhookRetry
}

// WebhookStatus answers the status query and is the workflow's result.
type WebhookStatus struct {
	EventID    string
	EndpointID int64
	Status     states.DeliveryStatus
	Attempts   int
	LastError  string
}

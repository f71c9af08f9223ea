// Package ticketsales is the Go SDK of the ticket sales API.
//
// Most of it (client.gen.go) is generated from the API's OpenAPI document:
// a method per operation on [ClientWithResponses], returning a response
// whose JSON200, JSON201, … fields hold the decoded answer, and the API's
// types. A small hand-written layer makes it safe and pleasant to use:
//
//   - [New] makes a client that authenticates with the API key, gives every
//     POST, PUT, PATCH and DELETE without an Idempotency-Key a fresh one,
//     and retries what can be retried (429, 503, a connection lost before
//     an answer) honouring Retry-After, with the same key each time, so a
//     retry never does a thing twice; see [Doer].
//   - [Check] and [ResponseError] turn an answer that is not a success into
//     a [*Problem], the API's RFC 9457 problem, an error to inspect with
//     errors.As (its Code says what to do).
//   - [WaitForOrder] waits until an order is paid, for a confirm answered
//     202 (payment accepted, tickets follow) or a gateway payment.
//   - [ConstructEvent] verifies a webhook delivery's Standard Webhooks
//     signature and returns its event; [WebhookEvent.Typed] decodes it
//     into the event type's struct (*OrderPaidEvent, …) for a type switch.
//
// Its version follows the API's: [APIVersion] is the version of the
// document it was generated from, [Version] the SDK's release (tag
// sdk/go/vX.Y.Z).
package ticketsales

import (
	"net/http"
	"time"
)

const (
	// APIVersion is the OpenAPI document's info.version this SDK was
	// generated from.
	APIVersion = "1.1.0"
	// Version is this SDK's release: the API's version, one number for
	// the document and both SDKs (a fix of the hand-written layer alone is
	// a patch release of all; docs/releasing.md in the repository).
	Version = "1.1.0"
)

// DefaultTimeout bounds each attempt of a request made through a client of
// [New] without an HTTP client of its own: the service answers within it
// (its longest wait, a confirm or a refund waiting for its workflow, is 15
// s), so an attempt that takes longer is a connection gone silent, which
// the Doer retries when that is safe. Bring an *http.Client of your own
// (Doer.Next) for another bound; the request's context bounds all attempts.
const DefaultTimeout = 30 * time.Second

// defaultHTTPClient sends requests for a Doer without Next.
var defaultHTTPClient = &http.Client{Timeout: DefaultTimeout}

// userAgent names the SDK in every request, so the service's request log
// tells which release a partner runs.
const userAgent = "ticketsales-go/" + Version + " (api " + APIVersion + ")"

// New is a client of the service at baseURL (e.g. https://tickets.example)
// authenticated with apiKey. Its requests go through a [Doer]: pass
// WithHTTPClient(&Doer{…}) to tune retries or bring an HTTP client of your
// own (Doer.Next); any other HttpRequestDoer given with WithHTTPClient is
// wrapped in a Doer with the defaults.
func New(baseURL, apiKey string, opts ...ClientOption) (*ClientWithResponses, error) {
	opts = append(opts, func(c *Client) error {
		d, ok := c.Client.(*Doer)
		if !ok {
			d = &Doer{Next: c.Client}
			c.Client = d
		}
		if d.APIKey == "" {
			d.APIKey = apiKey
		}
		if d.Next == nil {
			d.Next = &http.Client{Timeout: DefaultTimeout}
		}
		return nil
	})
	return NewClientWithResponses(baseURL, opts...)
}

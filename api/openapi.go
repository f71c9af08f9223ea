package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// nullable lists properties the service answers with null (a ticket
// without a seat, an event without prices): Huma cannot mark a $ref
// nullable, so the document says anyOf [ref, null].
var nullable = map[string][]string{
	"Ticket":     {"seat"},
	"DoorTicket": {"seat"},
	"Event":      {"price_from"},
	"Share":      {"channel", "allocation"},
}

// transportHeaders are HTTP's own: a client must not set or read them as
// API parameters (one that sets Accept-Encoding itself loses Go's
// transparent gunzip).
var transportHeaders = []string{"Accept-Encoding", "Content-Type", "Content-Length", "Vary", "Content-Encoding"}

// polishDocument completes what Huma derives from the Go types, so a client
// generated from the document needs no glue: every operation's possible
// failures and headers, the problem codes, nullable references, named
// envelopes for hand-serialised bodies and the public base URL.
func polishDocument(doc *huma.OpenAPI, publicBaseURL string) {
	if publicBaseURL != "" {
		doc.Servers = []*huma.Server{{URL: publicBaseURL, Description: "This deployment"}}
	}
	schemas := doc.Components.Schemas.Map()
	if p := schemas["Problem"]; p != nil {
		if code := p.Properties["code"]; code != nil {
			code.Enum = nil
			for _, c := range problemCodes {
				code.Enum = append(code.Enum, c)
			}
		}
	}
	if p := schemas["Problem"]; p != nil && p.Properties["unavailableSeats"] != nil {
		// The aggregator's camelCase member and /v1's snake_case one are
		// one name in Go: tell generators apart.
		p.Properties["unavailableSeats"].Extensions = map[string]any{"x-go-name": "AggregatorUnavailableSeats"}
	}
	for name, props := range nullable {
		s := schemas[name]
		if s == nil {
			continue
		}
		for _, prop := range props {
			ps := s.Properties[prop]
			switch {
			case ps == nil:
			case ps.Ref != "":
				s.Properties[prop] = &huma.Schema{Description: ps.Description,
					AnyOf: []*huma.Schema{{Ref: ps.Ref}, {Type: "null"}}}
			default:
				ps.Nullable = true
			}
		}
	}
	documentPages(doc)
	documentWebhooks(doc)
	problem := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{
			"application/problem+json": {Schema: &huma.Schema{Ref: "#/components/schemas/Problem"}}}}
	}
	header := func(desc string) *huma.Param {
		return &huma.Param{Description: desc, Schema: &huma.Schema{Type: "string"}}
	}
	for path, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			secured := len(op.Security) > 0
			op.Parameters = slices.DeleteFunc(op.Parameters, func(p *huma.Param) bool {
				return p.In == "header" && slices.Contains(transportHeaders, http.CanonicalHeaderKey(p.Name))
			})
			add := func(status int) {
				key := strconv.Itoa(status)
				if op.Responses[key] == nil {
					op.Responses[key] = problem(http.StatusText(status))
				}
			}
			if secured {
				add(http.StatusUnauthorized)
				add(http.StatusForbidden)
				add(http.StatusTooManyRequests)
			}
			if op.RequestBody != nil {
				add(http.StatusRequestEntityTooLarge)
				add(http.StatusUnsupportedMediaType)
			}
			add(http.StatusMethodNotAllowed) // another method on the same path
			if op.Responses["default"] == nil {
				op.Responses["default"] = problem("Any other failure, as a problem (RFC 9457) with its code.")
			}
			nameEnvelope(doc, op, path)
			declareSuccesses(op)
			idem, _ := op.Metadata["idempotent"].(bool)
			for key, res := range op.Responses {
				for _, h := range transportHeaders {
					delete(res.Headers, h)
				}
				if res.Headers == nil {
					res.Headers = map[string]*huma.Param{}
				}
				res.Headers["X-Request-Id"] = header("This request's id, as `request_id` in the body; quote it to support.")
				switch {
				case secured && strings.HasPrefix(path, SeatMapPrefix+"/"):
					res.Headers["RateLimit"] = header(`This address's remaining requests with this token and the seconds to a full bucket: "default";r=REMAINING;t=SECONDS.`)
					res.Headers["RateLimit-Policy"] = header(`The limit per address and token: "default";q=BURST;w=SECONDS.`)
				case secured:
					res.Headers["RateLimit"] = header(`The key's remaining requests and the seconds to a full bucket: "default";r=REMAINING;t=SECONDS.`)
					res.Headers["RateLimit-Policy"] = header(`The key's limit: "default";q=BURST;w=SECONDS.`)
				}
				if idem {
					res.Headers["Idempotent-Replayed"] = header("`true` when this is the stored answer to an earlier request with the same Idempotency-Key.")
				}
				if codes := codesByStatus[key]; len(codes) > 0 && res.Content["application/problem+json"] != nil {
					res.Description = http.StatusText(mustAtoi(key)) + ". Problem codes: `" + strings.Join(codes, "`, `") + "`."
				}
				switch key {
				case "429", "503":
					res.Headers["Retry-After"] = header("Seconds to wait before retrying.")
				case "401":
					res.Headers["WWW-Authenticate"] = header("The Bearer challenge.")
				case "304":
					res.Headers["ETag"] = header("The representation's current ETag, unchanged.")
				}
			}
		}
	}
	openResponses(doc)
}

// openResponses leaves every schema an answer uses open to members added
// later (no additionalProperties: false), while the schemas of requests
// stay closed: a partner who validates answers against the document keeps
// working when the service adds a field (docs/api.md, Compatibility), and
// a request with a member the service does not know is still refused. A
// schema used by both would have to be one or the other: each is a type
// of its own (UnavailableSeat beside SeatRef); TestOpenAPIAnswersAreOpen
// fails on one that is not. The webhooks' bodies, which the service sends,
// are open as answers are.
func openResponses(doc *huma.OpenAPI) {
	schemas := doc.Components.Schemas.Map()
	var walk func(s *huma.Schema, seen map[string]bool, visit func(*huma.Schema) bool)
	walk = func(s *huma.Schema, seen map[string]bool, visit func(*huma.Schema) bool) {
		if s == nil {
			return
		}
		if s.Ref != "" {
			name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
			if seen[name] {
				return
			}
			seen[name] = true
			s = schemas[name]
			if s == nil {
				return
			}
		}
		if !visit(s) {
			return
		}
		for _, p := range s.Properties {
			walk(p, seen, visit)
		}
		walk(s.Items, seen, visit)
		if a, ok := s.AdditionalProperties.(*huma.Schema); ok {
			walk(a, seen, visit)
		}
		for _, list := range [][]*huma.Schema{s.AllOf, s.AnyOf, s.OneOf} {
			for _, x := range list {
				walk(x, seen, visit)
			}
		}
		walk(s.Not, seen, visit)
	}
	requestSide := map[string]bool{}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			if op.RequestBody != nil {
				for _, mt := range op.RequestBody.Content {
					walk(mt.Schema, requestSide, func(*huma.Schema) bool { return true })
				}
			}
			for _, p := range op.Parameters {
				walk(p.Schema, requestSide, func(*huma.Schema) bool { return true })
			}
		}
	}
	closed := map[*huma.Schema]bool{}
	for name := range requestSide {
		closed[schemas[name]] = true
	}
	responseSide := map[string]bool{}
	open := func(s *huma.Schema) bool {
		if closed[s] {
			return false // a request's: stays closed
		}
		if allowed, ok := s.AdditionalProperties.(bool); ok && !allowed {
			s.AdditionalProperties = nil
		}
		return true
	}
	for _, item := range doc.Webhooks {
		// What the service sends to partners is open as its answers are.
		if item.Post != nil && item.Post.RequestBody != nil {
			for _, mt := range item.Post.RequestBody.Content {
				walk(mt.Schema, responseSide, open)
			}
		}
	}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil {
				continue
			}
			for _, res := range op.Responses {
				for _, mt := range res.Content {
					walk(mt.Schema, responseSide, open)
				}
			}
		}
	}
}

// declareSuccesses gives every 2xx of op its body and headers. Huma derives
// them for the operation's default status only, from its output type; an
// operation answering another 2xx too (a confirm's or a refund's 202)
// answers it with the same type, so that response gets the same body and
// headers. A header documented "202: …" is sent with the 202 only. The
// Location of a 201 or a 202 is always sent: it is declared required, so a
// client may rely on it.
func declareSuccesses(op *huma.Operation) {
	var def *huma.Response
	for key, res := range op.Responses {
		if strings.HasPrefix(key, "2") && len(res.Content) > 0 {
			def = res
		}
	}
	if def == nil {
		return
	}
	defHeaders := def.Headers // replaced below when def is done first
	for key, res := range op.Responses {
		if !strings.HasPrefix(key, "2") || key == "204" {
			continue
		}
		if len(res.Content) == 0 {
			res.Content = def.Content
		}
		headers := map[string]*huma.Param{}
		for name, h := range defHeaders {
			c := *h
			if c.Description == "" && c.Schema != nil {
				// Huma puts a header field's doc on its schema.
				c.Description = c.Schema.Description
			}
			if key != "202" && strings.HasPrefix(c.Description, "202:") {
				continue
			}
			if name == "Location" && (key == "201" || key == "202") {
				c.Required = true
			}
			if c.Description == "" && name == "Location" {
				c.Description = "Where to read what was created or accepted."
			}
			headers[name] = &c
		}
		if res != def {
			for name, h := range res.Headers {
				headers[name] = h
			}
		}
		res.Headers = headers
	}
}

// nameEnvelope names the inline {data, meta, request_id} schema Huma makes
// for hand-serialised bodies (availability, scheme), so clients get a type
// for them, as for every other envelope.
func nameEnvelope(doc *huma.OpenAPI, op *huma.Operation, path string) {
	res := op.Responses["200"]
	if res == nil {
		return
	}
	mt := res.Content["application/json"]
	if mt == nil || mt.Schema == nil || mt.Schema.Ref != "" || mt.Schema.Properties["data"] == nil {
		return
	}
	ref := mt.Schema.Properties["data"].Ref
	if ref == "" {
		return
	}
	name := "Envelope" + ref[len("#/components/schemas/"):]
	schemas := doc.Components.Schemas.Map()
	if schemas[name] == nil {
		schemas[name] = mt.Schema
	}
	mt.Schema = &huma.Schema{Ref: "#/components/schemas/" + name}
}

// documentPages describes what the api serves outside Huma: the buyer's
// order page and its PDF (the link in order_url), and the test gateway's
// payment page, which a partner's automated test drives with plain HTTP.
func documentPages(doc *huma.OpenAPI) {
	problem := &huma.Response{Description: "No such order, or the link is not valid (a wrong token looks like no order).",
		Content: map[string]*huma.MediaType{"application/problem+json": {Schema: &huma.Schema{Ref: "#/components/schemas/Problem"}}}}
	id := &huma.Param{Name: "id", In: "path", Required: true, Description: "Order id.", Schema: &huma.Schema{Type: "integer", Format: "int64"}}
	token := &huma.Param{Name: "access_token", In: "query", Required: true,
		Description: "The order's access token, as in `order_url`.", Schema: &huma.Schema{Type: "string"}}
	doc.Tags = append(doc.Tags, &huma.Tag{Name: "Buyer pages", Description: "Public pages a buyer opens from a link; no API key."})
	doc.Paths["/o/{id}"] = &huma.PathItem{Get: &huma.Operation{
		OperationID: "get-order-page", Tags: []string{"Buyer pages"}, Summary: "The buyer's order page (HTML)",
		Description: "Every ticket of the order with its QR code, and a link to the PDF. `order_url` of a ticket points here. A sandbox order's page says TEST above the event and on every ticket.",
		Parameters:  []*huma.Param{id, token}, Security: []map[string][]string{},
		Responses: map[string]*huma.Response{
			"200": {Description: "The page.", Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: "string"}}}},
			"404": problem,
		}}}
	doc.Paths["/o/{id}/tickets.pdf"] = &huma.PathItem{Get: &huma.Operation{
		OperationID: "get-order-tickets-pdf", Tags: []string{"Buyer pages"}, Summary: "The order's tickets as PDF",
		Description: "One page per ticket, with its QR code and EAN-13 barcode. Every page of a sandbox order's PDF says TEST.",
		Parameters:  []*huma.Param{id, token}, Security: []map[string][]string{},
		Responses: map[string]*huma.Response{
			"200": {Description: "The PDF.", Content: map[string]*huma.MediaType{"application/pdf": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}},
			"404": problem,
		}}}
	pay := &huma.Param{Name: "id", In: "path", Required: true, Description: "The test payment's id, the last segment of `payment_url`.",
		Schema: &huma.Schema{Type: "string"}}
	text := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"text/plain": {Schema: &huma.Schema{Type: "string"}}}}
	}
	doc.Paths["/pay/{id}"] = &huma.PathItem{
		Get: &huma.Operation{OperationID: "get-test-payment-page", Tags: []string{"Gateway"}, Summary: "The test gateway's payment page (sandbox)",
			Description: "Where `payment_url` of a sandbox `payment=gateway` order leads: the amount, and Pay / Decline buttons.",
			Parameters:  []*huma.Param{pay}, Security: []map[string][]string{},
			Responses: map[string]*huma.Response{
				"200": {Description: "The page.", Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: "string"}}}},
				"404": text("No such payment."),
			}},
		Post: &huma.Operation{OperationID: "act-on-test-payment", Tags: []string{"Gateway"}, Summary: "Pay or decline a test payment (sandbox)",
			Description: "What the page's buttons send; an automated test posts it with plain HTTP " +
				"(`curl -d action=pay $payment_url`). The gateway then reports the payment to the service, which " +
				"marks the order paid and issues its tickets: poll the order.",
			Parameters: []*huma.Param{pay}, Security: []map[string][]string{},
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/x-www-form-urlencoded": {Schema: &huma.Schema{Type: "object", Required: []string{"action"},
					Properties: map[string]*huma.Schema{"action": {Type: "string", Enum: []any{"pay", "decline"}}}}}}},
			Responses: map[string]*huma.Response{
				"303": {Description: "Taken; back to the page (`GET /pay/{id}`, 200 with the result), which a client following " +
					"redirects gets.",
					Headers: map[string]*huma.Param{"Location": {Description: "The payment page, `/pay/{id}`.", Required: true,
						Schema: &huma.Schema{Type: "string"}}}},
				"400": text("action is neither pay nor decline."),
				"404": text("No such payment."),
				"500": text("The payment could not be recorded; nothing was taken. Post again."),
			}},
	}
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

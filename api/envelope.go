package api

import (
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/ticketsales/ticketsales/api/request"

	"github.com/danielgtaylor/huma/v2"
)

// Envelope is the shape of every successful /v1 body.
type Envelope[T any] struct {
	Data      T      `json:"data"`
	RequestID string `json:"request_id" doc:"Log it for support lookups; equals the X-Request-Id header."`
	Meta      *Meta  `json:"meta,omitempty"`
}

// Meta describes a page of a list.
type Meta struct {
	CurrentPage int `json:"current_page"`
	PerPage     int `json:"per_page"`
	Total       int `json:"total"`
	LastPage    int `json:"last_page"`
}

// PageParams are the paging query parameters of every list.
type PageParams struct {
	Page    int `query:"page" minimum:"1" default:"1" doc:"1-based page number."`
	PerPage int `query:"per_page" minimum:"1" maximum:"200" default:"50" doc:"Items per page."`
}

type dataOutput[T any] struct {
	Body Envelope[T]
}

type listOutput[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Body         Envelope[[]T]
}

func ok[T any](ctx context.Context, data T) *dataOutput[T] {
	return &dataOutput[T]{Body: Envelope[T]{Data: data, RequestID: request.ID(ctx)}}
}

// reply answers data in the envelope, or passes err on to the error model,
// which answers the problem: a handler only translates HTTP.
func reply[T any](ctx context.Context, data T, err error) (*dataOutput[T], error) {
	if err != nil {
		return nil, err
	}
	return ok(ctx, data), nil
}

// replyPage answers a page of items, or passes err on.
func replyPage[T any](ctx context.Context, items []T, p PageParams, total int, err error) (*listOutput[T], error) {
	if err != nil {
		return nil, err
	}
	return page(ctx, items, p, total), nil
}

func page[T any](ctx context.Context, items []T, p PageParams, total int) *listOutput[T] {
	if items == nil {
		items = []T{}
	}
	last := max((total+p.PerPage-1)/p.PerPage, 1)
	return &listOutput[T]{Body: Envelope[[]T]{Data: items, RequestID: request.ID(ctx),
		Meta: &Meta{CurrentPage: p.Page, PerPage: p.PerPage, Total: total, LastPage: last}}}
}

// rawOutput serves pre-encoded JSON data inside the envelope, with an ETag
// and a 304 for a matching If-None-Match.
type rawOutput struct {
	Status          int
	ContentType     string `header:"Content-Type"`
	ContentEncoding string `header:"Content-Encoding"`
	Vary            string `header:"Vary"`
	ETag            string `header:"ETag"`
	CacheControl    string `header:"Cache-Control"`
	Body            []byte
}

// partsOutput serves a body written in parts (see catalog.AvailabilityDoc.Parts)
// with its Content-Length, without joining them.
type partsOutput struct {
	ContentType     string `header:"Content-Type"`
	ContentEncoding string `header:"Content-Encoding"`
	ContentLength   string `header:"Content-Length"`
	Vary            string `header:"Vary"`
	ETag            string `header:"ETag"`
	CacheControl    string `header:"Cache-Control"`
	Body            func(huma.Context)
}

func (o *partsOutput) serve(status int, parts ...[]byte) *partsOutput {
	if status == http.StatusNotModified {
		o.Body = func(ctx huma.Context) { ctx.SetStatus(status) }
		return o
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	o.ContentLength = strconv.Itoa(n)
	o.Body = func(ctx huma.Context) {
		ctx.SetStatus(status)
		w := ctx.BodyWriter()
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return // the client went away
			}
		}
	}
	return o
}

// acceptsGzip reads Accept-Encoding (gzip, unless q=0).
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") || strings.TrimSpace(name) == "*" {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.000"
		}
	}
	return false
}

// rawEnvelope wraps encoded data without decoding and re-encoding it.
func rawEnvelope(ctx context.Context, data []byte, etag, ifNoneMatch, cacheControl string) *rawOutput {
	out := &rawOutput{ETag: etag, CacheControl: cacheControl, ContentType: "application/json"}
	if etagMatches(ifNoneMatch, etag) {
		out.Status = http.StatusNotModified
		return out
	}
	rid := request.ID(ctx)
	body := make([]byte, 0, len(data)+len(rid)+32)
	body = append(body, `{"data":`...)
	body = append(body, data...)
	body = append(body, `,"request_id":`...)
	body = strconv.AppendQuote(body, rid)
	body = append(body, '}')
	out.Status, out.Body = http.StatusOK, body
	return out
}

// etagMatches implements If-None-Match's weak comparison over a list.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || trimWeak(part) == trimWeak(etag) {
			return true
		}
	}
	return false
}

func trimWeak(t string) string {
	if len(t) > 2 && t[0] == 'W' && t[1] == '/' {
		return t[2:]
	}
	return t
}

// jsonResponse documents a raw JSON body as the envelope of T.
func jsonResponse[T any](api huma.API, description string) map[string]*huma.Response {
	schema := huma.SchemaFromType(api.OpenAPI().Components.Schemas, reflect.TypeFor[Envelope[T]]())
	return map[string]*huma.Response{
		"200": {Description: description, Content: map[string]*huma.MediaType{"application/json": {Schema: schema}},
			Headers: map[string]*huma.Param{"ETag": {Schema: &huma.Schema{Type: "string"}}}},
		"304": {Description: "Not modified: the ETag in If-None-Match is current."},
	}
}

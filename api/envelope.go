package api

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/store"

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
	CurrentPage int    `json:"current_page" doc:"The page number; after a cursor, the page of the walk it continues."`
	PerPage     int    `json:"per_page"`
	Total       int    `json:"total" doc:"Items in the whole list now (also after a cursor)."`
	LastPage    int    `json:"last_page"`
	NextCursor  string `json:"next_cursor,omitempty" doc:"Where the next page starts: send it as cursor, with the same filters. Absent at the end of the list."`
}

// PageParams are the paging query parameters of every list.
type PageParams struct {
	Page    int    `query:"page" minimum:"1" default:"1" doc:"1-based page number. Not with cursor."`
	PerPage int    `query:"per_page" minimum:"1" maximum:"200" default:"50" doc:"Items per page."`
	Cursor  string `query:"cursor" maxLength:"512" doc:"meta.next_cursor of the previous page, as given: the page after its last item, however many items were added or removed meanwhile. Send the same filters with it."`

	after   *store.Seek // the position Cursor names
	n       int         // the page of the walk Cursor leads to
	binding string      // the list and filters this request names
	url     *url.URL    // the request's, for the next page's link
}

type dataOutput[T any] struct {
	Body Envelope[T]
}

type listOutput[T any] struct {
	CacheControl string `header:"Cache-Control"`
	Link         string `header:"Link" doc:"rel=\"next\": the next page, by cursor; absent at the end."`
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

// replyPage answers a page of items, or passes err on. key is an item's
// position in the list's order, for the next page's cursor.
func replyPage[T any](ctx context.Context, items []T, p PageParams, total int, err error, key func(T) store.Seek) (*listOutput[T], error) {
	if err != nil {
		return nil, err
	}
	return page(ctx, items, p, total, key), nil
}

func page[T any](ctx context.Context, items []T, p PageParams, total int, key func(T) store.Seek) *listOutput[T] {
	if items == nil {
		items = []T{}
	}
	last := max((total+p.PerPage-1)/p.PerPage, 1)
	next, link := nextPage(items, &p, total, key)
	return &listOutput[T]{Link: link, Body: Envelope[[]T]{Data: items, RequestID: request.ID(ctx),
		Meta: &Meta{CurrentPage: p.currentPage(), PerPage: p.PerPage, Total: total, LastPage: last, NextCursor: next}}}
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

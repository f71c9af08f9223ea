package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/store"
)

// A cursor names a position in one list as one caller filters it: the
// sort key of the last row of the page that gave it. It is base64url of a
// checksum and a small JSON payload; clients treat it as opaque.
//
// It carries no secret and needs none: every query stays scoped to the
// caller, so a forged position could only show the caller's own rows,
// which page numbers show too. The checksum catches a garbled or edited
// cursor; the binding catches one used with another list, another key's
// company or environment, or other filters.
const (
	cursorVersion   = 1
	cursorMaxLength = 512
	cursorSumLength = 8
)

// cursorPayload is what a cursor carries.
type cursorPayload struct {
	V  int        `json:"v"`
	B  string     `json:"b"`  // binding: hash of the list, caller and filters
	N  int        `json:"n"`  // the page of the walk it leads to (meta.current_page)
	At store.Seek `json:"at"` // the last row seen
}

// pagingParams are the query parameters that move through a list rather
// than choose it: they are left out of a cursor's binding.
var pagingParams = []string{"page", "per_page", "cursor"}

// Resolve reads the cursor, if any: its position, and whether it belongs
// to this list as the request filters it. An input type with a Resolve of
// its own calls this one (Huma then does not look into embedded fields).
func (p *PageParams) Resolve(ctx huma.Context) []error {
	u := ctx.URL()
	p.url = &u
	p.binding = cursorBinding(ctx)
	if p.Cursor == "" {
		return nil
	}
	refuse := func(msg string) []error {
		return []error{&huma.ErrorDetail{Location: "query.cursor", Value: p.Cursor, Message: msg}}
	}
	if p.Page > 1 {
		return refuse("a cursor continues a walk by itself: send it without page (per_page may change)")
	}
	c, ok := decodeCursor(p.Cursor)
	if !ok {
		return refuse("not a cursor this service gave: pass meta.next_cursor unchanged")
	}
	if c.B != p.binding {
		return refuse("the cursor belongs to another list or other filters: repeat the request that gave it, changing only cursor (and per_page)")
	}
	p.after, p.n = &c.At, c.N
	return nil
}

// paging is the page the parameters ask for.
func (p *PageParams) paging() store.Paging {
	return store.Paging{Page: p.Page, PerPage: p.PerPage, After: p.after}
}

// cursorBinding hashes what chooses the list: the operation, the caller's
// company and environment, the path parameters and every declared query
// parameter but paging — whatever filters the operation has now or gains
// later, without a list naming them.
func cursorBinding(ctx huma.Context) string {
	op := ctx.Operation()
	var parts []string
	u := ctx.URL()
	query := u.Query()
	for _, prm := range op.Parameters {
		switch {
		case prm.In == "path":
			parts = append(parts, "path:"+prm.Name+"="+ctx.Param(prm.Name))
		case prm.In == "query" && !slices.Contains(pagingParams, prm.Name):
			// A parameter may come as name, or as name[key] (deepObject).
			for k, vs := range query {
				if k == prm.Name || strings.HasPrefix(k, prm.Name+"[") {
					parts = append(parts, "query:"+k+"="+strings.Join(vs, "\x1f"))
				}
			}
		}
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", op.OperationID)
	if c := request.Principal(ctx.Context()); c != nil {
		fmt.Fprintf(h, "%d\x00%t\x00", c.CompanyID, c.IsTest())
	}
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

func cursorSum(payload []byte) []byte {
	s := sha256.Sum256(append([]byte("ticketsales cursor\x00"), payload...))
	return s[:cursorSumLength]
}

func encodeCursor(c cursorPayload) string {
	c.V = cursorVersion
	payload, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("encode cursor: %v", err)) // plain values: cannot fail
	}
	return base64.RawURLEncoding.EncodeToString(append(cursorSum(payload), payload...))
}

func decodeCursor(s string) (cursorPayload, bool) {
	var c cursorPayload
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) <= cursorSumLength {
		return c, false
	}
	sum, payload := raw[:cursorSumLength], raw[cursorSumLength:]
	if !bytes.Equal(sum, cursorSum(payload)) {
		return c, false
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.V != cursorVersion || c.N < 2 || !positionStorable(c.At) {
		return c, false
	}
	return c, true
}

// positionStorable tells whether a position could be a row's: anyone can
// seal a cursor (the checksum is no signature), and a value no column can
// hold, a NUL in a text or a time before year 1 (Postgres has no year 0),
// would fail the query rather than find nothing.
func positionStorable(at store.Seek) bool {
	return !strings.ContainsRune(at.Text, 0) && at.Time.UTC().Year() >= 1
}

// nextPage is where the page after items starts, if there may be one: its
// cursor and the Link header that points to it. Without a cursor the total
// tells; with one, a full page may have more after it (rows are only
// counted as a whole, not after a position).
func nextPage[T any](items []T, p *PageParams, total int, key func(T) store.Seek) (cursor, link string) {
	if len(items) == 0 || key == nil {
		return "", ""
	}
	current := p.Page
	more := p.Page*p.PerPage < total
	if p.after != nil {
		current = p.n
		more = len(items) >= p.PerPage
	}
	if !more {
		return "", ""
	}
	cursor = encodeCursor(cursorPayload{B: p.binding, N: current + 1, At: key(items[len(items)-1])})
	if p.url == nil {
		return cursor, ""
	}
	u := url.URL{Path: p.url.Path}
	q := p.url.Query()
	q.Del("page")
	q.Set("cursor", cursor)
	u.RawQuery = q.Encode()
	return cursor, "<" + u.String() + `>; rel="next"`
}

// currentPage is meta.current_page: with a cursor, the page of the walk.
func (p *PageParams) currentPage() int {
	if p.after != nil {
		return p.n
	}
	return p.Page
}

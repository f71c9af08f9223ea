package api_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEveryOperationRejectsBadInput sends every operation of the served
// OpenAPI document (and the hidden gateway callback) bad input — odd path
// ids, malformed JSON, wrong types for each body property, unknown fields,
// NUL characters in strings, a body over the size limit, garbage query and
// header parameters — with a valid key. None may fail with a 5xx, and every
// error must be a problem (application/problem+json with code and
// request_id).
func TestEveryOperationRejectsBadInput(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	// Real ids too, so that bad input also meets existing resources.
	hold := func(seat string) string {
		t.Helper()
		var r reservationBody
		res := f.reserve(t, f.keyA, seat)
		if res.Status != http.StatusCreated {
			t.Fatalf("reserve %s: %d %s", seat, res.Status, res.Body)
		}
		res.Decode(t, &r)
		return r.Data.ID
	}
	paid := func(seat string) string { return strconv.FormatInt(f.paidOrder(t, f.keyA, seat), 10) }
	ids := sweepIDs{event: strconv.FormatInt(f.ids["swan-lake"], 10), reservation: hold("parterre-2-25"), order: paid("parterre-2-26")}

	res := f.Get(t, "/openapi.json", "")
	if res.Status != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %s", res.Status, res.Body)
	}
	var doc oaDoc
	res.Decode(t, &doc)

	ops := doc.operations()
	// The gateway's callback is hidden from the document but is an API
	// operation all the same (the public HTML pages are not).
	ops = append(ops, oaOperation{method: http.MethodPost, path: "/gateway/callback", id: "gateway-callback (hidden)",
		headers: []string{"X-Gateway-Signature: not-a-signature"}})
	if len(ops) < 20 {
		t.Fatalf("the document lists only %d operations", len(ops))
	}

	var reqs []badRequest
	for _, op := range ops {
		reqs = append(reqs, op.badRequests(&doc, ids)...)
	}
	// A NUL in a string once got past validation and failed the SQL with a
	// 500 — for a refund, after the refund had started. Each must be
	// refused up front. (Resources of their own: the sweep releases and
	// refunds the ones above.)
	customer := `{"email": "anna@example.com", "first_name": "Anna\u0000", "last_name": "Pavlova", "phone": "+7 999 123-45-67"}`
	reqs = append(reqs,
		badRequest{op: "create-order", kind: "NUL in customer", method: http.MethodPost, path: "/v1/orders", want: 422,
			body: []byte(fmt.Sprintf(`{"event_id": %s, "reservation_id": %q, "customer": %s, "payment": "external"}`, ids.event, hold("parterre-2-27"), customer))},
		badRequest{op: "create-order", kind: "NUL in reservation_id", method: http.MethodPost, path: "/v1/orders", want: 422,
			body: []byte(fmt.Sprintf(`{"event_id": %s, "reservation_id": "rsv_\u0000", "customer": %s, "payment": "external"}`, ids.event, customer))},
		badRequest{op: "refund-order", kind: "NUL in reason", method: http.MethodPost, path: "/v1/orders/" + paid("parterre-2-28") + "/refund", want: 422,
			body: []byte(`{"reason": "changed plans\u0000"}`)},
		badRequest{op: "aggregator-confirm", kind: "NUL in name", method: http.MethodPost, path: "/aggregator/v1/orders/" + hold("parterre-2-29") + "/confirm", want: 422,
			body: []byte(`{"customer": {"email": "anna@example.com", "name": "Anna\u0000"}, "paymentId": "p-1"}`)},
		badRequest{op: "get-reservation", kind: "NUL in id", method: http.MethodGet, path: "/v1/reservations/rsv_%00", want: 404},
	)

	// Send them concurrently with a small pool, each with its own
	// Idempotency-Key for POST and PATCH.
	type failure struct{ req, got string }
	var (
		mu       sync.Mutex
		failures []failure
		statuses = map[int]int{}
		sent     atomic.Int64
	)
	client := &http.Client{Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	work := make(chan badRequest)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				status, problemErr := send(client, f.URL, f.keyA, r)
				sent.Add(1)
				mu.Lock()
				statuses[status]++
				if problemErr != "" {
					failures = append(failures, failure{r.String(), problemErr})
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range reqs {
		work <- r
	}
	close(work)
	wg.Wait()

	var byStatus []string
	for s, n := range statuses {
		byStatus = append(byStatus, fmt.Sprintf("%d×%d", s, n))
	}
	sort.Strings(byStatus)
	t.Logf("%d operations, %d requests in %v; statuses: %s", len(ops), sent.Load(),
		time.Since(start).Round(time.Millisecond), strings.Join(byStatus, " "))
	sort.Slice(failures, func(i, j int) bool { return failures[i].req < failures[j].req })
	if len(failures) > 0 {
		t.Errorf("%d of %d requests got a bad answer:", len(failures), sent.Load())
	}
	for i, fl := range failures {
		if i == 40 {
			t.Errorf("… and %d more", len(failures)-i)
			break
		}
		t.Errorf("%s\n\t→ %s", fl.req, fl.got)
	}
}

// badRequest is one request of the sweep.
type badRequest struct {
	op, kind string // operation id; what is bad about the request
	method   string
	path     string // with the query, escaped
	body     []byte
	headers  []string // "K: V"
	want     int      // the status it must get (0: any below 500)
}

// sweepIDs are the path ids the sweep uses: an existing event, a held
// reservation and a paid order.
type sweepIDs struct{ event, reservation, order string }

func (r badRequest) String() string {
	body := string(r.body)
	if len(body) > 120 {
		body = fmt.Sprintf("%.80s… (%d bytes)", body, len(body))
	}
	path := r.path
	if len(path) > 160 {
		path = fmt.Sprintf("%.120s… (%d chars)", path, len(path))
	}
	return fmt.Sprintf("%s [%s] %s %s body=%q", r.op, r.kind, r.method, path, body)
}

// send makes the request and returns its status and, when the response
// breaks the rules, what is wrong with it.
func send(client *http.Client, base, key string, r badRequest) (int, string) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base+r.path, body)
	if err != nil {
		return 0, "build request: " + err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.method == http.MethodPost || r.method == http.MethodPatch {
		req.Header.Set("Idempotency-Key", "robust-"+randomID())
	}
	for _, h := range r.headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "no response: " + err.Error()
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, "read response: " + err.Error()
	}
	got := func(why string) string {
		return fmt.Sprintf("%s: %d %s %.300s", why, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	if res.StatusCode >= 500 {
		return res.StatusCode, got("server error")
	}
	if r.want != 0 && res.StatusCode != r.want {
		return res.StatusCode, got(fmt.Sprintf("want %d", r.want))
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 && res.StatusCode != http.StatusNotModified && res.Header.Get("Location") == "" {
		return res.StatusCode, got("redirect without Location")
	}
	if res.StatusCode < 400 {
		return res.StatusCode, ""
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/problem+json" {
		return res.StatusCode, got("error is not application/problem+json")
	}
	var p problem
	if err := json.Unmarshal(b, &p); err != nil {
		return res.StatusCode, got("problem body is not JSON")
	}
	switch {
	case p.Code == "":
		return res.StatusCode, got("problem without code")
	case p.RequestID == "":
		return res.StatusCode, got("problem without request_id")
	case p.RequestID != res.Header.Get("X-Request-Id"):
		return res.StatusCode, got("problem request_id differs from X-Request-Id " + res.Header.Get("X-Request-Id"))
	case p.Status != res.StatusCode:
		return res.StatusCode, got("problem status differs from the response's")
	}
	return res.StatusCode, ""
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// The parts of the OpenAPI document the sweep reads.
type oaDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]*oaSchema `json:"schemas"`
	} `json:"components"`
}

type oaSchema struct {
	Ref        string               `json:"$ref"`
	Type       any                  `json:"type"` // "string" or ["string", "null"]
	Format     string               `json:"format"`
	Enum       []any                `json:"enum"`
	Minimum    *float64             `json:"minimum"`
	MinLength  *int                 `json:"minLength"`
	Items      *oaSchema            `json:"items"`
	Properties map[string]*oaSchema `json:"properties"`
	Required   []string             `json:"required"`
}

type oaParam struct {
	Name   string    `json:"name"`
	In     string    `json:"in"`
	Schema *oaSchema `json:"schema"`
}

type oaOperation struct {
	method, path, id string
	params           []oaParam
	body             *oaSchema // nil: the operation takes no JSON body
	headers          []string
}

func (d *oaDoc) operations() []oaOperation {
	var ops []oaOperation
	for path, item := range d.Paths {
		if strings.HasPrefix(path, "/o/") || strings.HasPrefix(path, "/pay/") {
			continue // the buyer's HTML pages, documented but not part of the JSON API
		}
		for method, raw := range item {
			switch strings.ToUpper(method) {
			case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			default:
				continue // parameters, summary, …
			}
			var o struct {
				OperationID string    `json:"operationId"`
				Parameters  []oaParam `json:"parameters"`
				RequestBody *struct {
					Content map[string]struct {
						Schema *oaSchema `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &o); err != nil {
				panic(fmt.Sprintf("%s %s: %v", method, path, err))
			}
			op := oaOperation{method: strings.ToUpper(method), path: path, id: o.OperationID, params: o.Parameters}
			if o.RequestBody != nil {
				op.body = d.resolve(o.RequestBody.Content["application/json"].Schema)
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].path+ops[i].method < ops[j].path+ops[j].method })
	return ops
}

func (d *oaDoc) resolve(s *oaSchema) *oaSchema {
	for s != nil && s.Ref != "" {
		s = d.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}

// types lists a schema's types without "null".
func (s *oaSchema) types() []string {
	var out []string
	switch t := s.Type.(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, v := range t {
			if v, _ := v.(string); v != "" && v != "null" {
				out = append(out, v)
			}
		}
	}
	return out
}

func (s *oaSchema) is(typ string) bool {
	for _, t := range s.types() {
		if t == typ {
			return true
		}
	}
	return false
}

// sample is a plausible value for the schema, so that a body with one bad
// property is otherwise well-formed.
func (d *oaDoc) sample(s *oaSchema, depth int) any {
	s = d.resolve(s)
	switch {
	case s == nil || depth > 4:
		return nil
	case len(s.Enum) > 0:
		return s.Enum[0]
	case s.is("object") || s.Properties != nil:
		m := map[string]any{}
		for name, p := range s.Properties {
			m[name] = d.sample(p, depth+1)
		}
		return m
	case s.is("array"):
		return []any{d.sample(s.Items, depth+1)}
	case s.is("integer"), s.is("number"):
		if s.Minimum != nil && *s.Minimum > 1 {
			return *s.Minimum
		}
		return 1
	case s.is("boolean"):
		return true
	case s.is("string"):
		switch s.Format {
		case "email":
			return "buyer@example.com"
		case "date-time":
			return time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		case "date":
			return time.Now().Format(time.DateOnly)
		}
		if s.MinLength != nil && *s.MinLength > 1 {
			return strings.Repeat("x", *s.MinLength)
		}
		return "x"
	}
	return nil
}

// wrongValues are values of other types than the schema's.
func (d *oaDoc) wrongValues(s *oaSchema) []any {
	s = d.resolve(s)
	switch {
	case s == nil:
		return []any{[]any{1}, map[string]any{"a": 1}}
	case s.is("integer"), s.is("number"):
		return []any{"not-a-number", map[string]any{"a": 1}, 1.5, nil}
	case s.is("string"):
		return []any{12345, []any{"x"}, nil}
	case s.is("boolean"):
		return []any{"yes", 1, nil}
	case s.is("array"):
		return []any{map[string]any{"a": 1}, "str", []any{[]any{[]any{}}}, nil}
	case s.is("object") || s.Properties != nil:
		return []any{[]any{1}, "str", 42, nil}
	}
	return []any{[]any{1}, map[string]any{"a": 1}}
}

// badRequests lists the sweep's requests for one operation.
func (op oaOperation) badRequests(d *oaDoc, ids sweepIDs) []badRequest {
	// Path variants: a plausible value for every path parameter, then each
	// parameter in turn with odd values and an existing id.
	long := strings.Repeat("x", 300)
	canonical := map[string]string{}
	odd := map[string][]string{}
	for _, p := range op.params {
		if p.In != "path" {
			continue
		}
		if p.Schema != nil && (p.Schema.is("integer") || p.Schema.is("number")) {
			canonical[p.Name] = ids.event
			odd[p.Name] = []string{"0", "-1", "99999999999999999999", "abc", "1.5", ids.order}
		} else {
			canonical[p.Name] = "rsv_nope"
			odd[p.Name] = []string{"../../etc", url.PathEscape("../../etc"), long, "%00", "%E2%82", ids.reservation}
		}
	}
	fill := func(vals map[string]string) string {
		p := op.path
		for k, v := range vals {
			p = strings.ReplaceAll(p, "{"+k+"}", v)
		}
		return p
	}
	paths := []string{fill(canonical)}
	var names []string
	for name := range odd {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range odd[name] {
			vals := map[string]string{}
			for k, c := range canonical {
				vals[k] = c
			}
			vals[name] = v
			paths = append(paths, fill(vals))
		}
	}

	// Bodies: malformed JSON, each top-level property with wrong types,
	// unknown fields, and one over the size limit.
	type body struct {
		kind string
		b    []byte
	}
	bodies := []body{}
	for _, m := range []string{`{`, `[1,2`, `"str"`, `null`, `{"a":}`, `{"a":1}{"b":2}`, "\xff\xfe"} {
		bodies = append(bodies, body{"malformed JSON", []byte(m)})
	}
	base := map[string]any{}
	if op.body != nil {
		if m, ok := d.sample(op.body, 0).(map[string]any); ok {
			base = m
		}
		var props []string
		for name := range op.body.Properties {
			props = append(props, name)
		}
		sort.Strings(props)
		for _, name := range props {
			for _, wrong := range d.wrongValues(op.body.Properties[name]) {
				b := map[string]any{}
				for k, v := range base {
					b[k] = v
				}
				b[name] = wrong
				bodies = append(bodies, body{"wrong type for " + name, mustJSON(b)})
				// The same value alone, with the other properties missing.
				bodies = append(bodies, body{"only " + name + ", wrong type", mustJSON(map[string]any{name: wrong})})
			}
		}
	} else {
		for _, generic := range []string{`{"id": "x", "event_id": "x", "seats": {}, "items": 1}`, `[]`, `1`, `true`} {
			bodies = append(bodies, body{"generic wrong types", []byte(generic)})
		}
	}
	withUnknown := map[string]any{"unexpected_field": 1, "__proto__": map[string]any{"admin": true}}
	for k, v := range base {
		withUnknown[k] = v
	}
	// Every string of an otherwise plausible body with a NUL in it.
	bodies = append(bodies, body{"NUL in strings", mustJSON(withNUL(base))},
		body{"NUL in a key", []byte(`{"a\u0000": 1}`)})
	bodies = append(bodies, body{"unknown fields", mustJSON(withUnknown)},
		body{"deep nesting", []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))})
	big := bytes.Repeat([]byte(" "), 2<<20)
	copy(big, `{"a":"`)
	copy(big[len(big)-2:], `"}`)
	for i := 6; i < len(big)-2; i++ {
		big[i] = 'x'
	}
	bodies = append(bodies, body{"2 MiB body", big})

	var out []badRequest
	for _, p := range paths {
		kind := "path"
		if p != paths[0] {
			kind = "odd path id"
		}
		out = append(out, badRequest{op: op.id, kind: kind + ", no body", method: op.method, path: p, headers: op.headers})
		for _, b := range bodies {
			out = append(out, badRequest{op: op.id, kind: kind + ", " + b.kind, method: op.method, path: p, body: b.b, headers: op.headers})
		}
	}

	// Garbage for every declared query and header parameter, one at a time.
	garbage := []string{"x", "-1", "1e309", "99999999999999999999", "", strings.Repeat("9", 400), strings.Repeat("x", 8000)}
	for _, p := range op.params {
		for _, g := range garbage {
			r := badRequest{op: op.id, method: op.method, path: paths[0], headers: op.headers}
			switch p.In {
			case "query":
				r.kind = "garbage query " + p.Name
				r.path += "?" + url.Values{p.Name: {g}}.Encode()
			case "header":
				r.kind = "garbage header " + p.Name
				r.headers = append(append([]string{}, op.headers...), p.Name+": "+g)
			default:
				continue
			}
			if op.body != nil {
				r.body = mustJSON(base)
			}
			out = append(out, r)
		}
	}
	return out
}

// withNUL copies v with a NUL appended to every string.
func withNUL(v any) any {
	switch v := v.(type) {
	case string:
		return v + "\x00"
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withNUL(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = withNUL(e)
		}
		return out
	}
	return v
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/felixge/httpsnoop"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/store"
)

// withRequest gives every request an id (X-Request-Id, and request_id in
// every body), recovers panics into a bare 500 problem, logs the request and
// queues it for the request log.
//
// Metrics (reg, nil: none) are labelled with the pattern the mux matched,
// which it records on the request.
func withRequest(next http.Handler, log *slog.Logger, rl *requestlog.Writer, reg *metrics.Registry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			// Nothing to read: the server's ReadTimeout (a backstop for
			// bodies, see NewHTTPServer) must not fire on net/http's
			// background read while the handler works, which would cancel
			// the request.
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		ctx, ri := request.Start(r.Context())
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", ri.ID)
		start := time.Now()
		m := httpsnoop.CaptureMetrics(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.ErrorContext(r.Context(), "panic", "request_id", ri.ID, "panic", v)
					writeProblem(w, newProblem(r.Context(), http.StatusInternalServerError, "internal",
						"The service could not complete the request; quote the request_id to support."))
				}
			}()
			next.ServeHTTP(w, r)
		}), w, r)
		// The method is a token (net/http refuses others); the path is the
		// client's, made storable.
		entry := store.RequestLogEntry{RequestID: ri.ID, Method: r.Method, Path: storableText(r.URL.Path), Status: m.Code,
			DurationUS: m.Duration.Microseconds(), CreatedAt: start}
		if p := ri.Principal; p != nil {
			entry.CompanyID, entry.APIKeyID = &p.CompanyID, &p.KeyID
		}
		// Every request is in the request log table already; the process
		// log repeats only server errors unless LOG_LEVEL=debug, so a rush
		// does not spend its CPU formatting lines nobody reads.
		level := slog.LevelDebug
		if m.Code >= 500 {
			level = slog.LevelError
		}
		if log.Enabled(r.Context(), level) {
			attrs := []slog.Attr{slog.String("request_id", ri.ID), slog.String("method", r.Method), slog.String("path", organizer.LogPath(r.URL.Path)),
				slog.Int("status", m.Code), slog.Duration("duration", m.Duration)}
			if p := ri.Principal; p != nil {
				attrs = append(attrs, slog.Int64("company_id", p.CompanyID), slog.Int64("key_id", p.KeyID))
			}
			log.LogAttrs(r.Context(), level, "http request", attrs...)
		}
		if reg != nil {
			pattern := r.Pattern
			if pattern == "" {
				pattern = "unmatched"
			}
			reg.HTTPRequests.WithLabelValues(pattern, r.Method, strconv.Itoa(m.Code)).Inc()
			reg.HTTPDuration.WithLabelValues(pattern, r.Method).Observe(m.Duration.Seconds())
		}
		if rl != nil && (strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, "/aggregator/v1/")) {
			rl.Log(entry)
		}
	})
}

// storableText is s as Postgres text can hold it: NUL and bytes that are
// not UTF-8 (a path such as /v1/%FF) become U+FFFD. Either would make
// Postgres refuse the row, and with it the request log batch it came in.
func storableText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
}

// writeProblem writes a problem outside Huma (routing errors, panics).
func writeProblem(w http.ResponseWriter, p *Problem) {
	for k, vs := range p.headers {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// withRoutingProblems answers unknown paths (404) and wrong methods (405)
// with problem+json instead of the mux's plain text.
func withRoutingProblems(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.IndexByte(r.URL.Path, 0) >= 0 {
			// No route or id holds a NUL (%00), and Postgres text cannot
			// store one: such an id would fail its query with a 500.
			writeProblem(w, newProblem(r.Context(), http.StatusNotFound, "not_found", "No such path; see /docs for the API."))
			return
		}
		_, pattern := mux.Handler(r)
		if pattern == "/cabinet/" {
			// The cabinet answers people with pages, not problems: it
			// bounds and reads its own bodies (an oversized catalog file
			// gets a page saying so) and is not a Huma operation.
			mux.ServeHTTP(w, r)
			return
		}
		if pattern != "" {
			if r.Body != nil && r.Body != http.NoBody {
				body, p := readBody(w, r)
				if p != nil {
					writeProblem(w, p)
					return
				}
				if nulInBody(r, body) {
					p := newProblem(r.Context(), http.StatusUnprocessableEntity, "validation_error", "validation failed")
					p.Errors = []*huma.ErrorDetail{{Location: "body", Message: "strings must not contain the NUL character (\\u0000)"}}
					writeProblem(w, p)
					return
				}
				if p := strictBody(r, body); p != nil {
					writeProblem(w, p)
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
			// Bodiless requests too: Huma's read deadline is set for any
			// operation that declares a body, optional ones included.
			mux.ServeHTTP(bufferedBodyWriter{w}, r)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			// A body no route reads: close rather than wait for it.
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		// The mux knows whether it is a 404 or a 405 (and the Allow header).
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		var p *Problem
		switch rec.Code {
		case http.StatusMethodNotAllowed:
			p = newProblem(r.Context(), rec.Code, "", "The method is not allowed for this path.")
			p.withHeader("Allow", rec.Header().Get("Allow"))
		default:
			// 404, or the mux's redirect of an unclean path (/a/../b,
			// //b) that leads to no route either: a 404 all the same.
			p = newProblem(r.Context(), http.StatusNotFound, "", "No such path; see /docs for the API.")
		}
		writeProblem(w, p)
	})
}

// bodyReadTimeout bounds reading a request body (Huma's default).
const bodyReadTimeout = 5 * time.Second

// readBody reads the whole request body once, up to the API's limit, under
// a read deadline that it clears afterwards: every later reader (the NUL
// check, idempotency, the operation) works on the bytes in memory. An
// oversized body is refused here, before any work is done for it.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Problem) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		// The connection is closed after the answer, and its deadline
		// stays passed: net/http would otherwise read the rest of the
		// body for the next request on the connection — waiting, with no
		// deadline, for bytes the client may never send — first before
		// the 408 left, then before the connection closed.
		w.Header().Set("Connection", "close")
		return nil, newProblem(r.Context(), http.StatusRequestTimeout, "", "The request body did not arrive in time.")
	}
	if err != nil || len(body) > maxBodyBytes {
		// The rest is not read either: closed, as a 408 is, and the
		// deadline kept, so net/http reads no more of it than it can
		// within the 5 s.
		w.Header().Set("Connection", "close")
		if err != nil {
			return nil, newProblem(r.Context(), http.StatusBadRequest, "malformed_request", "The request body could not be read.")
		}
		return nil, newProblem(r.Context(), http.StatusRequestEntityTooLarge, "",
			fmt.Sprintf("The request body is larger than %d bytes.", maxBodyBytes))
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, nil
}

// bufferedBodyWriter is the ResponseWriter of every routed request, whose
// body is in memory already or which has none. It keeps read deadlines off
// the connection: Huma sets one before it reads a body (also an optional
// one that is absent, as in a full refund) and never clears it, but by then
// net/http's background read (started when the body reached EOF, or at once
// without a body) is waiting on the connection, and when that deadline
// passed it cancelled the request — a confirm waiting on its workflow or a
// refund on its gateway for more than 5 s — and the context of every later
// request on that keep-alive connection.
type bufferedBodyWriter struct{ http.ResponseWriter }

func (bufferedBodyWriter) SetReadDeadline(time.Time) error { return nil }

func (w bufferedBodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// nulInBody reports whether the request's JSON body has a string (or key)
// holding U+0000: no field accepts one and Postgres text cannot store it, so
// it would otherwise fail deep in a handler with a 500 — possibly after a
// side effect.
func nulInBody(r *http.Request, body []byte) bool {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return false
	}
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false // not JSON: the operation reports that
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

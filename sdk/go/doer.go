package ticketsales

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// Defaults of a [Doer]'s zero fields.
const (
	DefaultMaxAttempts = 4
	DefaultMaxWait     = 30 * time.Second
)

// Doer is the HttpRequestDoer [New] puts under the generated client. For
// every request it
//
//   - sends Authorization: Bearer APIKey and a User-Agent naming the SDK;
//   - gives a POST, PUT, PATCH or DELETE without an Idempotency-Key (or
//     with an empty one, as the generated params' zero value sends) a fresh
//     random key, so the service runs it once however often it arrives;
//   - retries, up to MaxAttempts in all, an answer 429 or 503 (the service
//     did nothing), and a 409 with Retry-After to a keyed request (the same
//     key still running); and, for a request safe to repeat (GET, HEAD,
//     OPTIONS, PUT, DELETE, or an operation that takes an Idempotency-Key),
//     an error before any answer (a connection refused or lost);
//   - waits before a retry what Retry-After says (seconds or an HTTP date),
//     or else a growing backoff with jitter; a Retry-After longer than
//     MaxWait is not waited for: that answer is returned.
//
// Each retry sends the same body and the same Idempotency-Key, so a retry
// never does a thing twice. The request's context bounds it all: cancelled,
// Do returns the context's error at once.
type Doer struct {
	Next        HttpRequestDoer // sends the requests; an *http.Client with DefaultTimeout when nil
	APIKey      string          // New sets it
	MaxAttempts int             // attempts in all; DefaultMaxAttempts when 0, 1 for no retries
	MaxWait     time.Duration   // the longest wait before a retry; DefaultMaxWait when 0

	// sleep waits d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// idempotencyHeader is the header's canonical form, as the generated code
// sets it for the operations that take it.
const idempotencyHeader = "Idempotency-Key"

// Do sends req, retrying as the type's comment says.
func (d *Doer) Do(req *http.Request) (*http.Response, error) {
	next := d.Next
	if next == nil {
		next = defaultHTTPClient
	}
	attempts := d.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	maxWait := d.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	sleep := d.sleep
	if sleep == nil {
		sleep = sleepCtx
	}

	// The caller's request is not changed: each attempt sends a copy.
	req = req.Clone(req.Context())
	if d.APIKey != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+d.APIKey)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", userAgent)
	}
	// An operation that takes a key has the header (maybe empty) from the
	// generated code; a key given to one that does not is ignored by the
	// service, so only the former is safe to repeat after a lost answer.
	_, keyed := req.Header[idempotencyHeader]
	if writes(req.Method) && req.Header.Get(idempotencyHeader) == "" {
		req.Header.Set(idempotencyHeader, newKey())
	}
	replayable := keyed || idempotent(req.Method)
	if err := bufferBody(req); err != nil {
		return nil, err
	}

	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		if req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, fmt.Errorf("ticketsales: replay the request body: %w", err)
			}
			req.Body = body
		}
		res, err := next.Do(req)
		last := attempt >= attempts
		var wait time.Duration
		switch {
		case err != nil:
			if last || !replayable || ctx.Err() != nil {
				return nil, err
			}
			wait = backoff(attempt)
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable ||
			(res.StatusCode == http.StatusConflict && keyed && res.Header.Get("Retry-After") != ""):
			if last {
				return res, nil
			}
			var ok bool
			if wait, ok = retryAfter(res.Header.Get("Retry-After"), time.Now()); !ok {
				wait = backoff(attempt)
			}
			if wait > maxWait {
				return res, nil // the caller decides about a long wait
			}
			// The answer is dropped: read it out so the connection is reused.
			_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
		default:
			return res, nil
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// writes: the methods that change something, which get a key.
func writes(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// idempotent: the methods HTTP defines as safe to repeat.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// newKey is a fresh Idempotency-Key: 26 random base32 characters (130 bits).
func newKey() string { return rand.Text() }

// bufferBody makes req's body replayable: the generated code's bodies are
// (bytes readers), another caller's may not be.
func bufferBody(req *http.Request) error {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return fmt.Errorf("ticketsales: read the request body: %w", err)
	}
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	return nil
}

// retryAfter reads a Retry-After value, delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// backoff is the wait before retry n when the service named none: 0.5 s,
// 1 s, 2 s, … up to 8 s, each with up to a fifth more at random so clients
// that failed together do not come back together.
func backoff(attempt int) time.Duration {
	d := min(500*time.Millisecond<<(attempt-1), 8*time.Second)
	return d + time.Duration(mrand.Int64N(int64(d/5)+1))
}

// sleepCtx waits d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

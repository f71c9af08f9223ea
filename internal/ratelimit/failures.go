package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
)

// Budget is a budget of failed attempts per client: a token bucket per
// client that only failures drain, so a client that has used its budget is
// refused before any work is done for it. Failures keeps it in this
// process's memory; Shared.Budget in Redis, one budget for every instance.
//
// Parallel attempts must not all pass a check that none of them has failed
// yet: Take spends a failure before the work (the password check) starts,
// and Return gives it back when the attempt turns out not to have failed.
type Budget interface {
	// Blocked reports whether the client has no failure left and, if so,
	// how long until it has one.
	Blocked(ctx context.Context, client string) (retryAfter time.Duration, blocked bool)
	// Take spends one failure of the client before the attempt is judged,
	// in one step with the check that one is left: of parallel attempts
	// only as many as the budget allows get through. When none is left it
	// returns false and how long until one is.
	Take(ctx context.Context, client string) (retryAfter time.Duration, ok bool)
	// Return gives back a failure Take spent, for an attempt that
	// succeeded (never above the burst).
	Return(ctx context.Context, client string)
	// Fail records a failure of the client (Take without the check).
	Fail(ctx context.Context, client string)
}

// maxFailureClients bounds the clients Failures remembers; past it the
// least recently failing one is forgotten.
const maxFailureClients = 100_000

// Failures is a Budget in this process's memory. A bucket is forgotten once
// it would be full again, so memory stays bounded by the clients failing
// right now (and by maxFailureClients).
type Failures struct {
	limit   Limit
	mu      sync.Mutex // guards buckets and every bucket's fields
	buckets *expirable.LRU[string, *bucket]
	now     func() time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewFailures allows each client l.Burst failures at once and l.Rate per
// second after that.
func NewFailures(l Limit) *Failures {
	full := max(time.Duration(float64(l.Burst)/l.Rate*float64(time.Second)), time.Second)
	return &Failures{limit: l, buckets: expirable.NewLRU[string, *bucket](maxFailureClients, nil, full), now: time.Now}
}

// tokensAt is the bucket's level at now (f.mu held).
func (f *Failures) tokensAt(b *bucket, now time.Time) float64 {
	if d := now.Sub(b.at); d > 0 {
		return min(float64(f.limit.Burst), b.tokens+d.Seconds()*f.limit.Rate)
	}
	return b.tokens
}

func (f *Failures) wait(tokens float64) time.Duration {
	return time.Duration((1 - tokens) / f.limit.Rate * float64(time.Second))
}

func (f *Failures) Blocked(_ context.Context, client string) (retryAfter time.Duration, blocked bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buckets.Peek(client)
	if !ok {
		return 0, false
	}
	if tokens := f.tokensAt(b, f.now()); tokens < 1 {
		return f.wait(tokens), true
	}
	return 0, false
}

func (f *Failures) Take(_ context.Context, client string) (retryAfter time.Duration, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b, found := f.buckets.Peek(client)
	if !found {
		b = &bucket{tokens: float64(f.limit.Burst), at: now}
	}
	tokens := f.tokensAt(b, now)
	if tokens < 1 {
		return f.wait(tokens), false
	}
	b.tokens, b.at = tokens-1, now
	// Adding again restarts the entry's expiry: it lives until the bucket
	// would be full again after this failure.
	f.buckets.Add(client, b)
	return 0, true
}

func (f *Failures) Return(_ context.Context, client string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.buckets.Peek(client)
	if !ok {
		return
	}
	now := f.now()
	b.tokens, b.at = min(float64(f.limit.Burst), f.tokensAt(b, now)+1), now
}

func (f *Failures) Fail(_ context.Context, client string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	b, ok := f.buckets.Peek(client)
	if !ok {
		b = &bucket{tokens: float64(f.limit.Burst), at: now}
	}
	b.tokens, b.at = max(0, f.tokensAt(b, now)-1), now
	f.buckets.Add(client, b)
}

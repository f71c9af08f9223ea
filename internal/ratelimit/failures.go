package ratelimit

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/time/rate"
)

// maxFailureClients bounds the clients Failures remembers; past it the
// least recently failing one is forgotten.
const maxFailureClients = 100_000

// Failures counts failed attempts (authentications) per client in this
// process: a token bucket per client that only failures drain, so a client
// that has used its budget is refused before any work is done for it. A
// bucket is forgotten once it would be full again, so memory stays bounded
// by the clients failing right now (and by maxFailureClients).
type Failures struct {
	limit   Limit
	mu      sync.Mutex // makes a client's get-or-create one step
	buckets *expirable.LRU[string, *rate.Limiter]
	now     func() time.Time
}

// NewFailures allows each client l.Burst failures at once and l.Rate per
// second after that.
func NewFailures(l Limit) *Failures {
	full := max(time.Duration(float64(l.Burst)/l.Rate*float64(time.Second)), time.Second)
	return &Failures{limit: l, buckets: expirable.NewLRU[string, *rate.Limiter](maxFailureClients, nil, full), now: time.Now}
}

// Blocked reports whether the client has no failure left and, if so, how
// long until it has one.
func (f *Failures) Blocked(client string) (retryAfter time.Duration, blocked bool) {
	b, ok := f.buckets.Peek(client)
	if !ok {
		return 0, false
	}
	tokens := b.TokensAt(f.now())
	if tokens >= 1 {
		return 0, false
	}
	return time.Duration((1 - tokens) / f.limit.Rate * float64(time.Second)), true
}

// Fail records a failure of the client.
func (f *Failures) Fail(client string) {
	f.mu.Lock()
	b, ok := f.buckets.Peek(client)
	if !ok {
		b = rate.NewLimiter(rate.Limit(f.limit.Rate), f.limit.Burst)
	}
	// Adding again restarts the entry's expiry: it lives until the bucket
	// would be full again after this failure.
	f.buckets.Add(client, b)
	f.mu.Unlock()
	b.AllowN(f.now(), 1)
}

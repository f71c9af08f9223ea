// Package ratelimit limits requests per API key with a token bucket, and
// failed attempts (authentications, sign-ins) per client with budgets: in
// memory for one api instance, or in Redis (GCRA) so several instances
// enforce one budget. It also renders the IETF RateLimit header fields.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Limit is a bucket: Rate tokens per second, at most Burst.
type Limit struct {
	Rate  float64
	Burst int
}

// Window is the time an empty bucket takes to fill, in whole seconds.
func (l Limit) Window() int { return int(math.Ceil(float64(l.Burst) / l.Rate)) }

// Result is the decision on one request.
type Result struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration // until the next request may pass, when denied
	ResetAfter time.Duration // until the bucket is full again
}

// Limiter decides whether a request under key may pass.
type Limiter interface {
	Allow(ctx context.Context, key string, l Limit) (Result, error)
}

// Memory keeps buckets in this process (golang.org/x/time/rate); idle
// buckets are dropped after ten minutes.
type Memory struct {
	mu      sync.Mutex
	buckets *expirable.LRU[string, *rate.Limiter]
	now     func() time.Time
}

// NewMemory returns an in-process limiter.
func NewMemory() *Memory {
	return &Memory{buckets: expirable.NewLRU[string, *rate.Limiter](100_000, nil, 10*time.Minute), now: time.Now}
}

func (m *Memory) Allow(_ context.Context, key string, l Limit) (Result, error) {
	now := m.now()
	m.mu.Lock()
	b, ok := m.buckets.Get(key)
	if !ok || b.Limit() != rate.Limit(l.Rate) || b.Burst() != l.Burst {
		b = rate.NewLimiter(rate.Limit(l.Rate), l.Burst)
		m.buckets.Add(key, b)
	}
	m.mu.Unlock()
	r := b.ReserveN(now, 1)
	res := Result{Allowed: true}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		res = Result{Allowed: false, RetryAfter: d}
	}
	tokens := b.TokensAt(now)
	res.Remaining = max(int(math.Floor(tokens)), 0)
	res.ResetAfter = time.Duration((float64(l.Burst) - tokens) / l.Rate * float64(time.Second))
	return res, nil
}

// Redis keeps buckets in Redis with the GCRA of go-redis/redis_rate, so
// every api instance enforces one limit.
//
// When Redis does not answer (within sharedTimeout), the decision comes
// from this process's memory instead, and Redis is left alone for
// sharedPause, as the failure budgets do: the limits still hold, per
// instance, and an outage costs a few requests a wait, not every one.
type Redis struct {
	limiter    *redis_rate.Limiter
	prefix     string
	onFallback func(err error)
	local      *Memory
	pausedTill atomic.Int64 // unix nanoseconds: Redis is not asked before
}

// RedisOptions shape a Redis limiter.
type RedisOptions struct {
	// Prefix namespaces the keys ("": "ratelimit:"); tests sharing one
	// Redis give each deployment its own.
	Prefix string
	// OnFallback, if set, is told of each decision made in memory (err:
	// the Redis error when a call just failed, nil while Redis is left
	// alone).
	OnFallback func(err error)
}

// NewRedis connects to Redis at url (redis://host:port/db).
func NewRedis(url string, o RedisOptions) (*Redis, error) {
	rdb, err := Connect(url)
	if err != nil {
		return nil, err
	}
	return RedisLimiter(rdb, o), nil
}

// RedisLimiter keeps the buckets in rdb.
func RedisLimiter(rdb *redis.Client, o RedisOptions) *Redis {
	if o.Prefix == "" {
		o.Prefix = "ratelimit:"
	}
	return &Redis{limiter: redis_rate.NewLimiter(rdb), prefix: o.Prefix, onFallback: o.OnFallback, local: NewMemory()}
}

func (r *Redis) Allow(ctx context.Context, key string, l Limit) (Result, error) {
	if time.Now().UnixNano() < r.pausedTill.Load() {
		r.fallback(nil)
		return r.local.Allow(ctx, key, l)
	}
	// redis_rate counts whole requests per period: one request per the
	// rate's interval is exact for any rate (1.5/s, or 90 a minute, would
	// round to 2/s as requests per second).
	lim := redis_rate.Limit{Rate: 1, Burst: l.Burst, Period: time.Duration(float64(time.Second) / l.Rate)}
	rctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	res, err := r.limiter.Allow(rctx, r.prefix+key, lim)
	cancel()
	if err != nil && ctx.Err() == nil {
		r.pausedTill.Store(time.Now().Add(sharedPause).UnixNano())
		r.fallback(fmt.Errorf("rate limit %s in redis: %w", key, err))
		return r.local.Allow(ctx, key, l)
	}
	if err != nil {
		return Result{}, fmt.Errorf("rate limit %s: %w", key, err)
	}
	out := Result{Allowed: res.Allowed > 0, Remaining: res.Remaining, ResetAfter: res.ResetAfter}
	if !out.Allowed {
		out.RetryAfter = res.RetryAfter
	}
	return out, nil
}

func (r *Redis) fallback(err error) {
	if r.onFallback != nil {
		r.onFallback(err)
	}
}

// seconds rounds a wait up to whole seconds, at least 1 when there is any.
func seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// Headers renders the IETF RateLimit fields (draft-ietf-httpapi-ratelimit-
// headers) of a decision: RateLimit-Policy and RateLimit; for a denied
// request, Retry-After equals the RateLimit reset t.
func Headers(l Limit, r Result) (policy, limit, retryAfter string) {
	policy = `"default";q=` + strconv.Itoa(l.Burst) + `;w=` + strconv.Itoa(l.Window())
	t := seconds(r.ResetAfter)
	if !r.Allowed {
		t = max(seconds(r.RetryAfter), 1)
		retryAfter = strconv.Itoa(t)
	}
	limit = `"default";r=` + strconv.Itoa(r.Remaining) + `;t=` + strconv.Itoa(t)
	return policy, limit, retryAfter
}

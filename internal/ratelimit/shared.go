package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Connect opens a Redis client for REDIS_URL (redis://host:port/db). Calls
// honour their context's deadline, so a Redis that stopped answering holds
// a request up at most that long.
func Connect(url string) (*redis.Client, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse REDIS_URL: %w", err)
	}
	opt.ContextTimeoutEnabled = true
	return redis.NewClient(opt), nil
}

// How long a failure budget waits for Redis, and how long after Redis
// failed a call it is left alone (every decision made in memory) before it
// is asked again: an outage costs a few requests a wait, not every one.
const (
	sharedTimeout = time.Second
	sharedPause   = 5 * time.Second
)

// Shared keeps failure budgets in Redis, so the api instances of a
// deployment count a client's failures in one budget: failures on one
// instance refuse the client on the others.
//
// When Redis cannot be reached the service keeps working and attempts do
// not become free: every shared budget also counts this instance's own
// failures in memory (a Failures, updated with each shared decision), and
// while Redis fails its decisions come from there: a client then has one
// budget per instance, as without Redis. OnFallback is told of every
// decision made so (err is the Redis error when a call just failed, nil
// while Redis is left alone after one).
type Shared struct {
	rdb        redis.Scripter
	prefix     string
	onFallback func(budget string, err error)
	pausedTill atomic.Int64 // unix nanoseconds: Redis is not asked before
}

// NewShared keeps budgets in rdb under keys starting with prefix;
// onFallback may be nil.
func NewShared(rdb redis.Scripter, prefix string, onFallback func(budget string, err error)) *Shared {
	if onFallback == nil {
		onFallback = func(string, error) {}
	}
	return &Shared{rdb: rdb, prefix: prefix, onFallback: onFallback}
}

// Budget returns the budget called name (part of its Redis keys) with
// limit l; a nil Shared returns one in this process's memory only.
func (s *Shared) Budget(name string, l Limit) Budget {
	local := NewFailures(l)
	if s == nil {
		return local
	}
	return &sharedBudget{s: s, name: name, burst: l.Burst, interval: 1 / l.Rate, local: local}
}

// failuresScript is the GCRA that go-redis/redis_rate runs for the request
// limits (a bucket is the theoretical arrival time of the next failure, in
// seconds since 2017 on Redis's clock, so every instance shares one clock),
// with the operations a failure budget needs beside "take": a look without
// spending ("peek"), a failure recorded past the check ("fail", never below
// empty) and a failure given back ("return", never above full). A bucket's
// key expires when the bucket would be full again.
var failuresScript = redis.NewScript(`
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local op = ARGV[3]
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + t[2] / 1000000
local tat = tonumber(redis.call("GET", key)) or now
if tat < now then tat = now end
local empty = now + burst * interval
local function keep(v)
  if v <= now then
    redis.call("DEL", key)
  else
    redis.call("SET", key, tostring(v), "PX", math.ceil((v - now) * 1000))
  end
end
local wait = tat + interval - empty
if op == "peek" or op == "take" then
  if wait > 0 then return {0, tostring(wait)} end
  if op == "take" then keep(tat + interval) end
elseif op == "fail" then
  keep(math.min(tat + interval, empty))
elseif op == "return" then
  keep(tat - interval)
end
return {1, "0"}
`)

type sharedBudget struct {
	s        *Shared
	name     string
	burst    int
	interval float64 // seconds per failure regained
	// local counts this instance's failures too: the decisions while
	// Redis cannot be reached, and a refusal without asking Redis when
	// this instance alone has spent the budget.
	local *Failures
}

var errPaused = errors.New("redis failed a moment ago")

// run applies op to the client's bucket in Redis: whether a failure is
// left, and if not how long until one is.
func (b *sharedBudget) run(ctx context.Context, op, client string) (ok bool, wait time.Duration, err error) {
	if time.Now().UnixNano() < b.s.pausedTill.Load() {
		b.s.onFallback(b.name, nil)
		return false, 0, errPaused
	}
	// The bookkeeping must not fail because the client hung up.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedTimeout)
	defer cancel()
	v, err := failuresScript.Run(ctx, b.s.rdb, []string{b.s.prefix + "failures:" + b.name + ":" + client},
		b.burst, strconv.FormatFloat(b.interval, 'g', -1, 64), op).Slice()
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("unexpected answer %v", v)
	}
	if err != nil {
		b.s.pausedTill.Store(time.Now().Add(sharedPause).UnixNano())
		err = fmt.Errorf("failure budget %s in redis: %w", b.name, err)
		b.s.onFallback(b.name, err)
		return false, 0, err
	}
	allowed, _ := v[0].(int64)
	secs, _ := v[1].(string)
	f, _ := strconv.ParseFloat(secs, 64)
	return allowed == 1, time.Duration(f * float64(time.Second)), nil
}

func (b *sharedBudget) Blocked(ctx context.Context, client string) (time.Duration, bool) {
	if wait, blocked := b.local.Blocked(ctx, client); blocked {
		return wait, true
	}
	ok, wait, err := b.run(ctx, "peek", client)
	if err != nil {
		return 0, false // the local budget has a failure left
	}
	return wait, !ok
}

func (b *sharedBudget) Take(ctx context.Context, client string) (time.Duration, bool) {
	if wait, blocked := b.local.Blocked(ctx, client); blocked {
		return wait, false
	}
	ok, wait, err := b.run(ctx, "take", client)
	if err != nil {
		return b.local.Take(ctx, client)
	}
	if ok {
		b.local.Fail(ctx, client)
	}
	return wait, ok
}

func (b *sharedBudget) Return(ctx context.Context, client string) {
	b.local.Return(ctx, client)
	_, _, _ = b.run(ctx, "return", client)
}

func (b *sharedBudget) Fail(ctx context.Context, client string) {
	b.local.Fail(ctx, client)
	_, _, _ = b.run(ctx, "fail", client)
}

package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A rate that is not a whole number of requests per second is kept
// exactly in Redis: 90 a minute (1.5/s) lets the next request through
// after 2/3 s, not after the 1/2 s of 2/s.
func TestRedisKeepsAnyRate(t *testing.T) {
	r, err := NewRedis(redisURL(t), RedisOptions{
		Prefix: fmt.Sprintf("test:ratelimit:%d:", time.Now().UnixNano()), // this test's own keys in a shared Redis
		// Without Redis the memory fallback would decide, and pass, unseen.
		OnFallback: func(err error) {
			t.Errorf("decided in memory, not by Redis (make test starts one; or set REDIS_URL): %v", err)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := Limit{Rate: 1.5, Burst: 1}
	ctx := context.Background()
	if res, err := r.Allow(ctx, "k", l); err != nil || !res.Allowed {
		t.Fatalf("first request: %+v %v (is Redis running? make test starts it)", res, err)
	}
	res, err := r.Allow(ctx, "k", l)
	if err != nil || res.Allowed {
		t.Fatalf("second request at once: %+v %v", res, err)
	}
	if res.RetryAfter <= 600*time.Millisecond || res.RetryAfter > 667*time.Millisecond {
		t.Fatalf("retry after %s at 1.5/s; want 2/3 s", res.RetryAfter)
	}
}

// When Redis does not answer, the request limits are decided in this
// process's memory (still limits, never an error), and Redis is left
// alone for a while instead of being waited on by every request.
func TestRedisDownLimitsInMemory(t *testing.T) {
	var failed, paused int
	r, err := NewRedis("redis://127.0.0.1:1/0", RedisOptions{OnFallback: func(err error) { // nothing listens there
		if err != nil {
			failed++
		} else {
			paused++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	l := Limit{Rate: 0.01, Burst: 2}
	var allowed []bool
	for range 3 {
		res, err := r.Allow(context.Background(), "k", l)
		if err != nil {
			t.Fatalf("a request limit with Redis down: %v", err)
		}
		allowed = append(allowed, res.Allowed)
	}
	if fmt.Sprint(allowed) != "[true true false]" {
		t.Errorf("decisions with Redis down: %v, want the burst of 2 then a refusal", allowed)
	}
	if failed != 1 || paused != 2 {
		t.Errorf("Redis asked %d times (failed) and left alone %d times, want 1 and 2", failed, paused)
	}
}

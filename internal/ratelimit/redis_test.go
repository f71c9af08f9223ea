package ratelimit

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// A rate that is not a whole number of requests per second is kept
// exactly in Redis: 90 a minute (1.5/s) lets the next request through
// after 2/3 s, not after the 1/2 s of 2/s.
func TestRedisKeepsAnyRate(t *testing.T) {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	r, err := NewRedis(url)
	if err != nil {
		t.Fatal(err)
	}
	r.Prefix = fmt.Sprintf("test:ratelimit:%d:", time.Now().UnixNano()) // this test's own keys in a shared Redis
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

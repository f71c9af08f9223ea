package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisURL is REDIS_URL (make test sets it), else the usual local Redis.
// -short (make unit) skips the test.
func redisURL(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Redis")
	}
	if url := os.Getenv("REDIS_URL"); url != "" {
		return url
	}
	return "redis://127.0.0.1:6379/0"
}

// testRedis connects to redisURL; a Redis that does not answer fails the
// test rather than skipping it. It returns the client and a key prefix of
// this test's own.
func testRedis(t *testing.T) (*redis.Client, string) {
	t.Helper()
	url := redisURL(t)
	rdb, err := Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("no Redis at %s (make test starts one; or set REDIS_URL): %v", url, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return rdb, "test:" + hex.EncodeToString(b) + ":"
}

// Two processes' shared budgets over one Redis are one budget: failures
// taken or recorded on either count on both, a failure given back on one
// is back for both, and never above the burst.
func TestSharedBudgetIsOneBudget(t *testing.T) {
	ctx := context.Background()
	rdb, prefix := testRedis(t)
	l := Limit{Rate: 0.05, Burst: 3} // a failure back every 20 s: no refill blurs the count
	a := NewShared(rdb, prefix, nil).Budget("auth", l)
	b := NewShared(rdb, prefix, nil).Budget("auth", l)

	for i, f := range []Budget{a, b} {
		if _, ok := f.Take(ctx, "203.0.113.7"); !ok {
			t.Fatalf("take %d of a burst of 3 refused", i+1)
		}
	}
	b.Fail(ctx, "203.0.113.7")
	wait, blocked := a.Blocked(ctx, "203.0.113.7")
	if !blocked || wait <= 0 || wait > 20*time.Second {
		t.Fatalf("after 3 failures on two processes: blocked %v, retry after %v", blocked, wait)
	}
	if wait, ok := a.Take(ctx, "203.0.113.7"); ok || wait <= 0 || wait > 20*time.Second {
		t.Fatalf("fourth take: ok %v, wait %v", ok, wait)
	}
	if _, blocked := b.Blocked(ctx, "203.0.113.8"); blocked {
		t.Fatal("another client is blocked too")
	}
	b.Return(ctx, "203.0.113.7")
	if _, ok := a.Take(ctx, "203.0.113.7"); !ok {
		t.Fatal("a failure given back on one process is not back on the other")
	}
	other := NewShared(rdb, prefix, nil).Budget("signin", l)
	if _, blocked := other.Blocked(ctx, "203.0.113.7"); blocked {
		t.Fatal("another budget of the same client is blocked")
	}

	// Never above the burst.
	for range 5 {
		a.Return(ctx, "192.0.2.1")
	}
	for i := range 3 {
		if _, ok := b.Take(ctx, "192.0.2.1"); !ok {
			t.Fatalf("take %d after returns refused", i+1)
		}
	}
	if _, ok := b.Take(ctx, "192.0.2.1"); ok {
		t.Fatal("returns raised the bucket above its burst")
	}

	// Parallel takes from many processes get no more than the burst.
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, ok := NewShared(rdb, prefix, nil).Budget("auth", l).Take(ctx, "198.51.100.1"); ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if granted != 3 {
		t.Fatalf("%d of 20 parallel takes granted, the burst is 3", granted)
	}
}

// A shared budget whose Redis cannot be reached decides in memory: the
// client is still refused past the budget (never free), nothing fails, and
// the fallback is reported; after the first failed call Redis is left
// alone for a while.
func TestSharedBudgetWithoutRedis(t *testing.T) {
	ctx := context.Background()
	rdb, err := Connect("redis://127.0.0.1:1/0") // nothing listens on port 1
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var mu sync.Mutex
	var withErr, paused int
	f := NewShared(rdb, "test:", func(budget string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if budget != "auth" {
			t.Errorf("fallback of budget %q", budget)
		}
		if err != nil {
			withErr++
		} else {
			paused++
		}
	}).Budget("auth", Limit{Rate: 0.05, Burst: 3})
	for i := range 3 {
		if _, blocked := f.Blocked(ctx, "203.0.113.7"); blocked {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
		f.Fail(ctx, "203.0.113.7")
	}
	if wait, blocked := f.Blocked(ctx, "203.0.113.7"); !blocked || wait <= 0 {
		t.Fatalf("after 3 failures without Redis: blocked %v, retry after %v", blocked, wait)
	}
	if _, ok := f.Take(ctx, "203.0.113.7"); ok {
		t.Fatal("a take past the budget without Redis")
	}
	if _, ok := f.Take(ctx, "203.0.113.8"); !ok {
		t.Fatal("another client refused without Redis")
	}
	mu.Lock()
	defer mu.Unlock()
	if withErr != 1 || paused == 0 {
		t.Fatalf("fallbacks reported: %d with an error, %d while paused; want 1 and some", withErr, paused)
	}
}

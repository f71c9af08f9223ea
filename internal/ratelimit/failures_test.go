package ratelimit

import (
	"context"
	"testing"
	"time"
)

func TestFailuresPerClient(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	f := NewFailures(Limit{Rate: 1, Burst: 3})
	f.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if _, blocked := f.Blocked(ctx, "a"); blocked {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
		f.Fail(ctx, "a")
	}
	wait, blocked := f.Blocked(ctx, "a")
	if !blocked || wait <= 0 || wait > time.Second {
		t.Fatalf("after 3 failures: blocked %v, retry after %v", blocked, wait)
	}
	if _, blocked := f.Blocked(ctx, "b"); blocked {
		t.Fatal("another client is blocked too")
	}
	now = now.Add(wait)
	if _, blocked := f.Blocked(ctx, "a"); blocked {
		t.Fatalf("still blocked after %v", wait)
	}
}

func TestFailuresTakeAndReturn(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	f := NewFailures(Limit{Rate: 1, Burst: 2})
	f.now = func() time.Time { return now }
	for i := range 2 {
		if _, ok := f.Take(ctx, "a"); !ok {
			t.Fatalf("take %d of a burst of 2 refused", i)
		}
	}
	if wait, ok := f.Take(ctx, "a"); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("third take: ok %v, wait %v", ok, wait)
	}
	f.Return(ctx, "a")
	if _, ok := f.Take(ctx, "a"); !ok {
		t.Fatal("take after a return refused")
	}
	f.Return(ctx, "a")
	f.Return(ctx, "a")
	f.Return(ctx, "a") // never above the burst
	for range 2 {
		if _, ok := f.Take(ctx, "a"); !ok {
			t.Fatal("take after returns refused")
		}
	}
	if _, ok := f.Take(ctx, "a"); ok {
		t.Fatal("a return raised the bucket above its burst")
	}
}

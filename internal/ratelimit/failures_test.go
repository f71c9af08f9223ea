package ratelimit

import (
	"testing"
	"time"
)

func TestFailuresPerClient(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f := NewFailures(Limit{Rate: 1, Burst: 3})
	f.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if _, blocked := f.Blocked("a"); blocked {
			t.Fatalf("blocked after %d failures of a burst of 3", i)
		}
		f.Fail("a")
	}
	wait, blocked := f.Blocked("a")
	if !blocked || wait <= 0 || wait > time.Second {
		t.Fatalf("after 3 failures: blocked %v, retry after %v", blocked, wait)
	}
	if _, blocked := f.Blocked("b"); blocked {
		t.Fatal("another client is blocked too")
	}
	now = now.Add(wait)
	if _, blocked := f.Blocked("a"); blocked {
		t.Fatalf("still blocked after %v", wait)
	}
}

func TestFailuresTakeAndReturn(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	f := NewFailures(Limit{Rate: 1, Burst: 2})
	f.now = func() time.Time { return now }
	for i := range 2 {
		if _, ok := f.Take("a"); !ok {
			t.Fatalf("take %d of a burst of 2 refused", i)
		}
	}
	if wait, ok := f.Take("a"); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("third take: ok %v, wait %v", ok, wait)
	}
	f.Return("a")
	if _, ok := f.Take("a"); !ok {
		t.Fatal("take after a return refused")
	}
	f.Return("a")
	f.Return("a")
	f.Return("a") // never above the burst
	for range 2 {
		if _, ok := f.Take("a"); !ok {
			t.Fatal("take after returns refused")
		}
	}
	if _, ok := f.Take("a"); ok {
		t.Fatal("a return raised the bucket above its burst")
	}
}

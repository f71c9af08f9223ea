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

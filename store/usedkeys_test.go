package store_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestUsedKeysAnswersEachAskerInFewStatements: 300 requests refused at
// once each learn whether their own key was seen (of two API keys, within
// the retention period), and they share far fewer statements than one each.
func TestUsedKeysAnswersEachAskerInFewStatements(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "A")
	_, keyA := s.Key(t, company, apikey.Sandbox)
	_, keyB := s.Key(t, company, apikey.Sandbox)
	// Keys k0..k299: every third used under A, every fifth under B, and
	// k7 under A long ago (past the retention: not used any more).
	used := map[string]bool{}
	for i := range 300 {
		for _, who := range []struct {
			id    int64
			every int
		}{{keyA, 3}, {keyB, 5}} {
			if i%who.every == 0 {
				k := fmt.Sprintf("k%d", i)
				rec := &store.IdempotencyRecord{APIKeyID: who.id, Key: k, Method: "POST", Path: "/v1/reservations", BodyHash: []byte{1}}
				if _, _, err := store.ClaimIdempotencyKey(ctx, s.DB, rec); err != nil {
					t.Fatal(err)
				}
				used[fmt.Sprint(who.id, k)] = true
			}
		}
	}
	if _, err := s.DB.NewInsert().Model(&store.IdempotencyRecord{APIKeyID: keyA, Key: "k7", Method: "POST", Path: "/v1/reservations",
		BodyHash: []byte{1}, CreatedAt: time.Now().Add(-25 * time.Hour)}).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	reads := testenv.WatchQueries(s.DB, "idempotency_keys", nil)
	u := store.NewUsedKeys(s.DB)

	var wg sync.WaitGroup
	var wrong atomic.Int64
	gate := make(chan struct{})
	for i := range 300 {
		for _, id := range []int64{keyA, keyB} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				k := fmt.Sprintf("k%d", i)
				got, err := u.Used(ctx, id, k)
				if err != nil || got != used[fmt.Sprint(id, k)] {
					t.Errorf("key %s of API key %d: used %v (%v), want %v", k, id, got, err, used[fmt.Sprint(id, k)])
					wrong.Add(1)
				}
			}()
		}
	}
	close(gate)
	wg.Wait()
	if n := reads.Count(); n >= 600/4 {
		t.Fatalf("600 questions took %d statements", n)
	} else {
		t.Logf("600 questions took %d statements", n)
	}
	// Keys are the partner's text: any of it reaches Postgres as it is.
	for _, k := range []string{`k"1`, `k\2`, "k,3", "k}{4", "NULL", "k'5", "ключ 6", " "} {
		rec := &store.IdempotencyRecord{APIKeyID: keyA, Key: k, Method: "POST", Path: "/v1/reservations", BodyHash: []byte{1}}
		if _, _, err := store.ClaimIdempotencyKey(ctx, s.DB, rec); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, id := range []int64{keyA, keyB} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got, err := u.Used(ctx, id, k); err != nil || got != (id == keyA) {
					t.Errorf("key %q of API key %d: used %v (%v)", k, id, got, err)
				}
			}()
		}
		wg.Wait()
	}
	// A lone question is answered at once, and a cancelled asker leaves.
	if got, err := u.Used(ctx, keyA, "k3"); err != nil || !got {
		t.Fatalf("lone question: %v %v", got, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := u.Used(cctx, keyA, "k3"); err == nil {
		t.Fatal("a cancelled asker got an answer instead of its context's error")
	}
}

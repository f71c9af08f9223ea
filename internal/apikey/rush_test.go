package apikey_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestRushOnAColdKeyReadsItOnce: an on-sale rush's first requests (or the
// first after the cache's entry lapsed) all carry the same key; they share
// one read of it instead of each queueing for a connection to read it.
func TestRushOnAColdKeyReadsItOnce(t *testing.T) {
	db, co, key, _ := productionKey(t)
	ctx := context.Background()
	unknown, _, _ := apikey.Generate(apikey.Production)
	reads := testenv.WatchQueries(db, "api_keys", nil)
	auth := apikey.NewAuthenticator(db, time.Hour)

	var wg sync.WaitGroup
	var ok, refused, failed atomic.Int64
	gate := make(chan struct{})
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			k := key
			if i%2 == 1 {
				k = unknown
			}
			p, err := auth.Authenticate(ctx, k)
			switch {
			case err == nil && p.CompanyID == co && k == key:
				ok.Add(1)
			case err == apikey.ErrInvalidKey && k == unknown:
				refused.Add(1)
			default:
				failed.Add(1)
			}
		}()
	}
	close(gate)
	wg.Wait()
	if ok.Load() != 100 || refused.Load() != 100 || failed.Load() != 0 {
		t.Fatalf("valid key passed %d of 100, unknown refused %d of 100, %d wrong answers", ok.Load(), refused.Load(), failed.Load())
	}
	if n := reads.Count(); n != 2 {
		t.Fatalf("200 requests with two cold keys read keys %d times, want one read each", n)
	}
}

// TestForgetDuringALookupIsNotUndone: a revocation told to the
// authenticator while a lookup of the key is on its way is not undone by
// that lookup's (older) answer landing in the cache afterwards.
func TestForgetDuringALookupIsNotUndone(t *testing.T) {
	db, co, key, k := productionKey(t)
	ctx := context.Background()
	auth := apikey.NewAuthenticator(db, time.Hour)
	// The lookup reads the key valid, then the key is revoked and the
	// authenticator told so before the lookup's answer is cached.
	var revoked atomic.Bool
	testenv.WatchQueries(db, "api_keys", func(q string) {
		if strings.HasPrefix(strings.TrimSpace(q), "SELECT") && revoked.CompareAndSwap(false, true) {
			if _, err := store.RevokeCompanyAPIKey(ctx, db, co, k.ID); err != nil {
				t.Error(err)
			}
			auth.Forget(k.ID, k.KeyHash)
		}
	})
	if _, err := auth.Authenticate(ctx, key); err != nil {
		t.Fatalf("the lookup that read the key before its revocation: %v", err)
	}
	if _, err := auth.Authenticate(ctx, key); err != apikey.ErrInvalidKey {
		t.Fatalf("after Forget, the key still passes (err %v): the older lookup's answer was cached", err)
	}
}

// productionKey is a fresh database with a company and a production key of
// every scope.
func productionKey(t *testing.T) (*bun.DB, int64, string, *store.APIKey) {
	t.Helper()
	db, _ := testenv.DB(t)
	co, err := store.CreateCompany(context.Background(), db, "A")
	if err != nil {
		t.Fatal(err)
	}
	key, hash, prefix := apikey.Generate(apikey.Production)
	k, err := store.CreateAPIKey(context.Background(), db, co.ID, apikey.Production, "k", hash, prefix, apikey.PartnerScopes, store.DoorLimits{}, store.KeyClaim{})
	if err != nil {
		t.Fatal(err)
	}
	return db, co.ID, key, k
}

// TestForgetDuringACacheHitIsNotUndone: a request answered from the cache
// just before a revocation's Forget must not mark the key "recently valid"
// after it (which would let the revoked key past the failed-auth block of
// its address for a day).
func TestForgetDuringACacheHitIsNotUndone(t *testing.T) {
	db, co, _, _ := productionKey(t)
	ctx := context.Background()
	for i := range 400 {
		key, hash, prefix := apikey.Generate(apikey.Production)
		k, err := store.CreateAPIKey(ctx, db, co, apikey.Production, "k", hash, prefix, apikey.PartnerScopes, store.DoorLimits{}, store.KeyClaim{})
		if err != nil {
			t.Fatal(err)
		}
		auth := apikey.NewAuthenticator(db, time.Hour)
		if _, err := auth.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						_, _ = auth.Authenticate(ctx, key)
					}
				}
			}()
		}
		time.Sleep(time.Millisecond)
		if _, err := store.RevokeCompanyAPIKey(ctx, db, co, k.ID); err != nil {
			t.Fatal(err)
		}
		auth.Forget(k.ID, k.KeyHash)
		close(stop)
		wg.Wait()
		if auth.KnownValid(key) {
			t.Fatalf("round %d: a revoked key is still known valid after Forget", i)
		}
	}
}

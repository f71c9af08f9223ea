package apikey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

// TestForgetEndsACachedKeyAtOnce: a revoked key stays valid from the cache
// until its TTL passes, unless the authenticator is told to forget it (as
// the cabinet does when it revokes a key).
func TestForgetEndsACachedKeyAtOnce(t *testing.T) {
	db, co, key, k := productionKey(t)
	ctx := context.Background()
	auth := apikey.NewAuthenticator(db, time.Hour)
	if _, err := auth.Authenticate(ctx, key); err != nil {
		t.Fatal(err)
	}
	revoked, err := store.RevokeCompanyAPIKey(ctx, db, co, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Authenticate(ctx, key); err != nil {
		t.Fatalf("the cached key before Forget: %v", err)
	}
	auth.Forget(revoked.ID, revoked.KeyHash)
	if _, err := auth.Authenticate(ctx, key); !errors.Is(err, apikey.ErrInvalidKey) {
		t.Fatalf("a revoked key after Forget: %v", err)
	}
	if auth.KnownValid(key) {
		t.Fatal("a revoked key still passes the failed-authentication block")
	}
	// Another company cannot revoke it: 404 as for an unknown key.
	other, _ := store.CreateCompany(ctx, db, "B")
	if _, err := store.RevokeCompanyAPIKey(ctx, db, other.ID, k.ID); !errors.Is(err, errs.NotFound) {
		t.Fatalf("revoke by another company: %v", err)
	}
}

// TestByIDFollowsTheKey: a seat map token's key, looked up by id, is
// cached like a key and ends with it: Forget of the key's hash drops its
// by-id entry too, and an unknown id is ErrInvalidKey.
func TestByIDFollowsTheKey(t *testing.T) {
	db, co, key, k := productionKey(t)
	ctx := context.Background()
	auth := apikey.NewAuthenticator(db, time.Hour)
	p, err := auth.Authenticate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := auth.ByID(ctx, k.ID)
	if err != nil || byID.KeyID != p.KeyID || byID.CompanyID != p.CompanyID || byID.Environment != p.Environment {
		t.Fatalf("by id: %+v %v, want %+v", byID, err, p)
	}
	revoked, err := store.RevokeCompanyAPIKey(ctx, db, co, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := auth.ByID(ctx, k.ID); err != nil {
		t.Fatalf("cached by id before Forget: %v", err)
	}
	auth.Forget(revoked.ID, revoked.KeyHash)
	if _, err := auth.ByID(ctx, k.ID); !errors.Is(err, apikey.ErrInvalidKey) {
		t.Fatalf("a revoked key by id after Forget: %v", err)
	}
	if _, err := auth.ByID(ctx, k.ID+1_000_000); !errors.Is(err, apikey.ErrInvalidKey) {
		t.Fatalf("unknown id: %v", err)
	}
}

// TestRevokeEndsItsSeatMapTokensAtOnce: a key revoked in the cabinet stops
// its seat map tokens at once in this process even when the key itself
// was not in the cache by its hash (its server's requests went to another
// instance, or that entry lapsed before the by-id one): buyers' pages poll
// by id alone.
func TestRevokeEndsItsSeatMapTokensAtOnce(t *testing.T) {
	db, co, _, k := productionKey(t)
	ctx := context.Background()
	auth := apikey.NewAuthenticator(db, time.Hour)
	if _, err := auth.ByID(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	keys := &apikey.Keys{DB: db, Auth: auth}
	if _, err := keys.Revoke(ctx, co, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.ByID(ctx, k.ID); !errors.Is(err, apikey.ErrInvalidKey) {
		t.Fatalf("a key revoked here, by id: %v, want ErrInvalidKey at once", err)
	}
}

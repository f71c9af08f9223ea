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
	auth.Forget(revoked.KeyHash)
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

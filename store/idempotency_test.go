package store_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func TestIdempotencyRetention(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	_, keyID := s.Key(t, s.Company(t, "A"), apikey.Sandbox)
	rec := func(key string) *store.IdempotencyRecord {
		return &store.IdempotencyRecord{APIKeyID: keyID, Key: key, Method: "POST", Path: "/v1/reservations", BodyHash: []byte{1}}
	}
	claimed, _, err := store.ClaimIdempotencyKey(ctx, s.DB, rec("old"))
	if err != nil || !claimed {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	if err := store.CompleteIdempotencyKey(ctx, s.DB, keyID, "old", 201, http.Header{"Location": {"/x"}}, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	// Within 24 hours the record answers repeats.
	claimed, existing, err := store.ClaimIdempotencyKey(ctx, s.DB, rec("old"))
	if err != nil || claimed || existing == nil || *existing.Status != 201 || existing.Headers.Get("Location") != "/x" {
		t.Fatalf("repeat within retention: %v %+v %v", claimed, existing, err)
	}
	// Past 24 hours it is gone: cleanup deletes it, and a claim takes over a
	// record cleanup has not reached yet.
	if _, err := s.DB.ExecContext(ctx, "UPDATE idempotency_keys SET created_at = now() - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	claimed, _, err = store.ClaimIdempotencyKey(ctx, s.DB, rec("old"))
	if err != nil || !claimed {
		t.Fatalf("claim of an expired key: %v %v", claimed, err)
	}
	if _, err := s.DB.ExecContext(ctx, "UPDATE idempotency_keys SET created_at = now() - interval '25 hours'"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.ClaimIdempotencyKey(ctx, s.DB, rec("fresh")); err != nil {
		t.Fatal(err)
	}
	n, err := store.DeleteExpiredIdempotencyKeys(ctx, s.DB, time.Now())
	if err != nil || n != 1 {
		t.Fatalf("cleanup deleted %d (%v), want the one expired record", n, err)
	}
	var left []string
	if err := s.DB.NewRaw("SELECT key FROM idempotency_keys").Scan(ctx, &left); err != nil || len(left) != 1 || left[0] != "fresh" {
		t.Fatalf("left after cleanup: %v %v", left, err)
	}
}

func TestRequestLogRetention(t *testing.T) {
	ctx := context.Background()
	db, _ := testenv.DB(t)
	now := time.Now()
	entries := []store.RequestLogEntry{
		{RequestID: "old", Method: "GET", Path: "/v1/events", Status: 200, CreatedAt: now.Add(-31 * 24 * time.Hour)},
		{RequestID: "new", Method: "GET", Path: "/v1/events", Status: 200, CreatedAt: now.Add(-29 * 24 * time.Hour)},
	}
	if err := store.InsertRequestLog(ctx, db, entries); err != nil {
		t.Fatal(err)
	}
	n, err := store.DeleteRequestLogBefore(ctx, db, now.Add(-30*24*time.Hour))
	left, _ := store.ListRequestLog(ctx, db, store.RequestLogFilter{})
	if err != nil || n != 1 || len(left) != 1 || left[0].RequestID != "new" {
		t.Fatalf("retention deleted %d (%v), left %+v", n, err, left)
	}
}

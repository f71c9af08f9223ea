package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func (f *fixture) countReservations(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM reservations").Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIdempotentReplay(t *testing.T) {
	f := newFixture(t)
	body := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON("parterre-1-7"))
	first := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, body, "Idempotency-Key: order-42")
	if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %v", first.Status, first.Header)
	}
	again := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, body, "Idempotency-Key: order-42")
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) ||
		again.Header.Get("Location") != first.Header.Get("Location") {
		t.Fatalf("replay: %d %v %s", again.Status, again.Header, again.Body)
	}
	if n := f.countReservations(t); n != 1 {
		t.Fatalf("replay created a reservation: %d", n)
	}
	// The replay names the first request in its header as in its body.
	var firstBody struct {
		RequestID string `json:"request_id"`
	}
	first.Decode(t, &firstBody)
	if id := first.Header.Get("X-Request-Id"); id == "" || id != firstBody.RequestID || again.Header.Get("X-Request-Id") != id {
		t.Fatalf("X-Request-Id first %q (body %q), replay %q", id, firstBody.RequestID, again.Header.Get("X-Request-Id"))
	}
	// The same key with another body, or on another path, is refused.
	other := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON("parterre-1-8"))
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, other, "Idempotency-Key: order-42"),
		http.StatusUnprocessableEntity, "idempotency_key_reused")
	if n := f.countReservations(t); n != 1 {
		t.Fatalf("a reused key created a reservation: %d", n)
	}
	// Keys are scoped per API key: another key may use the same value.
	key2, _ := f.Key(t, f.companyA, apikey.Sandbox)
	if res := f.Do(t, http.MethodPost, "/v1/reservations", key2, other, "Idempotency-Key: order-42"); res.Status != 201 ||
		res.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("same key value, other API key: %d %v", res.Status, res.Header)
	}
	// A key that is not UTF-8 (Latin-1 "résa-1") is refused before anything
	// runs: Postgres would keep it altered, so its repeat could not find
	// its first answer, and "r\xe9sa-1" and "r\xe8sa-1" would be one key.
	latin1 := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON("parterre-1-9")), "Idempotency-Key: r\xe9sa-1")
	expectProblem(t, latin1, http.StatusBadRequest, "idempotency_key_required")
	if n := f.countReservations(t); n != 2 {
		t.Fatalf("a refused key created a reservation: %d, want the 2 before it", n)
	}
	// A 4xx answer is stored and replayed too: the same refused request is refused the same way.
	taken := f.Do(t, http.MethodPost, "/v1/reservations", key2, body, "Idempotency-Key: retry-me")
	expectProblem(t, taken, http.StatusConflict, "seat_taken")
	replayed := f.Do(t, http.MethodPost, "/v1/reservations", key2, body, "Idempotency-Key: retry-me")
	if replayed.Status != 409 || replayed.Header.Get("Idempotent-Replayed") != "true" || replayed.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("replayed 409: %d %v", replayed.Status, replayed.Header)
	}
	if replayed.Header.Get("X-Request-Id") != taken.Header.Get("X-Request-Id") {
		t.Fatalf("replayed problem's X-Request-Id %q, first %q", replayed.Header.Get("X-Request-Id"), taken.Header.Get("X-Request-Id"))
	}
}

func TestTenConcurrentRequestsWithOneKey(t *testing.T) {
	f := newFixture(t)
	body := fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON("parterre-2-9", "parterre-2-10"))
	var wg sync.WaitGroup
	results := make([]*testenv.Response, 10)
	start := make(chan struct{})
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, body, "Idempotency-Key: same-for-all")
		}()
	}
	close(start)
	wg.Wait()
	created := ""
	for _, res := range results {
		switch res.Status {
		case http.StatusCreated:
			var r reservationBody
			res.Decode(t, &r)
			if created != "" && r.Data.ID != created {
				t.Fatalf("two reservations for one key: %s and %s", created, r.Data.ID)
			}
			created = r.Data.ID
		case http.StatusConflict:
			expectProblem(t, res, http.StatusConflict, "idempotency_request_in_progress")
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("in-progress without Retry-After")
			}
		default:
			t.Fatalf("unexpected %d %s", res.Status, res.Body)
		}
	}
	if n := f.countReservations(t); n != 1 || created == "" {
		t.Fatalf("want exactly one reservation, got %d", n)
	}
}

// A hold whose workflow cannot be started before answering (the starter is
// full, or absent) is given back: 503, nothing held, nothing stored.
func TestFailedWorkflowStartUndoesTheHold(t *testing.T) {
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1") // no Temporal there
	s := testenv.NewStack(t)
	s.Holds.UseStarter(nil) // the path a full starter takes
	f := &fixture{Stack: s, ids: map[string]int64{}}
	f.companyA = s.Company(t, "A")
	s.Import(t, f.companyA, catalogfile.Demo(time.Now()))
	f.keyA, _ = s.Key(t, f.companyA, apikey.Sandbox)
	var swan int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake'").Scan(context.Background(), &swan); err != nil {
		t.Fatal(err)
	}
	f.ids["swan-lake"] = swan

	res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-1-1")), "Idempotency-Key: k1")
	expectProblem(t, res, http.StatusServiceUnavailable, "unavailable")
	// A partner's client backs off as told.
	if ra := res.Header.Get("Retry-After"); ra == "" {
		t.Fatalf("503 without Retry-After: %v", res.Header)
	}
	var state string
	if err := s.DB.NewRaw("SELECT state FROM event_seats WHERE event_id = ? AND seat_id = 'parterre-1-1'", swan).Scan(context.Background(), &state); err != nil {
		t.Fatal(err)
	}
	if state != "free" {
		t.Fatalf("seat after a failed workflow start is %q", state)
	}
	var status states.ReservationStatus
	_ = s.DB.NewRaw("SELECT status FROM reservations").Scan(context.Background(), &status)
	if status != states.ReservationReleased {
		t.Fatalf("reservation after a failed start: %q", status)
	}
	// A 5xx is not stored: the retry with the same key runs again.
	var n int
	_ = s.DB.NewRaw("SELECT count(*) FROM idempotency_keys").Scan(context.Background(), &n)
	if n != 0 {
		t.Fatalf("a 5xx response was stored for replay")
	}
}

// TestIdempotentReplayComparesJSONValues: a retry that serialises the same
// request again (other whitespace, member order, string escapes) gets the
// first answer; another value, 1.0 for 1 included, is another request. A
// record stored before bodies were compared as JSON (its hash is of the
// bytes) still matches a byte-identical retry.
func TestIdempotentReplayComparesJSONValues(t *testing.T) {
	f := newFixture(t)
	event := f.ids["swan-lake"]
	body := fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre", "seat_id": "parterre-2-5"}], "ttl_minutes": 10}`, event)
	first := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, body, "Idempotency-Key: json-1")
	if first.Status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	for _, again := range []string{
		fmt.Sprintf("{\n  \"ttl_minutes\": 10,\n  \"seats\": [ {\"seat_id\": \"parterre-2-5\", \"zone_id\": \"parterre\"} ],\n  \"event_id\": %d\n}\n", event),
		fmt.Sprintf(`{"seats":[{"zone_id":"\u0070arterre","seat_id":"parterre-2-5"}],"event_id":%d,"ttl_minutes":10}`, event),
	} {
		res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, again, "Idempotency-Key: json-1")
		if res.Status != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" || string(res.Body) != string(first.Body) {
			t.Fatalf("the same JSON value again: %d %v %s", res.Status, res.Header, res.Body)
		}
	}
	for _, other := range []string{
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre", "seat_id": "parterre-2-5"}], "ttl_minutes": 10.0}`, event),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre", "seat_id": "parterre-2-5"}]}`, event),
	} {
		expectProblem(t, f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, other, "Idempotency-Key: json-1"),
			http.StatusUnprocessableEntity, "idempotency_key_reused")
	}
	if n := f.countReservations(t); n != 1 {
		t.Fatalf("reservations: %d, want 1", n)
	}

	// A record from the version before: the hash of the body's bytes
	// alone, no canonical hash.
	old := fmt.Sprintf(`{ "seats": [{"zone_id": "parterre", "seat_id": "parterre-2-6"}], "event_id": %d }`, event)
	before := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, old, "Idempotency-Key: json-old")
	if before.Status != http.StatusCreated {
		t.Fatalf("old: %d %s", before.Status, before.Body)
	}
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE idempotency_keys SET body_hash_canonical = NULL WHERE key = 'json-old' AND body_hash = sha256(convert_to(?, 'UTF8'))", old); err != nil {
		t.Fatal(err)
	}
	res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA, old, "Idempotency-Key: json-old")
	if res.Status != http.StatusCreated || res.Header.Get("Idempotent-Replayed") != "true" || string(res.Body) != string(before.Body) {
		t.Fatalf("byte-identical retry of a record stored as bytes: %d %v %s", res.Status, res.Header, res.Body)
	}
	if n := f.countReservations(t); n != 2 {
		t.Fatalf("reservations: %d, want 2", n)
	}
}

package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// fuzzIdemSeq makes every fuzz call's Idempotency-Key fresh, so each body is
// really processed rather than replayed or refused as a reused key.
var fuzzIdemSeq atomic.Int64

// FuzzReservationRequest posts arbitrary bodies to POST /v1/reservations on a
// real stack (Postgres, the Temporal dev server, a worker) and checks: no 5xx;
// every 4xx is problem+json with code and request_id; every 201 is a
// reservation whose seats are held by it in Postgres. Each hold is released
// again so the demo hall stays free for the next inputs.
func FuzzReservationRequest(f *testing.F) {
	// One stack for the whole target (per fuzzing process): *testing.F is a
	// testing.TB, and the stack lives until the target ends.
	s := testenv.NewStack(f)
	s.StartWorker(f)
	company := s.Company(f, "Fuzz")
	s.Import(f, company, catalogfile.Demo(time.Now()))
	key, _ := s.Key(f, company, apikey.Sandbox)
	ids := map[string]int64{}
	rows, err := s.DB.QueryContext(context.Background(), "SELECT id, slug FROM events WHERE company_id = ?", company)
	if err != nil {
		f.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var slug string
		if err := rows.Scan(&id, &slug); err != nil {
			f.Fatal(err)
		}
		ids[slug] = id
	}
	if err := rows.Close(); err != nil {
		f.Fatal(err)
	}
	swan := ids["swan-lake"]
	if swan == 0 {
		f.Fatalf("no swan-lake event in the demo catalog: %v", ids)
	}

	seat := func(id string) string {
		return fmt.Sprintf(`{"zone_id": %q, "seat_id": %q}`, id[:strings.Index(id, "-")], id)
	}
	seatList := func(ids ...string) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = seat(id)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	row := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("parterre-2-%d", i+1)
		}
		return out
	}
	for _, body := range []string{
		// Valid holds of the demo event.
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatList("parterre-1-5")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 1}`, swan, seatList("parterre-1-1", "balcony-1-6")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 60}`, swan, seatList("balcony-1-1", "balcony-1-2", "balcony-1-3")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatList(row(20)...)),
		fmt.Sprintf(`{"seats": %s, "event_id": %d, "ttl_minutes": 15}`, seatList("parterre-3-30"), swan),
		// Limits: 21 seats, duplicates, no seats, unknown seats and zones.
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatList(row(21)...)),
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatList("parterre-1-1", "parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": []}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatList("parterre-9-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "balcony", "seat_id": "parterre-1-1"}]}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "", "seat_id": ""}]}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre", "seat_id": %q}]}`, swan, strings.Repeat("9", 101)),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "parterre|x", "seat_id": "parterre-1-1\u0000"}]}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 0}`, swan, seatList("parterre-1-2")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 61}`, swan, seatList("parterre-1-2")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "colour": 1}`, swan, seatList("parterre-1-2")),
		// Other events: without a scheme, a draft, one that does not exist.
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, ids["standup"], seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, ids["nutcracker"], seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan+1000, seatList("parterre-1-1")),
		// Wrong types.
		fmt.Sprintf(`{"event_id": "%d", "seats": %s}`, swan, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": {"zone_id": "parterre", "seat_id": "parterre-1-1"}}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": ["parterre-1-1"]}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": 1, "seat_id": true}]}`, swan),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": "15"}`, swan, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d.5, "seats": %s, "ttl_minutes": 1.5}`, swan, seatList("parterre-1-1")),
		`{"event_id": null, "seats": null, "ttl_minutes": null}`,
		// Huge numbers.
		fmt.Sprintf(`{"event_id": 9223372036854775807, "seats": %s}`, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": 9223372036854775808, "seats": %s}`, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": -9223372036854775808, "seats": %s}`, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": 1e400, "seats": %s}`, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 9223372036854775807}`, swan, seatList("parterre-1-1")),
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": -9223372036854775809}`, swan, seatList("parterre-1-1")),
		// Malformed JSON and other shapes.
		fmt.Sprintf(`{"event_id": %d, "seats": [`, swan),
		`{"event_id": 1,}`,
		`{"event_id": 1} {"event_id": 2}`,
		`[]`,
		`null`,
		`"x"`,
		`{}`,
		"",
		"\xff\xfe",
		fmt.Sprintf(`{"event_id": %d, "seats": %s, "event_id": 0}`, swan, seatList("parterre-1-1")),
		fmt.Sprintf(`{"EVENT_ID": %d, "Seats": %s}`, swan, seatList("parterre-1-1")),
	} {
		f.Add(body)
	}

	f.Fuzz(func(t *testing.T, body string) {
		idem := fmt.Sprintf("Idempotency-Key: fuzz-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), fuzzIdemSeq.Add(1))
		res := s.Do(t, http.MethodPost, "/v1/reservations", key, body, idem)
		switch {
		case res.Status >= 500:
			t.Fatalf("POST /v1/reservations %q: %d %s", body, res.Status, res.Body)
		case res.Status >= 400:
			fuzzCheckProblem(t, body, res)
		case res.Status == http.StatusCreated:
			fuzzCheckHeld(t, s, key, body, res)
		default:
			t.Fatalf("POST /v1/reservations %q: unexpected %d %s", body, res.Status, res.Body)
		}
	})
}

func fuzzCheckProblem(t *testing.T, body string, res *testenv.Response) {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("POST %q: %d with Content-Type %q, want application/problem+json: %s", body, res.Status, ct, res.Body)
	}
	var p problem
	if err := json.Unmarshal(res.Body, &p); err != nil {
		t.Fatalf("POST %q: %d problem is not JSON (%v): %s", body, res.Status, err, res.Body)
	}
	if p.Code == "" || p.RequestID == "" || p.RequestID != res.Header.Get("X-Request-Id") || p.Status != res.Status {
		t.Fatalf("POST %q: %d problem lacks code, request_id (= X-Request-Id %q) or status: %s",
			body, res.Status, res.Header.Get("X-Request-Id"), res.Body)
	}
}

// fuzzCheckHeld checks that a 201 is a live reservation whose seats, and only
// those, are held by it in Postgres, then releases it.
func fuzzCheckHeld(t *testing.T, s *testenv.Stack, key, body string, res *testenv.Response) {
	t.Helper()
	var rb reservationBody
	if err := json.Unmarshal(res.Body, &rb); err != nil {
		t.Fatalf("POST %q: 201 body is not a reservation (%v): %s", body, err, res.Body)
	}
	r := rb.Data
	if r.ID == "" || r.Status != "reserved" || len(r.Seats) == 0 || len(r.Seats) > 20 || rb.RequestID == "" {
		t.Fatalf("POST %q: 201 is not a live reservation: %s", body, res.Body)
	}
	var held []struct {
		SeatID string `bun:"seat_id"`
		State  string `bun:"state"`
	}
	if err := s.DB.NewRaw("SELECT seat_id, state FROM event_seats WHERE event_id = ? AND hold_id = ?", r.EventID, r.ID).
		Scan(context.Background(), &held); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, h := range held {
		states[h.SeatID] = h.State
	}
	for _, seat := range r.Seats {
		if states[seat.SeatID] != "held" {
			t.Fatalf("POST %q: reservation %s lists seat %s, which is %q in Postgres (held by it: %v)",
				body, r.ID, seat.SeatID, states[seat.SeatID], states)
		}
	}
	if len(held) != len(r.Seats) {
		t.Fatalf("POST %q: reservation %s lists %d seats, Postgres has %d held by it: %v", body, r.ID, len(r.Seats), len(held), states)
	}
	rel := s.Do(t, http.MethodDelete, "/v1/reservations/"+r.ID, key, "")
	if rel.Status != http.StatusOK {
		t.Fatalf("release %s after POST %q: %d %s", r.ID, body, rel.Status, rel.Body)
	}
}

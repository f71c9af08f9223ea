package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// FuzzOperations drives every operation of the served document with a
// valid request that the fuzz input mutates: members in another letter
// case beside their twins, members repeated, unknown members, numbers far
// out of range or negative, values nested hundreds deep, strings with
// bytes that are not UTF-8, with line breaks, of 200 KB, values of other
// types or left out, and the query's parameters likewise. Each mutated
// request is then sent again with the same Idempotency-Key, either as the
// same JSON value written otherwise or mutated once more.
//
// It asserts what partners rely on: never a 5xx; every error a problem;
// nothing stored past the API's bounds (testenv.LimitViolations) or
// against the inventory invariants; a replay only ever answers the request
// it was stored for (the same JSON value, read strictly).
//
// `make test` runs the seed corpus (every operation with every mutation);
// `make fuzz` runs it for minutes (docs/performance.md has its figures).
func FuzzOperations(f *testing.F) {
	fz := newOpFuzzer(f)
	for i, op := range fz.ops {
		kinds := []int{mutUnknown, mutWrongType}
		if op.body != nil {
			kinds = make([]int, mutQuery)
			for k := range kinds {
				kinds[k] = k
			}
		}
		if len(fz.queryParams(op)) > 0 {
			kinds = append(kinds, mutQuery, mutQuery)
		}
		for j, k := range kinds {
			f.Add(uint16(i), []byte{byte(k), byte(j*5 + i), byte(k*37 + i + j), byte(j)})
		}
		if op.body == nil {
			continue
		}
		// Every member of the valid body beside a twin in another case
		// holding a number out of bounds (a year in seconds, 24 tickets),
		// and the same member repeated so.
		_, _, body := fz.request(op)
		for at := range places(body, nil, -1, nil) {
			f.Add(uint16(i), []byte{mutCaseTwin, byte(at), byte(at % len(outOfBounds)), 1})
			f.Add(uint16(i), []byte{mutRepeat, byte(at), byte((at + 1) % len(outOfBounds)), 1})
		}
	}
	f.Fuzz(fz.run)
}

// opFuzzer is one stack with real resources for every path: an event, a
// live hold, paid and unpaid orders, an aggregator's hold, a refund, a
// webhook endpoint.
type opFuzzer struct {
	s         *testenv.Stack
	key, door string
	doc       oaDoc
	ops       []oaOperation
	ids       map[string]string // path parameter values by operation id, then by path prefix
	bodies    map[string]string // valid bodies by operation id
	keep      []string          // holds the fuzzer's own fixtures keep
	seq       int
}

func newOpFuzzer(f *testing.F) *opFuzzer {
	s := testenv.NewStack(f)
	s.StartWorker(f)
	company := s.Company(f, "Фаззинг")
	s.Import(f, company, catalogfile.Demo(time.Now()))
	fz := &opFuzzer{s: s, ids: map[string]string{}, bodies: map[string]string{}}
	fz.key, _ = s.Key(f, company, apikey.Sandbox)
	fz.door, _ = s.Key(f, company, apikey.Sandbox, apikey.ScopeCheckin)
	event := map[string]int64{}
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
		event[slug] = id
	}
	_ = rows.Close()
	swan, standup := event["swan-lake"], event["standup"]
	var cats struct{ Data []struct{ ID int64 } }
	fz.must(f, http.MethodGet, fmt.Sprintf("/v1/events/%d/categories", standup), fz.key, "", 200, &cats)
	customer := `{"email": "anna@example.com", "first_name": "Анна", "last_name": "Павлова", "phone": "+7 999 123-45-67"}`

	// A live hold, an aggregator's hold, a paid order with two tickets (one
	// refunded), an unpaid order, a webhook endpoint.
	var hold, aggHold struct {
		Data    struct{ ID string }
		OrderID string `json:"orderId"`
	}
	fz.must(f, http.MethodPost, "/v1/reservations", fz.key, fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 60}`,
		swan, seatsJSON("parterre-3-1")), 201, &hold)
	fz.must(f, http.MethodPost, "/aggregator/v1/reserve", fz.key, fmt.Sprintf(`{"sessionId": "%d", "seats": ["parterre|parterre-3-2"], "ttl": 3600}`, swan), 201, &aggHold)
	var paidHold struct{ Data struct{ ID string } }
	fz.must(f, http.MethodPost, "/v1/reservations", fz.key, fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-3-3", "parterre-3-4")), 201, &paidHold)
	var paid, unpaid struct {
		Data struct {
			ID     int64
			Amount struct{ Amount int64 }
		}
	}
	fz.must(f, http.MethodPost, "/v1/orders", fz.key, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"}`,
		swan, paidHold.Data.ID, customer), 201, &paid)
	fz.must(f, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", paid.Data.ID), fz.key,
		fmt.Sprintf(`{"external_payment_id": "fuzz-paid", "paid_amount": %d}`, paid.Data.Amount.Amount), 200, nil)
	var tickets struct {
		Data []struct {
			ID      int64
			Barcode string
		}
	}
	fz.must(f, http.MethodGet, fmt.Sprintf("/v1/orders/%d/tickets", paid.Data.ID), fz.key, "", 200, &tickets)
	var refund struct{ Data struct{ ID string } }
	fz.must(f, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", paid.Data.ID), fz.key,
		fmt.Sprintf(`{"ticket_ids": [%d], "reason": "fixture"}`, tickets.Data[1].ID), 0, &refund)
	fz.must(f, http.MethodPost, "/v1/orders", fz.key, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 2}], "customer": %s, "payment": "external"}`,
		standup, cats.Data[0].ID, customer), 201, &unpaid)
	var endpoint struct{ Data struct{ ID int64 } }
	fz.must(f, http.MethodPost, "/v1/webhook-endpoints", fz.key, `{"url": "http://127.0.0.1:9/hooks", "description": "fuzz"}`, 201, &endpoint)
	fz.keep = []string{hold.Data.ID, aggHold.OrderID}

	res := s.Get(f, "/openapi.json", "")
	if res.Status != 200 {
		f.Fatalf("GET /openapi.json: %d", res.Status)
	}
	res.Decode(f, &fz.doc)
	fz.ops = fz.doc.operations()

	order, pending := strconv.FormatInt(paid.Data.ID, 10), strconv.FormatInt(unpaid.Data.ID, 10)
	for k, v := range map[string]string{
		"/v1/events/": strconv.FormatInt(swan, 10), "/aggregator/v1/sessions/": strconv.FormatInt(swan, 10),
		"/v1/orders/": order, "/v1/reservations/": hold.Data.ID, "/aggregator/v1/orders/": aggHold.OrderID,
		"/v1/refunds/": refund.Data.ID, "/v1/webhook-endpoints/": strconv.FormatInt(endpoint.Data.ID, 10),
		"/v1/webhook-events/": "evt_fuzz", "confirm-order": pending, "cancel-order": pending,
	} {
		fz.ids[k] = v
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for k, v := range map[string]string{
		"create-reservation":        fmt.Sprintf(`{"event_id": %d, "best_available": {"quantity": 2, "together": true}, "ttl_minutes": 15}`, swan),
		"replace-reservation-seats": fmt.Sprintf(`{"seats": %s}`, seatsJSON("parterre-3-1", "parterre-3-6")),
		"create-order": fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}], "customer": %s, "payment": "external"}`,
			standup, cats.Data[0].ID, customer),
		"confirm-order":   fmt.Sprintf(`{"external_payment_id": "fuzz-pay", "paid_amount": %d}`, unpaid.Data.Amount.Amount),
		"refund-order":    fmt.Sprintf(`{"ticket_ids": [%d], "reason": "Передумали"}`, tickets.Data[0].ID),
		"create-check-in": fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "Север", "device_id": "d-1"}`, tickets.Data[0].Barcode, swan),
		"create-check-in-batch": fmt.Sprintf(`{"event_id": %d, "scans": [{"barcode": %q, "gate": "Юг", "device_id": "d-2", "scanned_at": %q}]}`,
			swan, tickets.Data[0].Barcode, now),
		"aggregator-reserve":      fmt.Sprintf(`{"sessionId": "%d", "quantity": 1, "ttl": 900}`, swan),
		"aggregator-confirm":      `{"customer": {"email": "ivan@example.com", "name": "Иван Петров"}, "paymentId": "agg-pay"}`,
		"create-webhook-endpoint": `{"url": "http://127.0.0.1:9/other", "event_types": ["order.paid"], "description": "d"}`,
		"update-webhook-endpoint": `{"description": "обновлён", "enabled": true}`,
	} {
		fz.bodies[k] = v
	}
	return fz
}

// must sends a fixture's request and decodes its answer (want 0: any 2xx).
func (fz *opFuzzer) must(t testing.TB, method, path, key, body string, want int, out any) {
	t.Helper()
	res := fz.s.Do(t, method, path, key, body, fmt.Sprintf("Idempotency-Key: fixture-%d", time.Now().UnixNano()))
	if (want != 0 && res.Status != want) || res.Status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
	}
	if out != nil {
		res.Decode(t, out)
	}
}

func (fz *opFuzzer) queryParams(op oaOperation) []string {
	var out []string
	for _, p := range op.params {
		if p.In == "query" {
			out = append(out, p.Name)
		}
	}
	return out
}

// request is the operation's valid request: its path with real ids, its
// query, and its body (nil: none).
func (fz *opFuzzer) request(op oaOperation) (path string, query []string, body *jv) {
	path = op.path
	for _, p := range op.params {
		if p.In != "path" {
			continue
		}
		v := fz.ids[op.id]
		if v == "" {
			for prefix, id := range fz.ids {
				if strings.HasPrefix(op.path, prefix) {
					v = id
				}
			}
		}
		path = strings.ReplaceAll(path, "{"+p.Name+"}", v)
	}
	for _, name := range fz.queryParams(op) {
		switch name {
		case "page":
			query = append(query, "page=1")
		case "per_page":
			query = append(query, "per_page=20")
		}
	}
	if op.body != nil {
		text, ok := fz.bodies[op.id]
		if !ok || text == "" {
			b, _ := json.Marshal(fz.doc.sample(op.body, 0))
			text = string(b)
		}
		body = parseJV([]byte(text))
	}
	return path, query, body
}

// run is one fuzz input: the operation it picks, mutated by prog's
// (kind, where, arg) triples, sent twice with one Idempotency-Key.
func (fz *opFuzzer) run(t *testing.T, opIndex uint16, prog []byte) {
	if len(fz.ops) == 0 || len(prog) == 0 {
		return
	}
	op := fz.ops[int(opIndex)%len(fz.ops)]
	path, query, body := fz.request(op)
	if body == nil && (op.method == http.MethodPost || op.method == http.MethodPatch) {
		body = &jv{kind: 'o'} // a bodiless POST given a body anyway
	}
	var done []string
	for i := 0; i+2 < len(prog) && i < 12; i += 3 {
		kind := int(prog[i]) % mutKinds
		done = append(done, mutNames[kind])
		if kind == mutQuery || body == nil {
			query = mutateQuery(query, fz.queryParams(op), prog[i+1], prog[i+2])
			continue
		}
		mutate(body, kind, prog[i+1], prog[i+2])
	}
	fz.seq++
	idem := fmt.Sprintf("fuzz-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), fz.seq)
	first := fz.send(t, op, path, query, body, false, idem, done)
	if op.method == http.MethodPost || op.method == http.MethodPatch {
		// The same key again: the same value written otherwise, or a
		// request mutated once more. A replay must answer only the first.
		second := body.clone()
		reorder := prog[len(prog)-1]%2 == 0
		if !reorder {
			last := prog[len(prog)-1]
			mutate(second, int(last)%mutQuery, last/3, last/7)
		}
		again := fz.send(t, op, path, query, second, reorder, idem, done)
		if again.Header.Get("Idempotent-Replayed") == "true" {
			if !sameRequest(body.text(false), second.text(reorder)) {
				t.Fatalf("%s %s: replayed the answer to %.300q for another request %.300q", op.method, path, body.text(false), second.text(reorder))
			}
			if again.Status != first.Status {
				t.Fatalf("%s %s: the replay answered %d, the request %d", op.method, path, again.Status, first.Status)
			}
		}
	}
	ctx := context.Background()
	if broken, err := testenv.LimitViolations(ctx, fz.s.DB); err != nil || len(broken) > 0 {
		t.Fatalf("after %s %s (%v): stored past the bounds: %v %v", op.method, path, done, broken, err)
	}
	if broken, err := testenv.SalesViolations(ctx, fz.s.DB); err != nil || len(broken) > 0 {
		t.Fatalf("after %s %s (%v): inventory invariants broken: %v %v", op.method, path, done, broken, err)
	}
	// Holds made by the input end now, so later inputs find seats free.
	if _, err := fz.s.DB.NewRaw("UPDATE reservations SET expires_at = now() WHERE status = 'reserved' AND id NOT IN (?) AND expires_at > now()",
		bun.In(fz.keep)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fz.s.DB.NewRaw("UPDATE event_seats SET hold_expires_at = now() WHERE state = 'held' AND hold_id NOT IN (?) AND hold_expires_at > now()",
		bun.In(fz.keep)).Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// send makes one request and checks its answer: no 5xx, and an error is a
// problem with its code and request id.
func (fz *opFuzzer) send(t *testing.T, op oaOperation, path string, query []string, body *jv, reorder bool, idem string, done []string) *testenv.Response {
	t.Helper()
	key := fz.key
	if strings.HasPrefix(op.path, "/v1/check-ins") {
		key = fz.door
	}
	if len(query) > 0 {
		path += "?" + strings.Join(query, "&")
	}
	var text string
	if body != nil {
		text = string(body.text(reorder))
	}
	req := testenv.NewRequest(t, op.method, fz.s.URL+path, key, text, "Idempotency-Key: "+idem)
	res, err := testenv.Send(http.DefaultClient, req)
	if err != nil {
		t.Fatalf("%s %s (%v): %v", op.method, path, done, err)
	}
	if res.Status >= 500 {
		t.Fatalf("%s %.200s (%v) body %.300q: %d %.300s", op.method, path, done, text, res.Status, res.Body)
	}
	if res.Status >= 400 && res.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%s %.200s (%v): %d is not a problem: %.300s", op.method, path, done, res.Status, res.Body)
	}
	return res
}

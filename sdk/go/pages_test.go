package ticketsales

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// fakeOrders serves /v1/orders from ids by cursor (the cursor is the
// index to start at), 422 for a cursor it did not give, and records each
// request's query.
func fakeOrders(t *testing.T, ids []int64) (*httptest.Server, func() []url.Values) {
	t.Helper()
	var mu sync.Mutex
	var queries []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		queries = append(queries, q)
		mu.Unlock()
		per, _ := strconv.Atoi(q.Get("per_page"))
		start := 0
		if c := q.Get("cursor"); c != "" {
			n, err := strconv.Atoi(c[len("c"):])
			if c[0] != 'c' || err != nil || q.Get("page") != "" {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				fmt.Fprint(w, `{"status": 422, "code": "validation_error", "request_id": "r", "errors": [{"location": "query.cursor"}]}`)
				return
			}
			start = n
		}
		end := min(start+per, len(ids))
		data := []map[string]any{}
		for _, id := range ids[start:end] {
			data = append(data, map[string]any{"id": id, "status": "paid"})
		}
		meta := map[string]any{"current_page": 1, "per_page": per, "total": len(ids), "last_page": 1}
		if end < len(ids) {
			meta["next_cursor"] = fmt.Sprintf("c%d", end)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "meta": meta, "request_id": "r"})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []url.Values {
		mu.Lock()
		defer mu.Unlock()
		return append([]url.Values(nil), queries...)
	}
}

// Orders follows next_cursor to the end, keeping the filters and
// dropping the page number after the first page.
func TestOrdersIterator(t *testing.T) {
	var ids []int64
	for i := range 17 {
		ids = append(ids, int64(100-i))
	}
	srv, queries := fakeOrders(t, ids)
	c, _ := testClient(t, srv.URL, &Doer{})
	per, status := int64(5), ListOrdersParamsFilterStatusPaid
	params := &ListOrdersParams{PerPage: &per, FilterStatus: &status}
	var got []int64
	for o, err := range c.Orders(context.Background(), params) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Id)
	}
	if fmt.Sprint(got) != fmt.Sprint(ids) {
		t.Fatalf("walked %v, want %v", got, ids)
	}
	qs := queries()
	if len(qs) != 4 || qs[0].Has("cursor") || qs[3].Get("cursor") != "c15" {
		t.Fatalf("requests %v", qs)
	}
	for _, q := range qs {
		if q.Get("filter.status") != "paid" || q.Get("per_page") != "5" || q.Has("page") {
			t.Fatalf("a request lost its filters: %v", q)
		}
	}
	if params.Cursor != nil {
		t.Fatal("the caller's params were changed")
	}

	// Breaking out reads no further page.
	srv, queries = fakeOrders(t, ids)
	c, _ = testClient(t, srv.URL, &Doer{})
	n := 0
	for _, err := range c.Orders(context.Background(), params) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 6 {
			break
		}
	}
	if len(queries()) != 2 {
		t.Fatalf("%d requests for 6 orders of 5 a page", len(queries()))
	}

	// A first page by number, then cursors: the page number is not sent
	// with a cursor.
	srv, queries = fakeOrders(t, ids)
	c, _ = testClient(t, srv.URL, &Doer{})
	one := int64(1)
	got = nil
	for o, err := range c.Orders(context.Background(), &ListOrdersParams{PerPage: &per, Page: &one}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, o.Id)
	}
	if len(got) != 17 || queries()[0].Get("page") != "1" || queries()[1].Has("page") {
		t.Fatalf("%v %v", got, queries())
	}
}

// A problem ends the walk with it, once.
func TestIteratorProblem(t *testing.T) {
	calls := 0
	errs := 0
	for _, err := range All(context.Background(), func(ctx context.Context, cursor *string) ([]int, *Meta, error) {
		calls++
		if cursor == nil {
			next := "bad"
			return []int{1, 2}, &Meta{NextCursor: &next}, nil
		}
		return nil, nil, &Problem{Status: 422, Code: "validation_error"}
	}) {
		if err != nil {
			errs++
			var p *Problem
			if !errors.As(err, &p) || p.Code != "validation_error" {
				t.Fatalf("%v", err)
			}
		}
	}
	if calls != 2 || errs != 1 {
		t.Fatalf("%d calls, %d errors", calls, errs)
	}

	// A server answering the same cursor again does not loop forever.
	n := 0
	for _, err := range All(context.Background(), func(ctx context.Context, cursor *string) ([]int, *Meta, error) {
		same := "same"
		return []int{1}, &Meta{NextCursor: &same}, nil
	}) {
		if n++; err != nil || n > 10 {
			break
		}
	}
	if n > 10 {
		t.Fatal("looped on one cursor")
	}
}

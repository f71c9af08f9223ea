package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/test/testenv"
)

type cursorList struct {
	Data []struct {
		ID      int64  `json:"id"`
		EventID any    `json:"event_id"` // a session's number, a delivery's string
		Status  string `json:"status"`
	} `json:"data"`
	Meta struct {
		CurrentPage int    `json:"current_page"`
		PerPage     int    `json:"per_page"`
		Total       int    `json:"total"`
		LastPage    int    `json:"last_page"`
		NextCursor  string `json:"next_cursor"`
	} `json:"meta"`
}

// withQuery sets one query parameter of a path.
func withQuery(path, name, value string) string {
	u, _ := url.Parse(path)
	q := u.Query()
	q.Set(name, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// walkByCursor follows next_cursor from path to the end, calling between
// before each next page, and answers the ids in the order seen.
func walkByCursor(t *testing.T, s *testenv.Stack, path, key string, between func(page int)) []int64 {
	t.Helper()
	var ids []int64
	next := path
	for page := 1; ; page++ {
		res := s.Get(t, next, key)
		if res.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", next, res.Status, res.Body)
		}
		var l cursorList
		res.Decode(t, &l)
		if l.Meta.CurrentPage != page {
			t.Fatalf("page %d says current_page %d", page, l.Meta.CurrentPage)
		}
		for _, d := range l.Data {
			ids = append(ids, d.ID)
		}
		link := res.Header.Get("Link")
		if l.Meta.NextCursor == "" {
			if link != "" {
				t.Fatalf("the last page links on: %s", link)
			}
			return ids
		}
		want := withQuery(withQuery(path, "cursor", l.Meta.NextCursor), "page", "")
		if !strings.Contains(link, `rel="next"`) || !strings.Contains(link, "cursor="+url.QueryEscape(l.Meta.NextCursor)) ||
			!strings.HasPrefix(link, "</v1/") {
			t.Fatalf("Link %q, want one to %s", link, want)
		}
		if between != nil {
			between(page)
		}
		next = strings.TrimSuffix(strings.TrimPrefix(strings.Split(link, ";")[0], "<"), ">")
		if page > 1000 {
			t.Fatal("no end")
		}
	}
}

// walkByNumber reads every page by number.
func walkByNumber(t *testing.T, s *testenv.Stack, path, key string) []int64 {
	t.Helper()
	var ids []int64
	for page := 1; ; page++ {
		var l cursorList
		s.Get(t, withQuery(path, "page", fmt.Sprint(page)), key).Decode(t, &l)
		for _, d := range l.Data {
			ids = append(ids, d.ID)
		}
		if page >= l.Meta.LastPage {
			return ids
		}
	}
}

func hasRepeats(ids []int64) bool {
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			return true
		}
		seen[id] = true
	}
	return false
}

// A partner walks all its orders, 7 a page, by cursor while new orders
// arrive between pages: it sees every order that existed when it started,
// once each, newest first, as page numbers show them on a still list.
func TestOrdersByCursorWhileOrdersArrive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first := f.externalOrder(t, f.keyA, "parterre-3-1")
	// 56 copies, in threes sharing one creation time: the id decides
	// among them, as the list orders them. Cyrillic names, a big amount.
	if _, err := f.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, created_at, expires_at, channel)
		SELECT company_id, api_key_id, is_test, event_id, CASE WHEN g % 2 = 0 THEN 'cancelled' ELSE 'refunded' END, payment, currency,
			999999999900, service_fee, 999999999900, 'страница-' || g || '@example.test', 'Ёлка', 'Жуковская', '',
			access_token_hash, created_at - (g / 3) * interval '1 minute', expires_at, channel
		FROM orders, generate_series(1, 56) g WHERE id = ?`, first.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	arrive := func(n int) {
		if _, err := f.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
				customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, created_at, expires_at, channel)
			SELECT company_id, api_key_id, is_test, event_id, 'cancelled', payment, currency, total, service_fee, amount,
				'новый-' || g || '@example.test', 'Новый', 'Заказ', '', access_token_hash, now(), expires_at, channel
			FROM orders, generate_series(1, ?) g WHERE id = ?`, n, first.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	still := walkByNumber(t, f.Stack, "/v1/orders?per_page=7", f.keyA)
	if len(still) != 57 || hasRepeats(still) {
		t.Fatalf("page numbers on a still list: %d orders %v", len(still), still)
	}
	// The same walk by cursor, orders arriving before each next page.
	walked := walkByCursor(t, f.Stack, "/v1/orders?per_page=7", f.keyA, func(page int) { arrive(page%3 + 1) })
	if !slices.Equal(walked, still) {
		t.Fatalf("by cursor while orders arrive:\n%v\nwant\n%v", walked, still)
	}
	// Page numbers now shift (that is why cursors exist): page 2 starts
	// with orders already seen on page 1.
	var l cursorList
	f.Get(t, "/v1/orders?per_page=7&page=2", f.keyA).Decode(t, &l)
	if l.Meta.Total <= 57 || l.Data[0].ID == still[7] {
		t.Fatalf("page 2 after arrivals: total %d, first %d", l.Meta.Total, l.Data[0].ID)
	}

	// The cursor is bound to the filters: a filtered walk by cursor is
	// the filtered list; the same cursor under other filters is refused.
	var refunded []int64
	for _, id := range still {
		var status string
		if err := f.DB.NewRaw("SELECT status FROM orders WHERE id = ?", id).Scan(ctx, &status); err != nil {
			t.Fatal(err)
		}
		if status == "refunded" {
			refunded = append(refunded, id)
		}
	}
	if got := walkByCursor(t, f.Stack, "/v1/orders?filter.status=refunded&per_page=4", f.keyA, nil); !slices.Equal(got, refunded) {
		t.Fatalf("refunded orders by cursor: %v, want %v", got, refunded)
	}
	f.Get(t, "/v1/orders?filter.status=refunded&per_page=4", f.keyA).Decode(t, &l)
	cursor := l.Meta.NextCursor
	if cursor == "" || l.Meta.CurrentPage != 1 || l.Meta.Total != len(refunded) {
		t.Fatalf("first filtered page: %+v", l.Meta)
	}
	// per_page may change along the walk.
	if res := f.Get(t, "/v1/orders?filter.status=refunded&per_page=9&cursor="+cursor, f.keyA); res.Status != http.StatusOK {
		t.Fatalf("another per_page: %d %s", res.Status, res.Body)
	}

	var ev cursorList
	f.Get(t, "/v1/events?per_page=1", f.keyA).Decode(t, &ev)
	raw, _ := base64.RawURLEncoding.DecodeString(cursor)
	flipped := slices.Clone(raw)
	flipped[len(flipped)-3] ^= 1
	var before int
	if err := f.DB.NewRaw("SELECT count(*) FROM orders").Scan(ctx, &before); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{
		"other filters":       "/v1/orders?filter.status=cancelled&cursor=" + cursor,
		"no filters":          "/v1/orders?cursor=" + cursor,
		"another list's":      "/v1/orders?cursor=" + ev.Meta.NextCursor,
		"with a page":         "/v1/orders?filter.status=refunded&page=2&cursor=" + cursor,
		"garbled":             "/v1/orders?filter.status=refunded&cursor=" + cursor[:len(cursor)-2],
		"edited":              "/v1/orders?filter.status=refunded&cursor=" + base64.RawURLEncoding.EncodeToString(flipped),
		"not base64":          "/v1/orders?cursor=" + url.QueryEscape("не курсор"),
		"forged":              "/v1/orders?cursor=" + base64.RawURLEncoding.EncodeToString([]byte(`12345678{"v":1,"b":"x","n":2,"at":{"i":1}}`)),
		"too long":            "/v1/orders?cursor=" + strings.Repeat("A", 600),
		"another environment": "/v1/orders?filter.status=refunded&cursor=" + cursor + "&key=production",
	} {
		key := f.keyA
		if strings.HasSuffix(path, "&key=production") {
			path = strings.TrimSuffix(path, "&key=production")
			key, _ = f.Key(t, f.companyA, "production")
		}
		p := expectProblem(t, f.Get(t, path, key), http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) == 0 || p.Errors[0].Location != "query.cursor" {
			t.Errorf("%s: errors %+v, want query.cursor", name, p.Errors)
		}
	}
	// Company B's key with A's cursor: refused, never A's orders.
	p := expectProblem(t, f.Get(t, "/v1/orders?filter.status=refunded&cursor="+cursor, f.keyB), http.StatusUnprocessableEntity, "validation_error")
	if p.Errors[0].Location != "query.cursor" {
		t.Errorf("another company's cursor: %+v", p.Errors)
	}
	var after int
	if err := f.DB.NewRaw("SELECT count(*) FROM orders").Scan(ctx, &after); err != nil || after != before {
		t.Fatalf("refused cursors changed orders: %d → %d %v", before, after, err)
	}
}

// Every list that pages by number also pages by cursor, in the same order.
func TestListsByCursorMatchPageNumbers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, path := range []string{"/v1/events?per_page=1", "/v1/events?filter.status=draft&per_page=1", "/v1/sessions?per_page=2",
		"/v1/venues?per_page=1", "/v1/cities?per_page=1"} {
		byNumber := walkByNumber(t, f.Stack, path, f.keyA)
		if len(byNumber) == 0 {
			t.Fatalf("%s: empty", path)
		}
		if byCursor := walkByCursor(t, f.Stack, path, f.keyA, nil); !slices.Equal(byCursor, byNumber) || hasRepeats(byCursor) {
			t.Errorf("%s: by cursor %v, by number %v", path, byCursor, byNumber)
		}
	}

	// Endpoints, oldest first, and an endpoint's deliveries, newest first:
	// 11 deliveries, several made at one instant (their event id decides).
	r := newReceiver(t)
	var endpoint int64
	for range 3 {
		endpoint = f.subscribe(t, f.keyA, r, "order.paid")
	}
	if got := walkByCursor(t, f.Stack, "/v1/webhook-endpoints?per_page=2", f.keyA, nil); len(got) != 3 || !slices.IsSorted(got) {
		t.Errorf("endpoints by cursor: %v", got)
	}
	if _, err := f.DB.NewRaw(`WITH ev AS (
			INSERT INTO webhook_events (id, type, company_id, is_test, created_at)
			SELECT 'evt_cursor_' || lpad(g::text, 2, '0'), 'order.paid', ?, true, now() FROM generate_series(1, 11) g RETURNING id)
		INSERT INTO webhook_deliveries (event_id, endpoint_id, status, created_at, started_at, delivered_at)
		SELECT id, ?, 'delivered', timestamptz '2026-11-01 10:00:00+00' + (right(id, 2)::int / 4) * interval '1 second', now(), now() FROM ev`,
		f.companyA, endpoint).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/v1/webhook-endpoints/%d/deliveries?filter.status=delivered&per_page=3", endpoint)
	var events []string
	for next := path; ; {
		var l cursorList
		f.Get(t, next, f.keyA).Decode(t, &l)
		for _, d := range l.Data {
			events = append(events, fmt.Sprint(d.EventID))
		}
		if l.Meta.NextCursor == "" {
			break
		}
		next = path + "&cursor=" + l.Meta.NextCursor
	}
	want := []string{"evt_cursor_11", "evt_cursor_10", "evt_cursor_09", "evt_cursor_08", "evt_cursor_07", "evt_cursor_06",
		"evt_cursor_05", "evt_cursor_04", "evt_cursor_03", "evt_cursor_02", "evt_cursor_01"}
	if !slices.Equal(events, want) {
		t.Errorf("deliveries by cursor: %v", events)
	}
}

// reseal is a cursor with its position edited and its checksum made
// anew, as anyone can (the checksum is not a signature).
func reseal(t *testing.T, cursor string, edit func(at map[string]any)) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= 8 {
		t.Fatalf("cursor %q: %v", cursor, err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw[8:], &c); err != nil {
		t.Fatal(err)
	}
	edit(c["at"].(map[string]any))
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append([]byte("ticketsales cursor\x00"), payload...))
	return base64.RawURLEncoding.EncodeToString(append(sum[:8], payload...))
}

// A forged cursor of the caller's own list, checksum and binding right,
// whose position no row can have (a NUL in a name, the year 0) is bad
// input: 422 at query.cursor, never a 500 from the database.
func TestListsByCursorRefuseForgedPositions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.externalOrder(t, f.keyA, "parterre-3-1")
	f.externalOrder(t, f.keyA, "parterre-3-2")
	if _, err := f.DB.NewRaw("INSERT INTO cities (company_id, ref, name) VALUES (?, 'kazan', 'Казань')", f.companyA).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := func(path string) string {
		t.Helper()
		var l cursorList
		f.Get(t, path, f.keyA).Decode(t, &l)
		if l.Meta.NextCursor == "" {
			t.Fatalf("%s: no next cursor", path)
		}
		return l.Meta.NextCursor
	}
	cities, orders := first("/v1/cities?per_page=1"), first("/v1/orders?per_page=1")
	// Resealed unchanged, the cursor still works: the forgery is sound.
	if res := f.Get(t, "/v1/orders?per_page=1&cursor="+reseal(t, orders, func(map[string]any) {}), f.keyA); res.Status != http.StatusOK {
		t.Fatalf("resealed cursor: %d %s", res.Status, res.Body)
	}
	for name, path := range map[string]string{
		"NUL in a name": "/v1/cities?per_page=1&cursor=" + reseal(t, cities, func(at map[string]any) { at["s"] = "Москва\x00" }),
		"year 0":        "/v1/orders?per_page=1&cursor=" + reseal(t, orders, func(at map[string]any) { at["t"] = "0000-01-01T00:00:00Z" }),
	} {
		p := expectProblem(t, f.Get(t, path, f.keyA), http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) == 0 || p.Errors[0].Location != "query.cursor" {
			t.Errorf("%s: %+v, want query.cursor", name, p.Errors)
		}
	}
}

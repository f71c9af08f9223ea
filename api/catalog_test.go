package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type event struct {
	ID        int64  `json:"id"`
	Slug      string `json:"slug"`
	Status    string `json:"status"`
	HasScheme bool   `json:"has_scheme"`
	Venue     struct {
		ID   int64  `json:"id"`
		City string `json:"city"`
	} `json:"venue"`
	PriceFrom struct{ Amount int64 } `json:"price_from"`
	UpdatedAt time.Time              `json:"updated_at"`
}

func (f *fixture) events(t *testing.T, key, query string) listBody[event] {
	t.Helper()
	res := f.Get(t, "/v1/events"+query, key)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /v1/events%s: %d %s", query, res.Status, res.Body)
	}
	var body listBody[event]
	res.Decode(t, &body)
	return body
}

func slugs(es []event) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Slug)
	}
	return strings.Join(out, ",")
}

func TestListEventsFiltersAndPaging(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	all := f.events(t, f.keyA, "")
	// Published only by default, ordered by start time.
	if got := slugs(all.Data); got != "expo,swan-lake,standup" {
		t.Fatalf("default list: %s", got)
	}
	if all.Meta.Total != 3 || all.Meta.PerPage != 50 || all.Meta.CurrentPage != 1 || all.RequestID == "" {
		t.Fatalf("meta: %+v", all.Meta)
	}
	swan := all.Data[1]
	if !swan.HasScheme || swan.Venue.City != "Moscow" || swan.PriceFrom.Amount != 150000 {
		t.Fatalf("swan lake item: %+v", swan)
	}

	cases := []struct{ query, want string }{
		{"?filter.status=draft", "nutcracker"},
		{"?filter.status=archived", ""},
		{"?filter.has_scheme=1", "swan-lake"},
		{"?filter.has_scheme=0", "expo,standup"},
		{fmt.Sprintf("?filter.venue_id=%d", swan.Venue.ID), "expo,swan-lake,standup"},
		{"?filter.venue_id=999999", ""},
		{"?filter.date_from=" + time.Now().AddDate(0, 0, 12).Format(time.DateOnly), "standup"},
		{"?filter.date_to=" + time.Now().AddDate(0, 0, 10).Format(time.DateOnly), "expo,swan-lake"},
		{"?filter.date_to=" + url.QueryEscape(time.Now().Format(time.RFC3339)), ""},
		{"?updated_since=" + url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), ""},
		{"?updated_since=" + url.QueryEscape(time.Now().Add(-time.Hour).Format(time.RFC3339)), "expo,swan-lake,standup"},
	}
	for _, c := range cases {
		if got := slugs(f.events(t, f.keyA, c.query).Data); got != c.want {
			t.Errorf("%s: got %q, want %q", c.query, got, c.want)
		}
	}
	var cityID int64
	if err := f.DB.NewRaw("SELECT id FROM cities WHERE company_id = ?", f.companyA).Scan(context.Background(), &cityID); err != nil {
		t.Fatal(err)
	}
	if got := slugs(f.events(t, f.keyA, fmt.Sprintf("?filter.city_id=%d", cityID)).Data); got != "expo,swan-lake,standup" {
		t.Errorf("city filter: %s", got)
	}

	// Paging: page 2 of size 2 holds the third event; past the end is empty.
	p2 := f.events(t, f.keyA, "?per_page=2&page=2")
	if slugs(p2.Data) != "standup" || p2.Meta.Total != 3 || p2.Meta.LastPage != 2 || p2.Meta.CurrentPage != 2 {
		t.Fatalf("page 2: %s %+v", slugs(p2.Data), p2.Meta)
	}
	if p9 := f.events(t, f.keyA, "?per_page=2&page=9"); len(p9.Data) != 0 || p9.Meta.Total != 3 {
		t.Fatalf("page past the end: %+v", p9)
	}
	if max := f.events(t, f.keyA, "?per_page=200"); len(max.Data) != 3 {
		t.Fatal("per_page=200 is allowed")
	}
	for _, q := range []string{"?per_page=0", "?per_page=201", "?page=0", "?page=x", "?filter.status=live",
		"?filter.has_scheme=2", "?filter.date_from=tomorrow", "?updated_since=2026-01-01", "?filter.city_id=-1"} {
		p := expectProblem(t, f.Get(t, "/v1/events"+q, f.keyA), http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) == 0 || !strings.HasPrefix(p.Errors[0].Location, "query.") {
			t.Errorf("%s: want a query field error, got %+v", q, p)
		}
	}
	// Two bad parameters are both reported.
	p := expectProblem(t, f.Get(t, "/v1/events?per_page=0&filter.date_to=x", f.keyA), http.StatusUnprocessableEntity, "validation_error")
	if len(p.Errors) != 2 {
		t.Fatalf("want both errors, got %+v", p.Errors)
	}
}

func TestCompanyIsolation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if got := slugs(f.events(t, f.keyB, "").Data); got != "gig" {
		t.Fatalf("company B sees %q", got)
	}
	if got := slugs(f.events(t, f.keyB, "?filter.status=draft").Data); got != "" {
		t.Fatalf("company B sees drafts %q", got)
	}
	swan := f.ids["swan-lake"]
	for _, path := range []string{"/categories", "/scheme", "/availability"} {
		expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d%s", swan, path), f.keyB), http.StatusNotFound, "not_found")
		expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d%s", f.foreignID, path), f.keyA), http.StatusNotFound, "not_found")
		expectProblem(t, f.Get(t, "/v1/events/987654"+path, f.keyA), http.StatusNotFound, "not_found")
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", f.ids["expo"]), f.keyB), http.StatusNotFound, "not_found")
	for _, path := range []string{"/v1/venues", "/v1/cities", "/v1/sessions"} {
		res := f.Get(t, path, f.keyB)
		if res.Status != 200 || strings.Contains(string(res.Body), `"Moscow"`) || strings.Contains(string(res.Body), "Grand Hall") {
			t.Fatalf("%s leaks company A's data: %s", path, res.Body)
		}
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A 401 says what is wrong with the credentials: none, not the shape
	// of a key, or not a key (unknown or revoked: one code, one detail, so
	// the answer tells nothing of which keys exist).
	unknown, _, _ := apikey.Generate(apikey.Sandbox)
	for _, c := range []struct{ auth, code, challenge string }{
		{"", "api_key_missing", `Bearer realm="ticketsales"`},
		{"Basic abc", "api_key_malformed", `Bearer realm="ticketsales", error="invalid_token"`},
		{"Bearer ", "api_key_malformed", `Bearer realm="ticketsales", error="invalid_token"`},
		{"Bearer tk_sandbox_nope", "api_key_malformed", `Bearer realm="ticketsales", error="invalid_token"`},
		{"Bearer " + strings.ToUpper(unknown), "api_key_malformed", `Bearer realm="ticketsales", error="invalid_token"`},
		{"Bearer " + unknown, "api_key_unknown", `Bearer realm="ticketsales", error="invalid_token"`},
	} {
		var res *testenv.Response
		if c.auth == "" {
			res = f.Get(t, "/v1/events", "")
		} else {
			res = f.Get(t, "/v1/events", "", "Authorization: "+c.auth)
		}
		p := expectProblem(t, res, http.StatusUnauthorized, c.code)
		if got := res.Header.Get("WWW-Authenticate"); got != c.challenge {
			t.Fatalf("%q: WWW-Authenticate %q, want %q", c.auth, got, c.challenge)
		}
		if p.Detail == "" {
			t.Fatalf("%q: no detail", c.auth)
		}
	}
	// A key without catalog:read is refused with the scope it lacks.
	ordersOnly, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeOrdersRead, apikey.ScopeOrdersWrite)
	for _, path := range []string{"/v1/events", "/v1/venues", "/v1/cities", "/v1/sessions",
		fmt.Sprintf("/v1/events/%d/scheme", f.ids["swan-lake"]), fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"])} {
		p := expectProblem(t, f.Get(t, path, ordersOnly), http.StatusForbidden, "insufficient_scope")
		if p.RequiredScope != apikey.ScopeCatalogRead {
			t.Fatalf("%s: required_scope %q", path, p.RequiredScope)
		}
	}
	// A revoked key stops working (the test stack caches nothing).
	key, id := f.Key(t, f.companyA, apikey.Sandbox)
	if res := f.Get(t, "/v1/cities", key); res.Status != 200 {
		t.Fatalf("fresh key: %d", res.Status)
	}
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE api_keys SET revoked_at = now() WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	revoked := expectProblem(t, f.Get(t, "/v1/cities", key), http.StatusUnauthorized, "api_key_unknown")
	never := expectProblem(t, f.Get(t, "/v1/cities", unknown), http.StatusUnauthorized, "api_key_unknown")
	if revoked.Detail != never.Detail {
		t.Fatalf("a revoked key (%+v) is told apart from one that never was (%+v)", revoked, never)
	}
}

func TestCategoriesShowCurrentPricesAndFees(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	get := func(slug string) []category {
		t.Helper()
		res := f.Get(t, fmt.Sprintf("/v1/events/%d/categories", f.ids[slug]), f.keyA)
		if res.Status != 200 {
			t.Fatalf("categories of %s: %d %s", slug, res.Status, res.Body)
		}
		var body struct{ Data []category }
		res.Decode(t, &body)
		return body.Data
	}
	cats := get("swan-lake")
	stalls := cats[0]
	if stalls.Name != "Stalls" || stalls.Price.Amount != 300000 || stalls.ServiceFee.Amount != 30000 ||
		stalls.PriceTotal == nil || stalls.PriceTotal.Amount != 330000 || stalls.CommissionMode != "separate" {
		t.Fatalf("stalls now: %+v", stalls)
	}
	// Eight days on, the dated price change (day 7) applies.
	f.Now = func() time.Time { return time.Now().AddDate(0, 0, 8) }
	if got := get("swan-lake")[0]; got.Price.Amount != 350000 || got.PriceTotal.Amount != 385000 {
		t.Fatalf("stalls after the date: %+v", got)
	}
	// 40 sold: the sold-count rule, later in the list, wins over the date.
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE ticket_categories SET sold = 40 WHERE id = ?", stalls.ID); err != nil {
		t.Fatal(err)
	}
	if got := get("swan-lake")[0]; got.Price.Amount != 400000 {
		t.Fatalf("stalls after 40 sold: %+v", got)
	}
	f.Now = time.Now
	// Included: no price_total, fee inside the price, GA shows what is left.
	ga := get("standup")[0]
	if ga.CommissionMode != "included" || ga.PriceTotal != nil || ga.ServiceFee.Amount != 9600 || ga.Available == nil || *ga.Available != 200 {
		t.Fatalf("standup GA: %+v", ga)
	}
}

func TestSessionsVenuesCities(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res := f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", f.ids["expo"]), f.keyA)
	var sessions listBody[struct {
		ID        int64 `json:"id"`
		EventID   int64 `json:"event_id"`
		Capacity  int   `json:"capacity"`
		Available int   `json:"available"`
	}]
	res.Decode(t, &sessions)
	if res.Status != 200 || len(sessions.Data) != 2 || sessions.Data[0].Capacity != 50 || sessions.Data[0].Available != 50 ||
		sessions.Data[0].EventID != f.ids["expo"] {
		t.Fatalf("sessions: %d %s", res.Status, res.Body)
	}
	for _, path := range []string{"/v1/venues", "/v1/cities"} {
		res := f.Get(t, path, f.keyA)
		if res.Status != 200 || res.Header.Get("Cache-Control") != "private, max-age=86400" {
			t.Fatalf("%s: %d, Cache-Control %q", path, res.Status, res.Header.Get("Cache-Control"))
		}
	}
	var venues listBody[struct {
		Name, City, Timezone string
	}]
	f.Get(t, "/v1/venues", f.keyA).Decode(t, &venues)
	if len(venues.Data) != 1 || venues.Data[0].City != "Moscow" || venues.Data[0].Timezone != "Europe/Moscow" || venues.Meta.Total != 1 {
		t.Fatalf("venues: %+v", venues)
	}
}

func TestSchemeETag(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := fmt.Sprintf("/v1/events/%d/scheme", f.ids["swan-lake"])
	res := f.Get(t, path, f.keyA)
	etag := res.Header.Get("ETag")
	if res.Status != 200 || !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("scheme: %d, ETag %q", res.Status, etag)
	}
	var body struct {
		Data struct {
			Zones []struct {
				ID   string
				Rows []struct {
					Row   string
					Seats []struct {
						SeatID string `json:"seat_id"`
						Label  string `json:"label"`
					} `json:"seats"`
				}
			}
		}
		RequestID string `json:"request_id"`
	}
	res.Decode(t, &body)
	if len(body.Data.Zones) != 2 || body.Data.Zones[0].Rows[0].Seats[4].Label != "Stalls, row 1, seat 5" ||
		body.Data.Zones[0].Rows[0].Seats[4].SeatID != "parterre-1-5" || body.RequestID != res.Header.Get("X-Request-Id") {
		t.Fatalf("scheme body: %s", res.Body[:300])
	}
	if again := f.Get(t, path, f.keyA, "If-None-Match: "+etag); again.Status != http.StatusNotModified || len(again.Body) != 0 ||
		again.Header.Get("ETag") != etag {
		t.Fatalf("If-None-Match: %d %q", again.Status, again.Body)
	}
	if other := f.Get(t, path, f.keyA, `If-None-Match: "stale"`); other.Status != 200 {
		t.Fatalf("stale ETag: %d", other.Status)
	}
	// An event sold without seat choice has no scheme.
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/scheme", f.ids["standup"]), f.keyA), http.StatusNotFound, "not_found")
}

// TestSchemeDrawing: the demo hall's /scheme places every seat inside the
// bounds, apart from each other, with the stage, outlines and labels.
func TestSchemeDrawing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var body struct {
		Data struct {
			Bounds struct{ X, Y, Width, Height float64 }
			Stage  struct {
				Label   string
				Outline [][2]float64
				LabelAt *[2]float64 `json:"label_at"`
			}
			Zones []struct {
				ID       string
				Outline  [][2]float64
				LabelAt  *[2]float64 `json:"label_at"`
				Rotation *float64
				Rows     []struct {
					LabelPoints [][2]float64 `json:"label_points"`
					Seats       []struct {
						SeatID string `json:"seat_id"`
						X, Y   *float64
					}
				}
			}
		}
	}
	res := f.Get(t, fmt.Sprintf("/v1/events/%d/scheme", f.ids["swan-lake"]), f.keyA)
	res.Decode(t, &body)
	g := body.Data
	in := func(what string, x, y float64) {
		if x < g.Bounds.X || x > g.Bounds.X+g.Bounds.Width || y < g.Bounds.Y || y > g.Bounds.Y+g.Bounds.Height {
			t.Errorf("%s (%v, %v) is outside the bounds %+v", what, x, y, g.Bounds)
		}
	}
	if g.Stage.Label != "Stage" || len(g.Stage.Outline) != 4 || g.Stage.LabelAt == nil || g.Bounds.Width <= 0 || g.Bounds.Height <= 0 {
		t.Fatalf("stage or bounds: %+v %+v", g.Stage, g.Bounds)
	}
	type point struct{ x, y float64 }
	var placed []point
	for _, z := range g.Zones {
		if len(z.Outline) < 3 || z.LabelAt == nil || z.Rotation == nil {
			t.Fatalf("zone %s lacks its outline, label or rotation", z.ID)
		}
		for _, r := range z.Rows {
			if len(r.LabelPoints) != 2 {
				t.Errorf("zone %s: a row with %d label points", z.ID, len(r.LabelPoints))
			}
			for _, s := range r.Seats {
				if s.X == nil || s.Y == nil {
					t.Fatalf("seat %s has no place", s.SeatID)
				}
				in(s.SeatID, *s.X, *s.Y)
				if *s.Y <= g.Stage.Outline[2][1] {
					t.Errorf("seat %s (y %v) is not behind the stage %v", s.SeatID, *s.Y, g.Stage.Outline)
				}
				for _, p := range placed {
					if math.Hypot(p.x-*s.X, p.y-*s.Y) < 0.98 {
						t.Fatalf("seat %s overlaps another at (%v, %v)", s.SeatID, p.x, p.y)
					}
				}
				placed = append(placed, point{*s.X, *s.Y})
			}
		}
	}
	if len(placed) != 96 {
		t.Fatalf("the demo hall has %d seats placed, want 96", len(placed))
	}
}

func TestAvailabilityFollowsSeatChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	swan := f.ids["swan-lake"]
	path := fmt.Sprintf("/v1/events/%d/availability", swan)
	get := func(headers ...string) (*testenv.Response, availability) {
		res := f.Get(t, path, f.keyA, headers...)
		var a availability
		if res.Status == 200 {
			res.Decode(t, &a)
		}
		return res, a
	}
	res, a := get()
	if res.Status != 200 || len(a.Data.Seats) != 96 {
		t.Fatalf("availability: %d, %d seats", res.Status, len(a.Data.Seats))
	}
	for _, s := range a.Data.Seats {
		if s.Status != "free" || s.Price.Amount == 0 || s.TicketCategoryID == 0 || s.ZoneID == "" {
			t.Fatalf("seat %+v", s)
		}
	}
	etag := res.Header.Get("ETag")
	if again, _ := get("If-None-Match: " + etag); again.Status != http.StatusNotModified || again.Header.Get("ETag") != etag {
		t.Fatalf("unchanged availability: %d %v", again.Status, again.Header)
	}

	// A seat held (as the hold SQL does: state and version in one statement).
	hold := func(seat string, until time.Time) {
		t.Helper()
		_, err := f.DB.ExecContext(ctx, `WITH s AS (UPDATE event_seats SET state = 'held', hold_id = 'h', hold_expires_at = ?
			WHERE event_id = ? AND seat_id = ? RETURNING event_id) UPDATE events SET seat_version = seat_version + 1 WHERE id IN (SELECT event_id FROM s)`,
			until, swan, seat)
		if err != nil {
			t.Fatal(err)
		}
	}
	hold("parterre-1-1", time.Now().Add(time.Hour))
	res, a = get("If-None-Match: " + etag)
	if res.Status != 200 || res.Header.Get("ETag") == etag {
		t.Fatalf("after a hold the ETag must change: %d %q", res.Status, res.Header.Get("ETag"))
	}
	if st := seatStatus(a, "parterre-1-1"); st != "reserved" {
		t.Fatalf("held seat shows %q", st)
	}
	// A hold past its deadline is free at once, with no worker around.
	hold("parterre-1-2", time.Now().Add(-time.Second))
	_, a = get()
	if st := seatStatus(a, "parterre-1-2"); st != "free" {
		t.Fatalf("lapsed hold shows %q", st)
	}

	// gzip when the client accepts it.
	gz := f.Get(t, path, f.keyA, "Accept-Encoding: gzip")
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("Content-Length") != strconv.Itoa(len(gz.Body)) {
		t.Fatalf("no gzip, or a wrong length: %v, %d bytes", gz.Header, len(gz.Body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || !bytes.Contains(plain, []byte(`"seat_id":"parterre-1-1"`)) {
		t.Fatalf("gzip body: %v", err)
	}
	if len(gz.Body)*3 > len(plain) {
		t.Fatalf("gzip did not compress: %d of %d bytes", len(gz.Body), len(plain))
	}
}

// TestAvailabilityPollSince: a poll that names the availability it holds
// by since gets only the seats changed (one held since), under the ETag a
// whole read has, and a fraction of the bytes; nothing changed is a 304;
// a state the service does not keep gets the whole hall. A malformed since
// is 422 and another company's key is 404, whatever since says.
func TestAvailabilityPollSince(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"])
	type answer struct {
		Data struct {
			Since string
			Seats []struct {
				SeatID string `json:"seat_id"`
				Status string
			}
			Categories []struct{ Available int }
		}
	}
	get := func(p string, headers ...string) (*testenv.Response, answer) {
		t.Helper()
		res := f.Get(t, p, f.keyA, headers...)
		var a answer
		if res.Status == http.StatusOK {
			res.Decode(t, &a)
		}
		return res, a
	}
	first, _ := get(path)
	etag := first.Header.Get("ETag")
	since := strings.Trim(etag, `"`)
	if r := f.reserve(t, f.keyA, "parterre-2-5"); r.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", r.Status, r.Body)
	}
	res, a := get(path+"?since="+since, "If-None-Match: "+etag)
	if res.Status != http.StatusOK || a.Data.Since != since || len(a.Data.Seats) != 1 ||
		a.Data.Seats[0].SeatID != "parterre-2-5" || a.Data.Seats[0].Status != "reserved" {
		t.Fatalf("the poll after a hold: %d %s; want parterre-2-5 reserved alone", res.Status, res.Body)
	}
	whole, w := get(path)
	if res.Header.Get("ETag") != whole.Header.Get("ETag") || len(w.Data.Seats) != 96 || len(a.Data.Categories) != len(w.Data.Categories) {
		t.Fatalf("changes under ETag %s with %d categories; the whole read: %s, %d seats, %d categories",
			res.Header.Get("ETag"), len(a.Data.Categories), whole.Header.Get("ETag"), len(w.Data.Seats), len(w.Data.Categories))
	}
	if len(res.Body)*10 > len(whole.Body) {
		t.Errorf("one changed seat costs %d bytes, the whole hall %d", len(res.Body), len(whole.Body))
	}
	if gz := f.Get(t, path+"?since="+since, f.keyA, "Accept-Encoding: gzip"); gz.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("changes are not gzipped when asked: %v", gz.Header)
	}

	now := whole.Header.Get("ETag")
	if res, _ := get(path+"?since="+strings.Trim(now, `"`), "If-None-Match: "+now); res.Status != http.StatusNotModified || res.Header.Get("ETag") != now {
		t.Fatalf("a poll with nothing changed: %d %v", res.Status, res.Header)
	}
	if res, a := get(path + "?since=" + strings.Repeat("0f", 16)); res.Status != http.StatusOK || a.Data.Since != "" || len(a.Data.Seats) != 96 {
		t.Fatalf("a state never made: %d, since %q, %d seats; want the whole hall", res.Status, a.Data.Since, len(a.Data.Seats))
	}
	for _, bad := range []string{"xyz", `"` + since + `"`, strings.ToUpper(since), since + "0"} {
		res := f.Get(t, path+"?since="+url.QueryEscape(bad), f.keyA)
		expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
		if !strings.Contains(string(res.Body), "query.since") {
			t.Errorf("since=%s: the problem does not name query.since: %s", bad, res.Body)
		}
	}
	expectProblem(t, f.Get(t, path+"?since="+since, f.keyB), http.StatusNotFound, "not_found")
}

// TestAvailabilityCacheFollowsNotifications: an instance serving availability
// from its notified cache sees a seat change made elsewhere (the worker, or
// another instance) without a per-request version query.
func TestAvailabilityCacheFollowsNotifications(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	url := f.ProductionLikeAPI(t)
	if st := f.seatStatusOn(t, url, "parterre-3-3"); st != "free" {
		t.Fatalf("before: %s", st)
	}
	if _, err := f.DB.ExecContext(context.Background(), `UPDATE event_seats SET state = 'sold', version = nextval('seat_change_seq')
		WHERE event_id = ? AND seat_id = 'parterre-3-3'`, f.ids["swan-lake"]); err != nil {
		t.Fatal(err)
	}
	if st := f.awaitSeatStatus(t, url, "parterre-3-3", "free"); st != "sold" {
		t.Fatalf("the notified cache still shows %s", st)
	}
}

// Production instances announce their own holds after commit (the seat
// triggers are silent for them): another instance's cache follows.
func TestAvailabilityCacheFollowsAnotherInstancesHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	a, b := f.ProductionLikeAPI(t), f.ProductionLikeAPI(t)
	if st := f.seatStatusOn(t, b, "parterre-3-4"); st != "free" {
		t.Fatalf("before: %s", st)
	}
	res := testenv.Do(t, a, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON("parterre-3-4")), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("hold on instance a: %d %s", res.Status, res.Body)
	}
	if st := f.awaitSeatStatus(t, b, "parterre-3-4", "free"); st != "reserved" {
		t.Fatalf("instance b shows the held seat %s", st)
	}
}

// TestGetOneEvent: GET /v1/events/{id} answers the event as the list
// shows it (the same members and price_from), a draft too; another
// company's event and an unknown id are 404; a key without catalog:read
// is 403.
func TestGetOneEvent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	all := f.events(t, f.keyA, "")
	for _, listed := range all.Data {
		res := f.Get(t, fmt.Sprintf("/v1/events/%d", listed.ID), f.keyA)
		if res.Status != http.StatusOK {
			t.Fatalf("GET /v1/events/%d: %d %s", listed.ID, res.Status, res.Body)
		}
		var one struct{ Data event }
		res.Decode(t, &one)
		if one.Data != listed {
			t.Errorf("event %d: %+v, the list says %+v", listed.ID, one.Data, listed)
		}
	}
	draft := f.events(t, f.keyA, "?filter.status=draft").Data[0]
	var one struct{ Data event }
	if res := f.Get(t, fmt.Sprintf("/v1/events/%d", draft.ID), f.keyA); res.Status != http.StatusOK {
		t.Fatalf("a draft: %d %s", res.Status, res.Body)
	} else if res.Decode(t, &one); one.Data.Status != "draft" || one.Data.Slug != "nutcracker" {
		t.Fatalf("a draft: %+v", one.Data)
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d", f.foreignID), f.keyA), http.StatusNotFound, "not_found")
	expectProblem(t, f.Get(t, "/v1/events/987654321", f.keyA), http.StatusNotFound, "not_found")
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d", draft.ID), door), http.StatusForbidden, "insufficient_scope")
}

// TestAvailabilityIsTheCompanysOwn: another company's key never reads an
// event's availability, whether the cache has none of it, has it fresh,
// or has it with a seat change notified since (the path that rebuilds
// without asking for the seats' version first).
func TestAvailabilityIsTheCompanysOwn(t *testing.T) {
	f := newFixture(t)
	path := fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"])
	refused := func(when string) {
		t.Helper()
		res := f.Get(t, path, f.keyB)
		if res.Status != http.StatusNotFound {
			t.Fatalf("%s: another company's key read the availability: %d %s", when, res.Status, res.Body)
		}
		expectProblem(t, res, http.StatusNotFound, "not_found")
	}
	refused("nothing cached")
	if res := f.Get(t, path, f.keyA); res.Status != http.StatusOK {
		t.Fatalf("the company's own key: %d", res.Status)
	}
	refused("cached fresh")
	if r := f.reserve(t, f.keyA, "parterre-1-1"); r.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", r.Status, r.Body)
	}
	refused("a change notified")
	if res := f.Get(t, path, f.keyA); res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"seat_id":"parterre-1-1","row":"1","number":"1","status":"reserved"`) {
		t.Fatalf("the company's own key after the hold: %d %.300s", res.Status, res.Body)
	}
}

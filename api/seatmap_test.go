package api_test

// Seat map tokens: a partner's server makes one with its key, and a
// buyer's browser reads one event's scheme and availability with it at
// /seat-map/v1 (CORS for any origin), never with the key.

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type seatMapTokenBody struct {
	Data struct {
		Token     string    `json:"token"`
		EventID   int64     `json:"event_id"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"data"`
	RequestID string `json:"request_id"`
}

// seatMapToken makes a token for the event with key at base (body: the
// request's, "" for none).
func seatMapToken(t *testing.T, base, key string, event int64, body string) seatMapTokenBody {
	t.Helper()
	res := testenv.Do(t, base, http.MethodPost, fmt.Sprintf("/v1/events/%d/seat-map-tokens", event), key, body)
	if res.Status != http.StatusCreated {
		t.Fatalf("make a seat map token: %d %s", res.Status, res.Body)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("a token's answer is cached: Cache-Control %q", cc)
	}
	var tb seatMapTokenBody
	res.Decode(t, &tb)
	if !strings.HasPrefix(tb.Data.Token, "smt_") || tb.Data.EventID != event || tb.RequestID == "" {
		t.Fatalf("token answer: %s", res.Body)
	}
	return tb
}

// sameData fails unless both answers carry equal data (their request ids
// differ).
func sameData(t *testing.T, what string, a, b *testenv.Response) {
	t.Helper()
	if a.Status != http.StatusOK || b.Status != http.StatusOK {
		t.Fatalf("%s: %d %s / %d %s", what, a.Status, a.Body, b.Status, b.Body)
	}
	if da, db := a.JSON(t)["data"], b.JSON(t)["data"]; da == nil || !reflect.DeepEqual(da, db) {
		t.Fatalf("%s: /seat-map/v1 answers other data than /v1:\n%s\n%s", what, a.Body, b.Body)
	}
}

func TestSeatMapTokenReadsItsEvent(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	before := time.Now()
	tb := seatMapToken(t, f.URL, f.keyA, swan, "")
	if d := tb.Data.ExpiresAt.Sub(before); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("default life: expires in %v, want an hour", d)
	}
	tok := tb.Data.Token

	// A seat held with the key shows in the token's availability.
	if res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON("parterre-2-3")), idemKey(t)); res.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", res.Status, res.Body)
	}
	for _, part := range []string{"scheme", "availability"} {
		path := fmt.Sprintf("/events/%d/%s", swan, part)
		viaToken := f.Get(t, "/seat-map/v1"+path, tok)
		sameData(t, part, viaToken, f.Get(t, "/v1"+path, f.keyA))
		etag := viaToken.Header.Get("ETag")
		if etag == "" {
			t.Fatalf("%s: no ETag", part)
		}
		if res := f.Get(t, "/seat-map/v1"+path, tok, "If-None-Match: "+etag); res.Status != http.StatusNotModified || len(res.Body) != 0 {
			t.Fatalf("%s with its ETag: %d %s, want 304", part, res.Status, res.Body)
		}
		gz := f.Get(t, "/seat-map/v1"+path, tok, "Accept-Encoding: gzip")
		if gz.Status != http.StatusOK || gz.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s gzipped: %d %q", part, gz.Status, gz.Header.Get("Content-Encoding"))
		}
	}
	var a availability
	f.Get(t, fmt.Sprintf("/seat-map/v1/events/%d/availability", swan), tok).Decode(t, &a)
	if st := seatStatus(a, "parterre-2-3"); st != "reserved" {
		t.Fatalf("held seat shows %q through the token", st)
	}

	// Another event, the same company's: refused.
	other := f.ids["standup"]
	expectProblem(t, f.Get(t, fmt.Sprintf("/seat-map/v1/events/%d/availability", other), tok), http.StatusForbidden, "seat_map_token_elsewhere")
	expectProblem(t, f.Get(t, fmt.Sprintf("/seat-map/v1/events/%d/scheme", other), tok), http.StatusForbidden, "seat_map_token_elsewhere")

	// Keys and tokens each open only their own routes.
	res := f.Get(t, fmt.Sprintf("/seat-map/v1/events/%d/availability", swan), f.keyA)
	expectProblem(t, res, http.StatusUnauthorized, "seat_map_token_invalid")
	if res.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without a challenge")
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/seat-map/v1/events/%d/availability", swan), ""), http.StatusUnauthorized, "seat_map_token_invalid")
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/availability", swan), tok), http.StatusUnauthorized, "api_key_malformed")

	// The event must be one the key sees; the ttl is bounded.
	expectProblem(t, f.Do(t, http.MethodPost, fmt.Sprintf("/v1/events/%d/seat-map-tokens", f.foreignID), f.keyA, ""), http.StatusNotFound, "not_found")
	for _, body := range []string{`{"ttl_minutes": 0}`, `{"ttl_minutes": 241}`, `{"ttl": 5}`} {
		p := expectProblem(t, f.Do(t, http.MethodPost, fmt.Sprintf("/v1/events/%d/seat-map-tokens", swan), f.keyA, body),
			http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) == 0 || !strings.HasPrefix(p.Errors[0].Location, "body.") {
			t.Fatalf("%s: %+v", body, p)
		}
	}
	if tb := seatMapToken(t, f.URL, f.keyA, swan, `{"ttl_minutes": 240}`); tb.Data.ExpiresAt.Sub(before) < 239*time.Minute {
		t.Fatalf("ttl 240: expires at %v", tb.Data.ExpiresAt)
	}
	// A key without catalog:read makes none.
	orders, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeOrdersRead)
	expectProblem(t, f.Do(t, http.MethodPost, fmt.Sprintf("/v1/events/%d/seat-map-tokens", swan), orders, ""), http.StatusForbidden, "insufficient_scope")
}

func TestSeatMapTokenExpiresAndCannotBeForged(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	path := fmt.Sprintf("/seat-map/v1/events/%d/availability", swan)
	tok := seatMapToken(t, f.URL, f.keyA, swan, `{"ttl_minutes": 1}`).Data.Token
	if res := f.Get(t, path, tok); res.Status != http.StatusOK {
		t.Fatalf("fresh token: %d %s", res.Status, res.Body)
	}

	// Tampered: each character of the signed part changed in turn (a few
	// positions), another event's id spliced in, a token cut short.
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, "smt_"))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 3, 6, len(raw) / 2, len(raw) - 1} {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x04
		expectProblem(t, f.Get(t, path, "smt_"+base64.RawURLEncoding.EncodeToString(b)), http.StatusUnauthorized, "seat_map_token_invalid")
	}
	for _, forged := range []string{tok[:len(tok)-4], "smt_" + strings.Repeat("A", 60), "smt_не-токен", tok + "A", strings.Repeat("x", 5000)} {
		expectProblem(t, f.Get(t, path, forged), http.StatusUnauthorized, "seat_map_token_invalid")
	}

	// Past its expiry (the stack's clock moved on): 401 expired.
	f.Now = func() time.Time { return time.Now().Add(61 * time.Second) }
	p := expectProblem(t, f.Get(t, path, tok), http.StatusUnauthorized, "seat_map_token_expired")
	if !strings.Contains(p.Detail, "expired") {
		t.Fatalf("detail: %q", p.Detail)
	}
	f.Now = time.Now

	// A revoked key's tokens stop working with it.
	key, keyID := f.Key(t, f.companyA, apikey.Sandbox)
	tok = seatMapToken(t, f.URL, key, swan, "").Data.Token
	if res := f.Get(t, path, tok); res.Status != http.StatusOK {
		t.Fatalf("token of a live key: %d %s", res.Status, res.Body)
	}
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE api_keys SET revoked_at = now() WHERE id = ?", keyID); err != nil {
		t.Fatal(err)
	}
	expectProblem(t, f.Get(t, path, tok), http.StatusUnauthorized, "seat_map_token_invalid")
}

// A token signed before ORDER_TOKEN_SECRET was rotated still verifies
// while the old secret is listed in ORDER_TOKEN_PREVIOUS_SECRETS, and not
// once it is dropped; an order page link is no seat map token.
func TestSeatMapTokenSurvivesRotation(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	path := fmt.Sprintf("/seat-map/v1/events/%d/scheme", swan)
	old := seatMapToken(t, f.URL, f.keyA, swan, "").Data.Token
	const fresh = "a-fresh-secret-0123456789abcdef0123456789"
	listed, _ := f.Instance(t, func(c *config.Config) {
		c.OrderTokenSecret, c.OrderTokenPreviousSecret = fresh, []string{f.Config.OrderTokenSecret}
	}, api.ProcessOptions{})
	if res := testenv.Do(t, listed, http.MethodGet, path, old, ""); res.Status != http.StatusOK {
		t.Fatalf("old token with the old secret listed: %d %s", res.Status, res.Body)
	}
	newTok := seatMapToken(t, listed, f.keyA, swan, "").Data.Token
	if res := testenv.Do(t, listed, http.MethodGet, path, newTok, ""); res.Status != http.StatusOK {
		t.Fatalf("new token: %d %s", res.Status, res.Body)
	}
	dropped, _ := f.Instance(t, func(c *config.Config) { c.OrderTokenSecret, c.OrderTokenPreviousSecret = fresh, nil }, api.ProcessOptions{})
	expectProblem(t, testenv.Do(t, dropped, http.MethodGet, path, old, ""), http.StatusUnauthorized, "seat_map_token_invalid")
	if res := testenv.Do(t, dropped, http.MethodGet, path, newTok, ""); res.Status != http.StatusOK {
		t.Fatalf("token of the current secret: %d %s", res.Status, res.Body)
	}
}

// A token reads availability as the key that made it: its environment's
// application and that application's sales channel.
func TestSeatMapTokenSeesItsKeysChannelAndEnvironment(t *testing.T) {
	c := newChannels(t)
	c.allocate(t, c.reseller, distribution.Selector{Rows: []distribution.RowRange{{Zone: "parterre", From: "1", To: "1"}}})
	// A production key of the same application name sells in no channel:
	// channels are per environment.
	prodKey := c.KeyIn(t, c.companyA, apikey.Production, "shop")
	path := fmt.Sprintf("/events/%d/availability", c.swan)
	var seen [2]availability
	for i, key := range []string{c.resellerKey, prodKey} {
		tok := seatMapToken(t, c.URL, key, c.swan, "").Data.Token
		viaToken := c.Get(t, "/seat-map/v1"+path, tok)
		sameData(t, "availability", viaToken, c.Get(t, "/v1"+path, key))
		viaToken.Decode(t, &seen[i])
	}
	if st := seatStatus(seen[0], "parterre-1-1"); st != "free" {
		t.Fatalf("the sandbox reseller's token: its allocated seat shows %q", st)
	}
	if st := seatStatus(seen[1], "parterre-1-1"); st != "missing" {
		t.Fatalf("the production key's token sees the sandbox channel's seat: %q", st)
	}

	// A deployment that serves no sandbox refuses a sandbox key's token.
	tok := seatMapToken(t, c.URL, c.resellerKey, c.swan, "").Data.Token
	noSandbox, _ := c.Instance(t, func(cfg *config.Config) { cfg.SandboxEnabled = false }, api.ProcessOptions{})
	expectProblem(t, testenv.Do(t, noSandbox, http.MethodGet, "/seat-map/v1"+path, tok, ""), http.StatusUnauthorized, "seat_map_token_invalid")
}

// CORS: the seat map's routes answer any origin's preflight and expose
// what a poller reads; /v1 stays without CORS.
func TestSeatMapCORS(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	path := fmt.Sprintf("/seat-map/v1/events/%d/availability", swan)
	pre := f.Do(t, http.MethodOptions, path, "", "", "Origin: https://shop.example", "Access-Control-Request-Method: GET",
		"Access-Control-Request-Headers: authorization, if-none-match")
	if pre.Status != http.StatusNoContent {
		t.Fatalf("preflight: %d %s", pre.Status, pre.Body)
	}
	for h, want := range map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET",
		"Access-Control-Allow-Headers": "Authorization, If-None-Match", "Access-Control-Max-Age": "7200"} {
		if got := pre.Header.Get(h); got != want {
			t.Errorf("preflight %s: %q, want %q", h, got, want)
		}
	}
	tok := seatMapToken(t, f.URL, f.keyA, swan, "").Data.Token
	for _, res := range []*testenv.Response{f.Get(t, path, tok, "Origin: https://shop.example"), f.Get(t, path, "", "Origin: https://shop.example")} {
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "ETag") {
			t.Fatalf("%d answer's CORS headers: %v", res.Status, res.Header)
		}
	}
	v1 := f.Get(t, fmt.Sprintf("/v1/events/%d/availability", swan), f.keyA, "Origin: https://shop.example")
	if v1.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("/v1 answers with CORS headers")
	}
	if res := f.Do(t, http.MethodOptions, fmt.Sprintf("/v1/events/%d/availability", swan), "", "", "Origin: https://shop.example",
		"Access-Control-Request-Method: GET"); res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("/v1 answers a preflight: %d %v", res.Status, res.Header)
	}
}

// The seat map's budget is per client address and token: a page polling
// too fast gets 429 with Retry-After, another token is not affected.
func TestSeatMapRateLimit(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	url, _ := f.Instance(t, func(c *config.Config) { c.SeatMapRateRPS, c.SeatMapRateBurst = 0.01, 3 }, api.ProcessOptions{})
	path := fmt.Sprintf("/seat-map/v1/events/%d/availability", swan)
	tok := seatMapToken(t, url, f.keyA, swan, "").Data.Token
	for i := range 3 {
		res := testenv.Do(t, url, http.MethodGet, path, tok, "")
		if res.Status != http.StatusOK || res.Header.Get("RateLimit-Policy") == "" {
			t.Fatalf("request %d: %d %v", i+1, res.Status, res.Header)
		}
	}
	res := testenv.Do(t, url, http.MethodGet, path, tok, "")
	expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
	if res.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	other := seatMapToken(t, url, f.keyA, swan, "").Data.Token
	if res := testenv.Do(t, url, http.MethodGet, path, other, ""); res.Status != http.StatusOK {
		t.Fatalf("another token: %d %s", res.Status, res.Body)
	}
	// The key's own budget is untouched by its tokens' reads.
	if res := testenv.Do(t, url, http.MethodGet, path[len("/seat-map"):], f.keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("the key on /v1: %d %s", res.Status, res.Body)
	}
}

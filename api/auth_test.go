package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// A malformed key is refused on its shape: an instance whose key lookups go
// to a closed pool still answers 401, while a well-formed key, which does
// need its query, fails there.
func TestMalformedKeyNeedsNoQuery(t *testing.T) {
	s := testenv.NewStack(t)
	closed, err := store.Open(context.Background(), s.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	url := s.APIWith(t, func(d *api.Deps) { d.Auth = apikey.NewAuthenticator(closed, 0) })

	good, _, _ := apikey.Generate(apikey.Sandbox)
	for _, key := range []string{"nope", "tk_sandbox_nope", "tk_staging_" + good[len("tk_sandbox_"):],
		strings.ToUpper(good), good + "0", good[:len(good)-1] + "g"} {
		res := testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "")
		expectProblem(t, res, http.StatusUnauthorized, "api_key_malformed")
	}
	if res := testenv.Do(t, url, http.MethodGet, "/v1/cities", good, ""); res.Status < 500 {
		t.Fatalf("a well-formed key over a closed pool: %d %s; the lookup did not run", res.Status, res.Body)
	}
}

// Failed authentications are counted per client address: past its budget a
// client gets 429 before its key is looked at, even with a good key, while
// another client is unaffected. The address comes from the trusted proxy's
// header when one is configured, and the header is not believed otherwise.
func TestFailedAuthenticationsAreLimitedPerClient(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	good, _ := s.Key(t, company, apikey.Sandbox)
	revoked, revokedID := s.Key(t, company, apikey.Sandbox)
	if _, err := s.DB.ExecContext(context.Background(), "UPDATE api_keys SET revoked_at = now() WHERE id = ?", revokedID); err != nil {
		t.Fatal(err)
	}
	unknown, _, _ := apikey.Generate(apikey.Sandbox)
	limit := ratelimit.Limit{Rate: 0.05, Burst: 5} // then one failure per 20 s
	url := s.APIWith(t, func(d *api.Deps) {
		d.AuthFailures, d.ClientIPHeader = ratelimit.NewFailures(limit), "X-Real-IP"
	})
	from := func(addr, key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "", "X-Real-IP: "+addr)
	}

	// Missing, malformed, unknown and revoked keys all count.
	for key, code := range map[string]string{"": "api_key_missing", "nope": "api_key_malformed", unknown: "api_key_unknown", revoked: "api_key_unknown"} {
		expectProblem(t, from("203.0.113.7", key), http.StatusUnauthorized, code)
	}
	expectProblem(t, from("203.0.113.7", unknown), http.StatusUnauthorized, "api_key_unknown")
	res := from("203.0.113.7", unknown)
	expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 20 {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	expectProblem(t, from("203.0.113.7", good), http.StatusTooManyRequests, "rate_limited")
	if res := from("203.0.113.8", good); res.Status != http.StatusOK {
		t.Fatalf("good key from another address: %d %s", res.Status, res.Body)
	}
	expectProblem(t, from("203.0.113.8", unknown), http.StatusUnauthorized, "api_key_unknown")

	// Without a trusted header every request counts under the TCP peer,
	// whatever it claims.
	direct := s.APIWith(t, func(d *api.Deps) { d.AuthFailures = ratelimit.NewFailures(limit) })
	for i := 0; i < limit.Burst; i++ {
		res := testenv.Do(t, direct, http.MethodGet, "/v1/cities", unknown, "", fmt.Sprintf("X-Real-IP: 198.51.100.%d", i))
		expectProblem(t, res, http.StatusUnauthorized, "api_key_unknown")
	}
	expectProblem(t, testenv.Do(t, direct, http.MethodGet, "/v1/cities", good, "", "X-Real-IP: 198.51.100.99"),
		http.StatusTooManyRequests, "rate_limited")

	// A partner whose key the api knows (seen lately, cached) keeps working
	// from an address an attacker exhausted.
	cached := s.APIWith(t, func(d *api.Deps) {
		d.AuthFailures, d.ClientIPHeader = ratelimit.NewFailures(limit), "X-Real-IP"
		d.Auth = apikey.NewAuthenticator(s.DB, time.Minute)
	})
	if res := testenv.Do(t, cached, http.MethodGet, "/v1/cities", good, "", "X-Real-IP: 192.0.2.1"); res.Status != http.StatusOK {
		t.Fatalf("good key: %d", res.Status)
	}
	for i := 0; i < limit.Burst; i++ {
		testenv.Do(t, cached, http.MethodGet, "/v1/cities", unknown, "", "X-Real-IP: 192.0.2.1")
	}
	expectProblem(t, testenv.Do(t, cached, http.MethodGet, "/v1/cities", unknown, "", "X-Real-IP: 192.0.2.1"),
		http.StatusTooManyRequests, "rate_limited")
	if res := testenv.Do(t, cached, http.MethodGet, "/v1/cities", good, "", "X-Real-IP: 192.0.2.1"); res.Status != http.StatusOK {
		t.Fatalf("a known good key from an exhausted address: %d %s", res.Status, res.Body)
	}
	// Also when it was last seen longer ago than the cache keeps keys.
	shortCache := s.APIWith(t, func(d *api.Deps) {
		d.AuthFailures, d.ClientIPHeader = ratelimit.NewFailures(limit), "X-Real-IP"
		d.Auth = apikey.NewAuthenticator(s.DB, 10*time.Millisecond)
	})
	if res := testenv.Do(t, shortCache, http.MethodGet, "/v1/cities", good, "", "X-Real-IP: 192.0.2.2"); res.Status != http.StatusOK {
		t.Fatalf("good key: %d", res.Status)
	}
	time.Sleep(50 * time.Millisecond) // the cache has forgotten it
	for i := 0; i <= limit.Burst; i++ {
		testenv.Do(t, shortCache, http.MethodGet, "/v1/cities", unknown, "", "X-Real-IP: 192.0.2.2")
	}
	expectProblem(t, testenv.Do(t, shortCache, http.MethodGet, "/v1/cities", unknown, "", "X-Real-IP: 192.0.2.2"),
		http.StatusTooManyRequests, "rate_limited")
	if res := testenv.Do(t, shortCache, http.MethodGet, "/v1/cities", good, "", "X-Real-IP: 192.0.2.2"); res.Status != http.StatusOK {
		t.Fatalf("a good key idle longer than the cache, from an exhausted address: %d %s", res.Status, res.Body)
	}
}

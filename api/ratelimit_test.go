package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/test/testenv"
)

var rateLimitT = regexp.MustCompile(`^"default";r=(\d+);t=(\d+)$`)

func rateFields(t *testing.T, res *testenv.Response) (remaining, reset int) {
	t.Helper()
	m := rateLimitT.FindStringSubmatch(res.Header.Get("RateLimit"))
	if m == nil {
		t.Fatalf("RateLimit field %q", res.Header.Get("RateLimit"))
	}
	remaining, _ = strconv.Atoi(m[1])
	reset, _ = strconv.Atoi(m[2])
	return remaining, reset
}

func TestRateLimitPerKey(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	key, _ := s.Key(t, company, apikey.Sandbox)
	other, _ := s.Key(t, company, apikey.Sandbox)
	url := s.AnotherAPI(t, ratelimit.NewMemory(), ratelimit.Limit{Rate: 0.05, Burst: 3}) // a token per 20 s

	for i := 0; i < 3; i++ {
		res := testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "")
		if res.Status != 200 || res.Header.Get("RateLimit-Policy") != `"default";q=3;w=60` {
			t.Fatalf("request %d: %d, policy %q", i+1, res.Status, res.Header.Get("RateLimit-Policy"))
		}
		if r, _ := rateFields(t, res); r != 2-i {
			t.Fatalf("request %d: remaining %d", i+1, r)
		}
	}
	res := testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "")
	expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
	_, reset := rateFields(t, res)
	if ra := res.Header.Get("Retry-After"); ra == "" || ra != strconv.Itoa(reset) || reset < 1 || reset > 20 {
		t.Fatalf("Retry-After %q, RateLimit t=%d", ra, reset)
	}
	// Another key has its own budget.
	if res := testenv.Do(t, url, http.MethodGet, "/v1/cities", other, ""); res.Status != 200 {
		t.Fatalf("other key: %d", res.Status)
	}
	// A per-key limit overrides the default.
	fresh, freshID := s.Key(t, company, apikey.Sandbox)
	if _, err := s.DB.ExecContext(context.Background(), "UPDATE api_keys SET rate_limit_rps = 100, rate_limit_burst = 100 WHERE id = ?", freshID); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if res := testenv.Do(t, url, http.MethodGet, "/v1/cities", fresh, ""); res.Status != 200 ||
			res.Header.Get("RateLimit-Policy") != `"default";q=100;w=1` {
			t.Fatalf("per-key limit, request %d: %d %q", i+1, res.Status, res.Header.Get("RateLimit-Policy"))
		}
	}
}

func TestTwoInstancesShareOneBudgetThroughRedis(t *testing.T) {
	redisURL := os.Getenv("REDIS_URL")
	if redisURL == "" {
		redisURL = "redis://127.0.0.1:6379/0"
	}
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	key, _ := s.Key(t, company, apikey.Sandbox)
	other, _ := s.Key(t, company, apikey.Sandbox)
	prefix := fmt.Sprintf("test:%s:", s.TaskQueue) // this test's own keys in a shared Redis
	// One token per 20 s: no refill can blur the count, however slow the machine.
	limit := ratelimit.Limit{Rate: 0.05, Burst: 4}
	var urls []string
	for i := 0; i < 2; i++ {
		rl, err := ratelimit.NewRedis(redisURL, ratelimit.RedisOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, s.AnotherAPI(t, rl, limit))
	}
	allowed := 0
	for i := 0; i < 6; i++ {
		res := testenv.Do(t, urls[i%2], http.MethodGet, "/v1/cities", key, "")
		switch res.Status {
		case 200:
			allowed++
		case 429:
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		default:
			t.Fatalf("request %d: %d %s (is Redis running? make test starts it)", i+1, res.Status, res.Body)
		}
	}
	if allowed != 4 {
		t.Fatalf("two instances let %d of 6 requests through; one budget allows 4", allowed)
	}
	if res := testenv.Do(t, urls[1], http.MethodGet, "/v1/cities", other, ""); res.Status != 200 {
		t.Fatalf("other key throttled: %d", res.Status)
	}
}

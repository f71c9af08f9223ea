package api_test

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// Failed authentications of an IPv6 client count per /64: a client that
// changes its address at every attempt within its /64 is refused together
// (a good key included, before its lookup), while another /64 is not.
func TestFailedAuthenticationsCountPerIPv6Slash64(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	good, _ := s.Key(t, company, apikey.Sandbox)
	unknown, _, _ := apikey.Generate(apikey.Sandbox)
	limit := ratelimit.Limit{Rate: 0.05, Burst: 5} // then one failure per 20 s
	url := s.APIWith(t, func(d *api.Deps) {
		d.AuthFailures, d.ClientIPHeader = ratelimit.NewFailures(limit), "X-Real-IP"
	})
	from := func(addr, key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "", "X-Real-IP: "+addr)
	}
	for i := range limit.Burst {
		expectProblem(t, from(fmt.Sprintf("2001:db8:a:b:%x::%x", i, i+1), unknown), http.StatusUnauthorized, "api_key_unknown")
	}
	res := from("2001:db8:a:b:ffff:ffff:ffff:ffff", good)
	expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 20 {
		t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
	}
	expectProblem(t, from("2001:db8:a:b::99", unknown), http.StatusTooManyRequests, "rate_limited")
	if res := from("2001:db8:a:c::1", good); res.Status != http.StatusOK {
		t.Fatalf("good key from another /64: %d %s", res.Status, res.Body)
	}
	expectProblem(t, from("2001:db8:a:c::2", unknown), http.StatusUnauthorized, "api_key_unknown")
	// An IPv4 client is its address.
	for range limit.Burst {
		expectProblem(t, from("192.0.2.1", unknown), http.StatusUnauthorized, "api_key_unknown")
	}
	expectProblem(t, from("192.0.2.1", good), http.StatusTooManyRequests, "rate_limited")
	if res := from("192.0.2.2", good); res.Status != http.StatusOK {
		t.Fatalf("good key from the next IPv4 address: %d", res.Status)
	}
}

// authInstances builds two api instances of one deployment from the same
// settings: failed authentications limited per client (5, then one per
// 20 s) behind a proxy's X-Real-IP, with REDIS_URL as given.
func authInstances(t *testing.T, s *testenv.Stack, redisURL, prefix string) (a, b string) {
	t.Helper()
	edit := func(c *config.Config) {
		c.RedisURL, c.AuthFailureRPS, c.AuthFailureBurst, c.ClientIPHeader = redisURL, 0.05, 5, "X-Real-IP"
	}
	a, _ = s.Instance(t, edit, api.ProcessOptions{RedisPrefix: prefix})
	b, _ = s.Instance(t, edit, api.ProcessOptions{RedisPrefix: prefix})
	return a, b
}

// With REDIS_URL, failed authentications on one instance count on the
// other: a client cannot multiply its budget by the number of instances
// behind the balancer. Without it each instance has a budget of its own.
func TestFailedAuthBudgetSharedThroughRedis(t *testing.T) {
	redisURL, prefix := testenv.RedisURL(t)
	s := testenv.NewStack(t)
	company := s.Company(t, "A")
	good, _ := s.Key(t, company, apikey.Sandbox)
	unknown, _, _ := apikey.Generate(apikey.Sandbox)
	do := func(url, addr, key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "", "X-Real-IP: "+addr)
	}

	a, b := authInstances(t, s, redisURL, prefix)
	for i := range 5 {
		expectProblem(t, do([]string{a, b}[i%2], fmt.Sprintf("2001:db8:5:5::%x", i+1), unknown), http.StatusUnauthorized, "api_key_unknown")
	}
	for _, url := range []string{a, b} {
		res := do(url, "2001:db8:5:5::77", good)
		expectProblem(t, res, http.StatusTooManyRequests, "rate_limited")
		if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 20 {
			t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
		}
	}
	if res := do(b, "2001:db8:5:6::1", good); res.Status != http.StatusOK {
		t.Fatalf("another client: %d %s", res.Status, res.Body)
	}

	// Without REDIS_URL: per instance.
	a, b = authInstances(t, s, "", "")
	for range 5 {
		expectProblem(t, do(a, "198.51.100.7", unknown), http.StatusUnauthorized, "api_key_unknown")
	}
	expectProblem(t, do(a, "198.51.100.7", good), http.StatusTooManyRequests, "rate_limited")
	if res := do(b, "198.51.100.7", good); res.Status != http.StatusOK {
		t.Fatalf("the other instance without Redis: %d %s", res.Status, res.Body)
	}
	expectProblem(t, do(b, "198.51.100.7", unknown), http.StatusUnauthorized, "api_key_unknown")
}

// With REDIS_URL, the cabinet's sign-in budgets are one for every
// instance: wrong passwords for one e-mail from one client, spread over
// two instances, exhaust its budget of five on both.
func TestSignInBudgetsSharedThroughRedis(t *testing.T) {
	redisURL, prefix := testenv.RedisURL(t)
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	edit := func(c *config.Config) { c.RedisURL, c.ClientIPHeader = redisURL, "X-Forwarded-For" }
	a, _ := s.Instance(t, edit, api.ProcessOptions{RedisPrefix: prefix})
	b, _ := s.Instance(t, edit, api.ProcessOptions{RedisPrefix: prefix})
	newBrowserless(t, a, nil).setPassword(cabinetUser(t, s, a, company, "boss@acme.test"))

	for i := range 5 {
		if st := signInFrom(t, []string{a, b}[i%2], "203.0.113.7", "boss@acme.test", "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d", i+1, st)
		}
	}
	for _, url := range []string{a, b} {
		if st := signInFrom(t, url, "203.0.113.7", "boss@acme.test", cabinetPassword); st != http.StatusTooManyRequests {
			t.Fatalf("sixth attempt: %d, want 429 on both instances", st)
		}
	}
	if st := signInFrom(t, b, "203.0.113.8", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("another client: %d", st)
	}

	// Without REDIS_URL each instance counts its own.
	edit = func(c *config.Config) { c.ClientIPHeader = "X-Forwarded-For" }
	a, _ = s.Instance(t, edit, api.ProcessOptions{})
	b, _ = s.Instance(t, edit, api.ProcessOptions{})
	for range 5 {
		if st := signInFrom(t, a, "198.51.100.9", "boss@acme.test", "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", st)
		}
	}
	if st := signInFrom(t, a, "198.51.100.9", "boss@acme.test", cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("sixth attempt on the same instance: %d", st)
	}
	if st := signInFrom(t, b, "198.51.100.9", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("the other instance without Redis: %d", st)
	}
}

// A REDIS_URL that does not answer stops nothing and makes nothing free:
// failed authentications and sign-ins are still limited (in the instance's
// memory), nothing answers 500, and the fallback is counted.
func TestFailureBudgetsWithoutReachableRedis(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	good, _ := s.Key(t, company, apikey.Sandbox)
	unknown, _, _ := apikey.Generate(apikey.Sandbox)
	url, _ := s.Instance(t, func(c *config.Config) {
		c.RedisURL = "redis://127.0.0.1:1/0" // nothing listens on port 1
		c.AuthFailureRPS, c.AuthFailureBurst, c.ClientIPHeader = 0.05, 5, "X-Forwarded-For"
	}, api.ProcessOptions{})
	do := func(addr, key string) *testenv.Response {
		return testenv.Do(t, url, http.MethodGet, "/v1/cities", key, "", "X-Forwarded-For: "+addr)
	}
	for range 5 {
		expectProblem(t, do("203.0.113.7", unknown), http.StatusUnauthorized, "api_key_unknown")
	}
	expectProblem(t, do("203.0.113.7", good), http.StatusTooManyRequests, "rate_limited")
	if res := do("203.0.113.8", good); res.Status != http.StatusOK {
		t.Fatalf("good key from another client: %d %s", res.Status, res.Body)
	}

	newBrowserless(t, url, nil).setPassword(cabinetUser(t, s, url, company, "boss@acme.test"))
	for range 5 {
		if st := signInFrom(t, url, "198.51.100.1", "boss@acme.test", "wrong password!"); st != http.StatusUnauthorized {
			t.Fatalf("wrong password: %d", st)
		}
	}
	if st := signInFrom(t, url, "198.51.100.1", "boss@acme.test", cabinetPassword); st != http.StatusTooManyRequests {
		t.Fatalf("sixth attempt: %d", st)
	}
	if st := signInFrom(t, url, "198.51.100.2", "boss@acme.test", cabinetPassword); st != http.StatusSeeOther {
		t.Fatalf("right password from another client: %d", st)
	}
	for _, budget := range []string{"auth", "signin-account"} {
		if n := testutil.ToFloat64(s.Metrics.RedisFallbacks.WithLabelValues(budget)); n == 0 {
			t.Errorf("no fallback of budget %s counted", budget)
		}
	}
}

// Many sign-ins at once (argon2id: 64 MiB and two cores each) do not starve
// selling: password checks never run more at once than the process's cap,
// sign-ins beyond it wait or are refused with Retry-After, and /v1 requests
// sent meanwhile are all answered, many of them while checks run.
func TestCabinetSignInsDoNotStarveSelling(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	key, _ := s.Key(t, company, apikey.Sandbox)
	url, p := s.Instance(t, func(c *config.Config) {
		c.CabinetPasswordChecks, c.ClientIPHeader = 1, "X-Forwarded-For"
	}, api.ProcessOptions{})
	newBrowserless(t, url, nil).setPassword(cabinetUser(t, s, url, company, "boss@acme.test"))

	const clients, perClient = 8, 4
	// round sends the sign-ins (from addresses of its own, so one round's
	// refusals do not carry into the next) beside /v1 requests until they
	// end, and checks what must hold every time.
	round := func(r int) (answered, duringChecks int) {
		var signIns sync.WaitGroup
		var mu sync.Mutex
		statuses := map[int]int{}
		start := make(chan struct{})
		for c := range clients {
			for i := range perClient {
				signIns.Add(1)
				go func() {
					defer signIns.Done()
					<-start
					pw := cabinetPassword
					if i%2 == 1 {
						pw = "wrong password!"
					}
					st := signInFrom(t, url, fmt.Sprintf("198.51.%d.%d", 100+r, c+1), "boss@acme.test", pw)
					mu.Lock()
					statuses[st]++
					mu.Unlock()
				}()
			}
		}
		done := make(chan struct{})
		go func() { signIns.Wait(); close(done) }()

		var selling sync.WaitGroup
		failed := 0
		for range 4 {
			selling.Add(1)
			go func() {
				defer selling.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					res, err := testenv.Send(http.DefaultClient, testenv.NewRequest(t, http.MethodGet, url+"/v1/cities", key, ""))
					running := p.Users.ChecksRunning()
					mu.Lock()
					if err != nil || res.Status != http.StatusOK {
						failed++
					} else {
						answered++
						if running > 0 {
							duringChecks++
						}
					}
					mu.Unlock()
				}
			}()
		}
		close(start)
		selling.Wait()

		if failed > 0 || answered == 0 {
			t.Fatalf("round %d: /v1 during the sign-ins: %d answered, %d failed", r, answered, failed)
		}
		if most := p.Users.MostChecksAtOnce(); most != 1 {
			t.Fatalf("%d password checks ran at once, the cap is 1", most)
		}
		total := 0
		for st, n := range statuses {
			switch st {
			case http.StatusSeeOther, http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusServiceUnavailable:
			default:
				t.Fatalf("round %d: sign-in statuses %v", r, statuses)
			}
			total += n
		}
		if total != clients*perClient {
			t.Fatalf("round %d: sign-in statuses %v", r, statuses)
		}
		t.Logf("round %d: /v1: %d answered, %d while checks ran; sign-ins: %v", r, answered, duringChecks, statuses)
		return answered, duringChecks
	}
	// Whether an answer lands while a check runs is a matter of timing: on
	// a machine loaded by other tests a round can see none by chance, so
	// up to three rounds are given; selling starved by the checks sees
	// none in any.
	for r := 1; ; r++ {
		answered, during := round(r)
		if during > 0 {
			break
		}
		if r == 3 {
			t.Fatalf("in %d rounds no /v1 request was answered while a password check ran (the last: %d answered)", r, answered)
		}
	}
}

// One client's parallel sign-ins run their password checks one at a time,
// however many slots the process has: a client queues behind its own
// attempts and cannot take every slot. (The sixth is refused: each attempt
// spends a failure of the client's five for the e-mail until it succeeds.)
func TestCabinetOneCheckAtATimePerClient(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	url, p := s.Instance(t, func(c *config.Config) {
		c.CabinetPasswordChecks, c.ClientIPHeader = 4, "X-Forwarded-For"
	}, api.ProcessOptions{})
	newBrowserless(t, url, nil).setPassword(cabinetUser(t, s, url, company, "boss@acme.test"))

	var wg sync.WaitGroup
	statuses := make([]int, 6)
	start := make(chan struct{})
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Addresses of one /64: one client.
			statuses[i] = signInFrom(t, url, fmt.Sprintf("2001:db8:7:7::%x", i+1), "boss@acme.test", cabinetPassword)
		}()
	}
	close(start)
	wg.Wait()
	for _, st := range statuses {
		if st != http.StatusSeeOther && st != http.StatusServiceUnavailable && st != http.StatusTooManyRequests {
			t.Fatalf("statuses %v", statuses)
		}
	}
	if most := p.Users.MostChecksAtOnce(); most != 1 {
		t.Fatalf("%d password checks of one client ran at once (statuses %v)", most, statuses)
	}
}

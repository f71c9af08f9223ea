package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/testenv"
)

func TestRefundReturnsMoneyOncePerKey(t *testing.T) {
	ctx := context.Background()
	db, _ := testenv.DB(t)
	g := &payment.TestGateway{DB: db, BaseURL: "http://gw.test"}
	p, err := g.CreatePayment(ctx, payment.Request{OrderID: 1, Amount: 1000, Currency: "RUB", Description: "x"})
	if err != nil || p.URL != "http://gw.test/pay/"+p.ID {
		t.Fatalf("create: %+v %v", p, err)
	}
	// Nothing is refunded from an unpaid payment.
	if err := g.Refund(ctx, p.ID, "rf_0", 100); !errors.Is(err, payment.ErrRefundExceedsPayment) {
		t.Fatalf("refund of an unpaid payment: %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE gateway_payments SET status = 'paid' WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	page := func() string {
		t.Helper()
		rec := httptest.NewRecorder()
		g.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/pay/"+p.ID, nil))
		return rec.Body.String()
	}
	if body := page(); !strings.Contains(body, "Payment accepted.") {
		t.Fatalf("page of a paid payment:\n%s", body)
	}
	for i := 0; i < 3; i++ { // a retried refund returns money once
		if err := g.Refund(ctx, p.ID, "rf_1", 600); err != nil {
			t.Fatalf("refund #%d: %v", i+1, err)
		}
	}
	if body := page(); !strings.Contains(body, "6.00 RUB of it refunded") || strings.Contains(body, `id="pay"`) {
		t.Fatalf("page of a partly refunded payment:\n%s", body)
	}
	if err := g.Refund(ctx, p.ID, "rf_2", 500); !errors.Is(err, payment.ErrRefundExceedsPayment) {
		t.Fatalf("over-refund: %v", err)
	}
	if err := g.Refund(ctx, p.ID, "rf_3", 400); err != nil {
		t.Fatal(err)
	}
	var refunded int64
	if err := db.NewRaw("SELECT refunded FROM gateway_payments WHERE id = ?", p.ID).Scan(ctx, &refunded); err != nil || refunded != 1000 {
		t.Fatalf("refunded %d (%v), want 1000", refunded, err)
	}
	if body := page(); !strings.Contains(body, "Payment refunded: 10.00 RUB went back") {
		t.Fatalf("page of a refunded payment:\n%s", body)
	}
}

func TestCallbackSignature(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"payment_id":"pay_1","order_id":1,"status":"paid"}`)
	sig := payment.Sign(secret, body)
	if !payment.Verify(secret, body, sig) {
		t.Fatal("a correct signature was refused")
	}
	if payment.Verify([]byte("other"), body, sig) || payment.Verify(secret, append(body, ' '), sig) || payment.Verify(secret, body, "") {
		t.Fatal("a wrong signature was accepted")
	}
}

// TestTakenPaymentIsReportedUntilAcknowledged: a callback the service did
// not acknowledge (it was down, or refused it with anything but 409/422)
// goes again, from the redelivery loop or a
// second click on Pay, and stops once acknowledged; declining again sends
// nothing.
func TestTakenPaymentIsReportedUntilAcknowledged(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, _ := testenv.DB(t)
	var mu sync.Mutex
	var got []payment.Callback
	up := true
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var cb payment.Callback
		_ = json.NewDecoder(r.Body).Decode(&cb)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cb)
		if !up {
			// Not ready for it: a 401 (the callback secret not yet rolled
			// out) mends like a 503, so it is retried too.
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer service.Close()
	g := &payment.TestGateway{DB: db, CallbackURL: service.URL, Secret: []byte("k"), Log: slog.Default()}
	pages := httptest.NewServer(g.Handler())
	defer pages.Close()
	p, err := g.CreatePayment(ctx, payment.Request{OrderID: 7, Amount: 1000, Currency: "RUB", Description: "x"})
	if err != nil {
		t.Fatal(err)
	}
	press := func(action string) {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := c.PostForm(pages.URL+"/pay/"+p.ID, url.Values{"action": {action}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	count := func(status states.GatewayResult) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, cb := range got {
			if cb.Status == status {
				n++
			}
		}
		return n
	}
	press("decline")
	press("decline")
	if n := count("declined"); n != 1 {
		t.Fatalf("%d decline callbacks for two clicks on a declined payment, want 1", n)
	}
	mu.Lock()
	up = false
	mu.Unlock()
	press("pay") // the service is down: three attempts, none acknowledged
	if n := count("paid"); n != 3 {
		t.Fatalf("%d paid callbacks while the service is down, want 3 attempts", n)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	go g.Redeliver(ctx, 100*time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); count("paid") < 4 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	time.Sleep(500 * time.Millisecond)
	press("pay") // acknowledged already: nothing more
	if n := count("paid"); n != 4 {
		t.Fatalf("%d paid callbacks, want 4 (three refused, one acknowledged)", n)
	}
	if got[len(got)-1].Amount != 1000 || got[len(got)-1].Currency != "RUB" || got[len(got)-1].OrderID != 7 {
		t.Fatalf("callback %+v", got[len(got)-1])
	}
}

// TestConcurrentRefundsReturnMoneyOnce: the same refund sent twice at once
// (a workflow and the reaper) succeeds twice and returns money once; two
// refunds whose sum exceeds the payment never both pass.
func TestConcurrentRefundsReturnMoneyOnce(t *testing.T) {
	ctx := context.Background()
	db, _ := testenv.DB(t)
	g := &payment.TestGateway{DB: db}
	for round := 0; round < 5; round++ {
		p, err := g.CreatePayment(ctx, payment.Request{OrderID: int64(round), Amount: 1000, Currency: "RUB", Description: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE gateway_payments SET status = 'paid' WHERE id = ?", p.ID); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprintf("same-%d", round) // two of each key
				if i >= 2 {
					key = fmt.Sprintf("other-%d-%d", round, i)
				}
				errs[i] = g.Refund(ctx, p.ID, key, 600)
			}()
		}
		wg.Wait()
		var refunded int64
		if err := db.NewRaw("SELECT refunded FROM gateway_payments WHERE id = ?", p.ID).Scan(ctx, &refunded); err != nil {
			t.Fatal(err)
		}
		if refunded != 600 {
			t.Fatalf("round %d: refunded %d of 1000 (errors %v)", round, refunded, errs)
		}
		if errs[0] != nil && errs[1] != nil && errs[2] != nil && errs[3] != nil {
			t.Fatalf("round %d: every refund failed: %v", round, errs)
		}
	}
}

// TestHostedGatewayRetriesBusyAnswers: 408, 409 (the same Idempotency-Key
// in progress) and 429 may be retried; other 4xx refuse for good.
func TestHostedGatewayRetriesBusyAnswers(t *testing.T) {
	for _, c := range []struct {
		status int
		final  bool
	}{{409, false}, {429, false}, {408, false}, {503, false}, {422, true}, {404, true}} {
		provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(c.status) }))
		g := &payment.HostedGateway{URL: provider.URL, APIKey: "k"}
		err := g.Refund(context.Background(), "hp_1", "key", 100)
		provider.Close()
		if err == nil || errors.Is(err, payment.ErrRefused) != c.final {
			t.Errorf("%d: %v, want final=%v", c.status, err, c.final)
		}
	}
}

package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/test/testenv"
	"github.com/ticketsales/ticketsales/test/testenv/fakegateway"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func testGatewayRefunded(t *testing.T, db bun.IDB, orderID int64) int64 {
	t.Helper()
	var n int64
	if err := db.NewRaw("SELECT coalesce(sum(refunded), 0) FROM gateway_payments WHERE order_id = ?", orderID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProductionPaymentsNeverGoToTheTestGateway: outside development a
// production order never gets the test gateway's Pay button: without a
// configured provider payment=gateway is refused, with one the buyer pays
// there; sandbox orders keep the test gateway.
func TestProductionPaymentsNeverGoToTheTestGateway(t *testing.T) {
	t.Parallel()
	t.Run("no provider", func(t *testing.T) {
		f := newFixture(t, testenv.Options{Production: true})
		prod, _ := f.Key(t, f.companyA, apikey.Production)
		var r reservationBody
		f.reserve(t, prod, "parterre-1-1").Decode(t, &r)
		p := expectProblem(t, f.orderFromReservation(t, prod, r.Data.ID, "gateway"), http.StatusUnprocessableEntity, "gateway_unavailable")
		if !strings.Contains(p.Detail, "payment=external") {
			t.Fatalf("detail does not say what to do: %q", p.Detail)
		}
		var orders int
		if err := f.DB.NewRaw("SELECT count(*) FROM orders").Scan(context.Background(), &orders); err != nil || orders != 0 {
			t.Fatalf("%d orders after a refused create (%v)", orders, err)
		}
		if got := f.Get(t, "/v1/reservations/"+r.Data.ID, prod); !strings.Contains(string(got.Body), `"status":"reserved"`) {
			t.Fatalf("the reservation changed: %s", got.Body)
		}
		// The same reservation can still be ordered and paid by the partner.
		if res := f.orderFromReservation(t, prod, r.Data.ID, "external"); res.Status != 201 {
			t.Fatalf("external order: %d %s", res.Status, res.Body)
		}
		// Sandbox orders use the test gateway.
		o := f.gatewayOrder(t, f.keyA, "parterre-1-2")
		if !strings.HasPrefix(o.PaymentURL, f.URL+"/pay/") {
			t.Fatalf("sandbox payment_url %q", o.PaymentURL)
		}
	})

	t.Run("hosted provider", func(t *testing.T) {
		provider := fakegateway.Start(t, testenv.GatewaySecret)
		f := newFixture(t, testenv.Options{Production: true, HostedGatewayURL: provider.URL})
		f.StartWorker(t)
		prod, _ := f.Key(t, f.companyA, apikey.Production)
		o := f.gatewayOrder(t, prod, "parterre-1-3")
		pay := provider.PaymentOf(o.ID)
		if pay == "" || o.PaymentURL != provider.URL+"/pay/"+pay {
			t.Fatalf("payment_url %q, provider payment %q", o.PaymentURL, pay)
		}
		// The test gateway knows nothing of it: no Pay button for real money.
		if res := f.Get(t, "/pay/"+pay, ""); res.Status != http.StatusNotFound {
			t.Fatalf("test gateway page of a production payment: %d", res.Status)
		}
		// A callback signed as the test gateway cannot pay it either.
		body, _ := json.Marshal(payment.Callback{PaymentID: pay, OrderID: o.ID, Status: "paid", Amount: o.Amount.Amount, Currency: "RUB"})
		res := f.Do(t, http.MethodPost, payment.TestCallbackPath, "", string(body),
			"X-Gateway-Signature: "+payment.Sign(payment.TestCallbackKey(testenv.GatewaySecret), body))
		if res.Status != http.StatusNoContent {
			t.Fatalf("test callback: %d %s", res.Status, res.Body)
		}
		time.Sleep(500 * time.Millisecond)
		if st := f.orderStatus2(t, prod, o.ID).Status; st != "pending_payment" {
			t.Fatalf("a test-gateway callback moved the production order to %s", st)
		}
		// The provider's own report pays it.
		if code := provider.Pay(t, pay); code != http.StatusNoContent {
			t.Fatalf("provider callback: %d", code)
		}
		f.awaitOrderStatus(t, prod, o.ID, "paid")
	})

	t.Run("sandbox disabled", func(t *testing.T) {
		f := newFixture(t, testenv.Options{Production: true, SandboxDisabled: true})
		if f.Gateway != nil {
			t.Fatal("the test gateway is mounted")
		}
		if res := f.Get(t, "/pay/pay_x", ""); res.Status != http.StatusNotFound {
			t.Fatalf("/pay/: %d", res.Status)
		}
		expectProblem(t, f.Get(t, "/v1/events", f.keyA), http.StatusUnauthorized, "api_key_unknown")
	})
}

// TestOrderLinksAreRandomAndSurviveRotation: the order page token is not
// derived from the order id with a secret (anyone holding the secret could
// open every order), and rotating the secret breaks no link sent.
func TestOrderLinksAreRandomAndSurviveRotation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-1-1")
	link := f.tickets(t, id)[0].OrderURL
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("access_token")
	if raw, err := base64.RawURLEncoding.DecodeString(token); err != nil || len(raw) != 32 {
		t.Fatalf("token %q is not 32 bytes (%v)", token, err)
	}
	m := hmac.New(sha256.New, []byte("test-token-secret"))
	m.Write([]byte(fmt.Sprintf("order-page:%d", id)))
	if token == base64.RawURLEncoding.EncodeToString(m.Sum(nil)) {
		t.Fatal("the token is derived from the order id")
	}
	var stored struct {
		Hash, Sealed []byte
	}
	if err := f.DB.NewRaw("SELECT access_token_hash AS hash, access_token_sealed AS sealed FROM orders WHERE id = ?", id).
		Scan(context.Background(), &stored); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(token)); string(stored.Hash) != string(sum[:]) || strings.Contains(string(stored.Sealed), token) {
		t.Fatal("the store holds more of the token than its hash and a sealed copy")
	}
	other := f.paidOrder(t, f.keyA, "parterre-1-2")
	if f.tickets(t, other)[0].OrderURL == strings.Replace(link, fmt.Sprint(id), fmt.Sprint(other), 1) {
		t.Fatal("two orders share a token")
	}

	page := func() int {
		return f.Get(t, strings.TrimPrefix(link, f.URL), "").Status
	}
	// Rotation keeping the old secret: the link works and is shown unchanged.
	keys, err := delivery.NewKeyring("a-brand-new-secret", "test-token-secret")
	if err != nil {
		t.Fatal(err)
	}
	f.Orders.Settings.Links.Keys = keys
	if page() != 200 || f.tickets(t, id)[0].OrderURL != link {
		t.Fatal("the link changed or broke after a rotation")
	}
	// Even a rotation that forgot the old secret breaks no sent link.
	keys, _ = delivery.NewKeyring("another-secret")
	f.Orders.Settings.Links.Keys = keys
	if page() != 200 {
		t.Fatal("a sent link broke when the secret changed")
	}
}

// TestPaymentForAnOrderThatLostASeatGoesBack: a gateway payment the order
// cannot take (a seat of it was retaken) is recorded, never applied, and
// returned; it is not retried forever.
func TestPaymentForAnOrderThatLostASeatGoesBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	o := f.gatewayOrder(t, f.keyA, "parterre-2-5")
	// Another hold has the seat (as after a lapse in another clock).
	if _, err := f.DB.ExecContext(context.Background(), `UPDATE event_seats SET hold_id = 'rsv_other', order_id = NULL,
		hold_expires_at = now() + interval '1 hour' WHERE seat_id = 'parterre-2-5'`); err != nil {
		t.Fatal(err)
	}
	payOnTestGateway(t, o.PaymentURL, "pay")
	for deadline := time.Now().Add(15 * time.Second); testGatewayRefunded(t, f.DB, o.ID) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if got := testGatewayRefunded(t, f.DB, o.ID); got != o.Amount.Amount {
		t.Fatalf("returned %d of %d", got, o.Amount.Amount)
	}
	var reason string
	if err := f.DB.NewRaw("SELECT refund_reason FROM payments WHERE order_id = ?", o.ID).Scan(context.Background(), &reason); err != nil || reason != "seats_lost" {
		t.Fatalf("payment refund reason %q (%v)", reason, err)
	}
	if st := f.orderStatus(t, o.ID).Status; st != "pending_payment" {
		t.Fatalf("order %s", st)
	}
	testenv.CheckPayments(t, f.DB, 5*time.Second)
}

// TestPaymentIsRecordedWhenTemporalIsDown: the callback is acknowledged once
// the payment is on record, even when the order's workflow cannot be told;
// the reaper tells it later and the order is paid.
func TestPaymentIsRecordedWhenTemporalIsDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	o := f.gatewayOrder(t, f.keyA, "parterre-2-6")
	var paymentID string
	if err := f.DB.NewRaw("SELECT payment_id FROM orders WHERE id = ?", o.ID).Scan(context.Background(), &paymentID); err != nil {
		t.Fatal(err)
	}
	down, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: app.TemporalLogger(testenv.Log())})
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	cut := f.APIWithTemporal(t, down)
	body, _ := json.Marshal(payment.Callback{PaymentID: paymentID, OrderID: o.ID, Status: "paid", Amount: o.Amount.Amount, Currency: "RUB"})
	res := testenv.Do(t, cut, http.MethodPost, payment.TestCallbackPath, "", string(body),
		"X-Gateway-Signature: "+payment.Sign(payment.TestCallbackKey(testenv.GatewaySecret), body))
	if res.Status != http.StatusNoContent {
		t.Fatalf("callback with Temporal down: %d %s", res.Status, res.Body)
	}
	var status string
	if err := f.DB.NewRaw("SELECT status FROM payments WHERE id = ?", paymentID).Scan(context.Background(), &status); err != nil || status != "received" {
		t.Fatalf("payment %q (%v)", status, err)
	}
	f.StartReaper(t, 200*time.Millisecond, time.Second, time.Hour)
	f.awaitOrderStatus(t, f.keyA, o.ID, "paid")
	if n := len(f.tickets(t, o.ID)); n != 1 {
		t.Fatalf("%d tickets", n)
	}
	testenv.CheckPayments(t, f.DB, 5*time.Second)
}

// TestPaymentAfterTheSagaEndedGoesBack: the order's workflow is gone (here:
// terminated) when the buyer pays; the payment is recorded and, once the
// order is closed, returned by the reaper.
func TestPaymentAfterTheSagaEndedGoesBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.Orders.Settings.PaymentWindow = 3 * time.Second
	f.StartWorker(t)
	o := f.gatewayOrder(t, f.keyA, "parterre-2-7")
	if err := f.Temporal.TerminateWorkflow(context.Background(), contract.OrderWorkflowID(o.ID), "", "test: the saga is gone"); err != nil {
		t.Fatal(err)
	}
	payOnTestGateway(t, o.PaymentURL, "pay")
	f.StartReaper(t, 200*time.Millisecond, time.Second, time.Hour)
	f.awaitOrderStatus(t, f.keyA, o.ID, "cancelled")
	for deadline := time.Now().Add(15 * time.Second); testGatewayRefunded(t, f.DB, o.ID) == 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if got := testGatewayRefunded(t, f.DB, o.ID); got != o.Amount.Amount {
		t.Fatalf("returned %d of %d", got, o.Amount.Amount)
	}
	testenv.CheckPayments(t, f.DB, 5*time.Second)
}

// TestDeclineClicksDoNotGrowTheWorkflowHistory: a buyer pressing Decline
// again and again sends the order's workflow nothing; the payment is one
// signal.
func TestDeclineClicksDoNotGrowTheWorkflowHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	o := f.gatewayOrder(t, f.keyA, "parterre-2-8")
	for i := 0; i < 30; i++ {
		payOnTestGateway(t, o.PaymentURL, "decline")
	}
	payOnTestGateway(t, o.PaymentURL, "pay")
	// A client that follows the 303 (curl -L, most HTTP libraries) ends at
	// the page: an answer the document declares too.
	req := testenv.NewRequest(t, http.MethodPost, o.PaymentURL, "", "", "Content-Type: application/x-www-form-urlencoded")
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader("action=pay")), int64(len("action=pay"))
	if res, err := testenv.Send(http.DefaultClient, req); err != nil || res.Status != http.StatusOK ||
		!strings.Contains(string(res.Body), "Payment accepted") {
		t.Fatalf("pay, following the redirect: %v %v", res, err)
	}
	f.awaitOrderStatus(t, f.keyA, o.ID, "paid")
	signals := 0
	it := f.Temporal.GetWorkflowHistory(context.Background(), contract.OrderWorkflowID(o.ID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.GetEventType() == enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			signals++
		}
	}
	if signals != 1 {
		t.Fatalf("%d signals in the order's history, want 1", signals)
	}
}

// queryLog records the SQL a bun.DB runs while on.
type queryLog struct {
	mu      sync.Mutex
	on      bool
	queries []string
}

func (q *queryLog) saw(query string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.on {
		q.queries = append(q.queries, query)
	}
}

func (q *queryLog) record(on bool) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.on = on
	return q.queries
}

// TestOrderPageChecksTheTokenFirst: a wrong access_token is refused from the
// token's hash alone; nothing else of the order is read for it.
func TestOrderPageChecksTheTokenFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stop := f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-2-9")
	link := strings.TrimPrefix(f.tickets(t, id)[0].OrderURL, f.URL)
	stop()
	log := &queryLog{}
	testenv.WatchQueries(f.DB, "", log.saw) // bun's statements and the prepared ones
	log.record(true)
	wrong := fmt.Sprintf("/o/%d?access_token=%s", id, strings.Repeat("A", 43))
	if res := f.Get(t, wrong, ""); res.Status != http.StatusNotFound {
		t.Fatalf("wrong token: %d", res.Status)
	}
	queries := log.record(false)
	if len(queries) == 0 {
		t.Fatal("no query recorded: the hook sees nothing")
	}
	for _, q := range queries {
		if strings.Contains(q, "tickets") || strings.Contains(q, "venues") {
			t.Fatalf("a wrong token read the order's tickets or event: %s", q)
		}
	}
	// The right token reads the tickets, through a prepared statement the
	// log sees too.
	log.record(true)
	if res := f.Get(t, link, ""); res.Status != 200 {
		t.Fatalf("right token: %d", res.Status)
	}
	if !slices.ContainsFunc(log.record(false), func(q string) bool { return strings.Contains(q, "FROM tickets t") }) {
		t.Fatal("the order page's read of its tickets went unseen: the log misses prepared statements")
	}
}

// TestForgeableOldLinksOpenNothing: an order made before tokens were random
// whose token was derived from the public development secret: outside
// development its old link opens nothing, and its tickets show a fresh,
// working link instead.
func TestForgeableOldLinksOpenNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, testenv.Options{Production: true})
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-2-10")
	m := hmac.New(sha256.New, []byte("dev-order-token-secret"))
	m.Write([]byte(fmt.Sprintf("order-page:%d", id)))
	old := base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	if _, err := f.DB.ExecContext(context.Background(), "UPDATE orders SET access_token_hash = ?, access_token_sealed = NULL WHERE id = ?",
		delivery.TokenHash(old), id); err != nil {
		t.Fatal(err)
	}
	if res := f.Get(t, fmt.Sprintf("/o/%d?access_token=%s", id, old), ""); res.Status != http.StatusNotFound {
		t.Fatalf("a forgeable link opened the order page: %d", res.Status)
	}
	link := f.tickets(t, id)[0].OrderURL
	if strings.Contains(link, old) || f.Get(t, strings.TrimPrefix(link, f.URL), "").Status != 200 {
		t.Fatalf("the fresh link %q does not open the page", link)
	}
	if f.tickets(t, id)[0].OrderURL != link {
		t.Fatal("the fresh link changed again")
	}
}

// TestTestGatewayUnknownPayment: the test gateway's page of a payment that
// does not exist is 404, read or posted (as the document declares), and a
// post reports nothing to the service.
func TestTestGatewayUnknownPayment(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, action := range []string{"pay", "decline"} {
		res, err := noFollow.PostForm(f.URL+"/pay/pay_unknown", url.Values{"action": {action}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Fatalf("POST /pay/pay_unknown action=%s: %d %s", action, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if res := f.Get(t, "/pay/pay_unknown", ""); res.Status != http.StatusNotFound {
		t.Fatalf("GET /pay/pay_unknown: %d", res.Status)
	}
}

package payment

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// SignatureHeader carries the HMAC-SHA256 of a callback body.
const SignatureHeader = "X-Gateway-Signature"

// Callback paths: the hosted provider reports to CallbackPath, the test
// gateway to TestCallbackPath, each verified with its own key, so neither
// can speak for the other.
const (
	CallbackPath     = "/gateway/callback"
	TestCallbackPath = "/gateway/test/callback"
)

// Callback is what a gateway reports about a payment.
type Callback struct {
	PaymentID string               `json:"payment_id"`
	OrderID   int64                `json:"order_id"`
	Status    states.GatewayResult `json:"status"` // paid or declined
	Amount    int64                `json:"amount"`
	Currency  string               `json:"currency"`
}

// Sign returns the signature header value of body.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a callback body's signature in constant time.
func Verify(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// TestCallbackKey is the test gateway's signing key, derived from
// GATEWAY_SECRET: a callback signed for one gateway does not verify as the
// other's.
func TestCallbackKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("ticketsales test gateway callbacks"))
	return m.Sum(nil)
}

// TestGateway is the built-in gateway: payments live in Postgres, the buyer
// pays or declines on a page it serves at /pay/{id}, and the result goes
// back to the service as a signed callback.
type TestGateway struct {
	DB          *bun.DB
	BaseURL     string // where /pay/{id} is served
	CallbackURL string // where results are posted: {base}TestCallbackPath
	Secret      []byte // signs callbacks: TestCallbackKey(GATEWAY_SECRET)
	Log         *slog.Logger
	Client      *http.Client
}

func newPaymentID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "pay_" + hex.EncodeToString(b)
}

// CreatePayment stores a pending payment and returns its page.
func (g *TestGateway) CreatePayment(ctx context.Context, req Request) (Created, error) {
	p := &store.TestPayment{ID: newPaymentID(), OrderID: req.OrderID, Amount: req.Amount, Currency: req.Currency,
		Description: req.Description, Status: "pending"}
	if err := store.CreateTestPayment(ctx, g.DB, p); err != nil {
		return Created{}, err
	}
	return Created{ID: p.ID, URL: g.BaseURL + "/pay/" + p.ID}, nil
}

// Refund returns amount of a paid payment once per refund key.
func (g *TestGateway) Refund(ctx context.Context, paymentID, refundKey string, amount int64) error {
	err := store.RefundTestPayment(ctx, g.DB, paymentID, refundKey, amount)
	if errors.Is(err, store.ErrTestRefundRefused) {
		return fmt.Errorf("%w: %w", ErrRefundExceedsPayment, err)
	}
	return err
}

// Handler serves the payment page: GET /pay/{id}, POST /pay/{id} with
// action=pay or action=decline.
func (g *TestGateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pay/{id}", g.page)
	mux.HandleFunc("POST /pay/{id}", g.act)
	return mux
}

func (g *TestGateway) load(ctx context.Context, id string) (*store.TestPayment, error) {
	return store.GetTestPayment(ctx, g.DB, id)
}

var pageTmpl = template.Must(template.New("pay").Funcs(template.FuncMap{
	"money": func(minor int64, cur string) string { return fmt.Sprintf("%d.%02d %s", minor/100, minor%100, cur) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test payment</title>
<style>body{font-family:sans-serif;max-width:32rem;margin:3rem auto}button{font-size:1.1rem;padding:.5rem 1.5rem;margin-right:1rem}</style>
</head><body>
<h1>Test payment gateway</h1>
<p id="description">{{.Description}}</p>
<p>Amount: <strong id="amount">{{money .Amount .Currency}}</strong></p>
{{if and (eq .Status "paid") (ge .Refunded .Amount)}}<p id="result">Payment refunded: {{money .Refunded .Currency}} went back to the buyer.</p>
{{else if and (eq .Status "paid") (gt .Refunded 0)}}<p id="result">Payment accepted; {{money .Refunded .Currency}} of it refunded.</p>
{{else if eq .Status "paid"}}<p id="result">Payment accepted. Your tickets are on their way.</p>
{{else}}{{if eq .Status "declined"}}<p id="result">Payment declined. You may try again.</p>{{end}}
<form method="post"><button id="pay" name="action" value="pay">Pay</button><button id="decline" name="action" value="decline">Decline</button></form>
{{end}}</body></html>`))

func (g *TestGateway) page(w http.ResponseWriter, r *http.Request) {
	p, err := g.load(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, "no such payment", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = pageTmpl.Execute(w, p)
}

func (g *TestGateway) act(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id := r.PathValue("id")
	status := map[string]states.GatewayResult{"pay": states.GatewayPaid, "decline": states.GatewayDeclined}[r.FormValue("action")]
	if status == "" {
		http.Error(w, "action must be pay or decline", http.StatusBadRequest)
		return
	}
	if _, err := g.load(ctx, id); errors.Is(err, errs.NotFound) {
		http.Error(w, "no such payment", http.StatusNotFound)
		return
	} else if err != nil {
		http.Error(w, "payment failed", http.StatusInternalServerError)
		return
	}
	// A paid payment stays paid; a declined one may still be paid. Only a
	// change is reported: declining again, or paying twice, sends nothing
	// new, so clicking cannot flood the order with callbacks.
	changed, err := store.SetTestPaymentStatus(ctx, g.DB, id, status)
	if err != nil {
		http.Error(w, "payment failed", http.StatusInternalServerError)
		return
	}
	switch {
	case status == states.GatewayPaid:
		// Also when paid already: a report the service never acknowledged
		// (it was down) goes again.
		err = g.report(ctx, id)
	case changed:
		var p *store.TestPayment
		if p, err = g.load(ctx, id); err == nil {
			err = g.notify(ctx, Callback{PaymentID: p.ID, OrderID: p.OrderID, Status: status, Amount: p.Amount, Currency: p.Currency})
		}
	}
	if err != nil {
		g.Log.ErrorContext(ctx, "payment callback failed", "payment_id", id, "err", err)
	}
	http.Redirect(w, r, "/pay/"+id, http.StatusSeeOther)
}

// report sends a taken payment's callback unless the service acknowledged
// it already, and records the acknowledgement.
func (g *TestGateway) report(ctx context.Context, id string) error {
	p, err := g.load(ctx, id)
	if err != nil || p.Status != states.GatewayPaid || p.ReportedAt != nil {
		return err
	}
	err = g.notify(ctx, Callback{PaymentID: p.ID, OrderID: p.OrderID, Status: "paid", Amount: p.Amount, Currency: p.Currency})
	if err != nil && !errors.Is(err, errReportRefused) {
		return err
	}
	if err := store.MarkTestPaymentReported(ctx, g.DB, id); err != nil {
		return err
	}
	return err // a refused report is not sent again, but it is an error
}

// errReportRefused: the service refused a callback for good (409 or 422).
var errReportRefused = errors.New("the service refused the report")

// Redeliver reports, every interval until ctx ends, the taken payments the
// service has not acknowledged (it was down, or answered 5xx), as payment
// providers retry their callbacks.
func (g *TestGateway) Redeliver(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := store.UnreportedTestPayments(ctx, g.DB, time.Now().Add(-2*time.Second), 100)
		if err != nil {
			g.Log.WarnContext(ctx, "test gateway redelivery", "err", err)
			continue
		}
		for _, id := range ids {
			if err := g.report(ctx, id); err != nil {
				g.Log.WarnContext(ctx, "test gateway redelivery", "payment_id", id, "err", err)
			}
		}
	}
}

// notify posts the signed callback, retrying a few times as gateways do.
func (g *TestGateway) notify(ctx context.Context, cb Callback) error {
	body, _ := json.Marshal(cb)
	client := g.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.CallbackURL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(SignatureHeader, Sign(g.Secret, body))
		res, err := client.Do(req)
		if err == nil {
			res.Body.Close()
			switch {
			case res.StatusCode < 300:
				return nil
			case res.StatusCode == http.StatusConflict || res.StatusCode == http.StatusUnprocessableEntity:
				// The service's deliberate "this payment cannot be
				// applied": reporting again would not change it. Any other
				// answer (a 401 of a secret not yet rolled out, a 404 of a
				// route not yet deployed, 5xx) may mend: it is retried.
				return fmt.Errorf("callback for payment %s answered %d: %w", cb.PaymentID, res.StatusCode, errReportRefused)
			}
			err = fmt.Errorf("callback answered %d", res.StatusCode)
		}
		last = err
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return fmt.Errorf("notify %s for payment %s: %w", strings.TrimSpace(g.CallbackURL), cb.PaymentID, last)
}

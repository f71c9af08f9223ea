package payment

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/uptrace/bun"
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
	PaymentID string `json:"payment_id"`
	OrderID   int64  `json:"order_id"`
	Status    string `json:"status"` // paid or declined
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
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
func (g *TestGateway) CreatePayment(ctx context.Context, req PaymentRequest) (Payment, error) {
	id := newPaymentID()
	_, err := g.DB.NewRaw(`INSERT INTO gateway_payments (id, order_id, amount, currency, description) VALUES (?, ?, ?, ?, ?)`,
		id, req.OrderID, req.Amount, req.Currency, req.Description).Exec(ctx)
	if err != nil {
		return Payment{}, fmt.Errorf("create test payment for order %d: %w", req.OrderID, err)
	}
	return Payment{ID: id, URL: g.BaseURL + "/pay/" + id}, nil
}

// Refund returns amount of a paid payment once per refund key.
func (g *TestGateway) Refund(ctx context.Context, paymentID, refundKey string, amount int64) error {
	var out struct{ Applied, Known int }
	err := g.DB.NewRaw(`
		WITH ins AS (
			INSERT INTO gateway_refunds (key, payment_id, amount)
			SELECT ?, id, ? FROM gateway_payments WHERE id = ? AND status = 'paid' AND refunded + ? <= amount
			ON CONFLICT (key) DO NOTHING RETURNING payment_id
		), upd AS (
			UPDATE gateway_payments SET refunded = refunded + ?, updated_at = now() WHERE id IN (SELECT payment_id FROM ins) RETURNING 1
		)
		SELECT (SELECT count(*) FROM upd) AS applied, (SELECT count(*) FROM gateway_refunds WHERE key = ?) AS known`,
		refundKey, amount, paymentID, amount, amount, refundKey).Scan(ctx, &out)
	if err != nil {
		return fmt.Errorf("refund %d of payment %s: %w", amount, paymentID, err)
	}
	if out.Applied == 0 && out.Known == 0 {
		return fmt.Errorf("refund %d of payment %s: %w", amount, paymentID, ErrRefundExceedsPayment)
	}
	return nil
}

type payment struct {
	ID          string
	OrderID     int64
	Amount      int64
	Currency    string
	Description string
	Status      string
}

// Handler serves the payment page: GET /pay/{id}, POST /pay/{id} with
// action=pay or action=decline.
func (g *TestGateway) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pay/{id}", g.page)
	mux.HandleFunc("POST /pay/{id}", g.act)
	return mux
}

func (g *TestGateway) load(ctx context.Context, id string) (*payment, error) {
	p := new(payment)
	err := g.DB.NewRaw("SELECT id, order_id, amount, currency, description, status FROM gateway_payments WHERE id = ?", id).Scan(ctx, p)
	return p, err
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
{{if eq .Status "paid"}}<p id="result">Payment accepted. Your tickets are on their way.</p>
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
	status := map[string]string{"pay": "paid", "decline": "declined"}[r.FormValue("action")]
	if status == "" {
		http.Error(w, "action must be pay or decline", http.StatusBadRequest)
		return
	}
	// A paid payment stays paid; a declined one may still be paid. Only a
	// change is reported: declining again, or paying twice, sends nothing
	// new, so clicking cannot flood the order with callbacks.
	res, err := g.DB.NewRaw(`UPDATE gateway_payments SET status = ?, updated_at = now()
		WHERE id = ? AND status <> 'paid' AND status <> ?`, status, id, status).Exec(ctx)
	if err != nil {
		http.Error(w, "payment failed", http.StatusInternalServerError)
		return
	}
	changed, _ := res.RowsAffected()
	switch {
	case status == "paid":
		// Also when paid already: a report the service never acknowledged
		// (it was down) goes again.
		err = g.report(ctx, id)
	case changed == 1:
		var p *payment
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
	var p struct {
		payment
		Reported bool
	}
	err := g.DB.NewRaw(`SELECT id, order_id, amount, currency, description, status, reported_at IS NOT NULL AS reported
		FROM gateway_payments WHERE id = ?`, id).Scan(ctx, &p)
	if err != nil || p.Status != "paid" || p.Reported {
		return err
	}
	if err := g.notify(ctx, Callback{PaymentID: p.ID, OrderID: p.OrderID, Status: "paid", Amount: p.Amount, Currency: p.Currency}); err != nil {
		return err
	}
	_, err = g.DB.NewRaw("UPDATE gateway_payments SET reported_at = now() WHERE id = ? AND reported_at IS NULL", id).Exec(ctx)
	return err
}

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
		var ids []string
		if err := g.DB.NewRaw(`SELECT id FROM gateway_payments WHERE status = 'paid' AND reported_at IS NULL
			AND updated_at < now() - interval '2 seconds' ORDER BY updated_at LIMIT 100`).Scan(ctx, &ids); err != nil {
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
			if res.StatusCode < 300 {
				return nil
			}
			err = fmt.Errorf("callback answered %d", res.StatusCode)
		}
		last = err
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return fmt.Errorf("notify %s for payment %s: %w", strings.TrimSpace(g.CallbackURL), cb.PaymentID, last)
}

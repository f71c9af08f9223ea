package payment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// HostedGateway is a hosted-payment-page provider (GATEWAY_URL). The
// protocol, which a provider adapter in front of a real acquirer speaks:
//
//	POST {URL}/payments                 {"reference","amount","currency","description","callback_url"}
//	                                    → 2xx {"id","url"}: the buyer pays at url
//	POST {URL}/payments/{id}/refunds    {"amount"} → 2xx once returned
//
// Both carry `Authorization: Bearer {API key}` and an Idempotency-Key
// (order-{id} for a payment, the refund key for a refund), so a retried call
// creates or returns nothing twice. The provider reports each payment's
// result to callback_url as a Callback signed with the shared secret
// (SignatureHeader). A 4xx answer is final (ErrRefused), but for 408, 409 and 429.
type HostedGateway struct {
	URL         string // GATEWAY_URL
	APIKey      string // GATEWAY_API_KEY
	CallbackURL string // {PUBLIC_BASE_URL}/gateway/callback
	Client      *http.Client
}

type hostedPaymentRequest struct {
	Reference   string `json:"reference"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Description string `json:"description"`
	CallbackURL string `json:"callback_url"`
}

// CreatePayment asks the provider for a payment page for the order.
func (g *HostedGateway) CreatePayment(ctx context.Context, req Request) (Created, error) {
	ref := "order-" + strconv.FormatInt(req.OrderID, 10)
	var out struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	err := g.call(ctx, "/payments", ref, hostedPaymentRequest{Reference: ref, Amount: req.Amount, Currency: req.Currency,
		Description: req.Description, CallbackURL: g.CallbackURL}, &out)
	if err != nil {
		return Created{}, fmt.Errorf("create payment for order %d: %w", req.OrderID, err)
	}
	if out.ID == "" || out.URL == "" {
		return Created{}, fmt.Errorf("create payment for order %d: the provider answered without id or url", req.OrderID)
	}
	return Created{ID: out.ID, URL: out.URL}, nil
}

// Refund returns amount of the payment once per refund key.
func (g *HostedGateway) Refund(ctx context.Context, paymentID, refundKey string, amount int64) error {
	err := g.call(ctx, "/payments/"+url.PathEscape(paymentID)+"/refunds", refundKey, map[string]int64{"amount": amount}, nil)
	if err != nil {
		return fmt.Errorf("refund %d of payment %s: %w", amount, paymentID, err)
	}
	return nil
}

// call posts body as JSON and decodes a 2xx answer into out (nil: ignored).
// A 4xx answer is final (wrapping ErrRefused); 5xx, network errors
// may be retried, and so may 408, 409 and 429.
func (g *HostedGateway) call(ctx context.Context, path, idempotencyKey string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.APIKey)
	req.Header.Set("Idempotency-Key", idempotencyKey)
	client := g.Client
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("payment provider: %w", err)
	}
	defer res.Body.Close()
	payload, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	switch {
	case res.StatusCode >= 500:
		return fmt.Errorf("payment provider answered %d", res.StatusCode)
	case res.StatusCode == http.StatusRequestTimeout, res.StatusCode == http.StatusConflict, res.StatusCode == http.StatusTooManyRequests:
		// Busy, or the same Idempotency-Key still in progress (a workflow
		// and the reaper returning one payment): worth another try.
		return fmt.Errorf("payment provider answered %d, retry later", res.StatusCode)
	case res.StatusCode >= 400:
		return fmt.Errorf("payment provider answered %d: %.200s: %w", res.StatusCode, payload, ErrRefused)
	case res.StatusCode < 200 || res.StatusCode >= 300:
		return fmt.Errorf("payment provider answered %d", res.StatusCode)
	}
	if out != nil {
		if err := json.Unmarshal(payload, out); err != nil {
			return fmt.Errorf("payment provider answer: %w", err)
		}
	}
	return nil
}

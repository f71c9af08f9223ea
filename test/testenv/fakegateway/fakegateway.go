// Package fakegateway is a hosted-payment-page provider for tests: it speaks
// the protocol payment.HostedGateway expects, keeps payments and refunds in
// memory, and reports payments to the service with signed callbacks.
package fakegateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/payment"
)

// Provider is the fake provider.
type Provider struct {
	URL    string
	Secret []byte // the shared GATEWAY_SECRET that signs callbacks
	// FailRefunds makes refunds answer this status (0: they succeed).
	FailRefunds int

	refundDelay time.Duration
	mu          sync.Mutex
	payments    map[string]*providerPayment
	refunds     map[string]int64 // by idempotency key
	next        int
}

type providerPayment struct {
	id, reference, currency, callbackURL string
	orderID, amount, refunded            int64
}

// Start serves a provider until the test ends.
func Start(t testing.TB, secret []byte) *Provider {
	p := &Provider{Secret: secret, payments: map[string]*providerPayment{}, refunds: map[string]int64{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /payments", p.create)
	mux.HandleFunc("POST /payments/{id}/refunds", p.refund)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *Provider) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Reference   string `json:"reference"`
		Amount      int64  `json:"amount"`
		Currency    string `json:"currency"`
		CallbackURL string `json:"callback_url"`
	}
	if r.Header.Get("Authorization") == "" || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var orderID int64
	fmt.Sscanf(strings.TrimPrefix(in.Reference, "order-"), "%d", &orderID)
	p.mu.Lock()
	// The same Idempotency-Key returns the payment made for it.
	var pay *providerPayment
	for _, x := range p.payments {
		if x.reference == in.Reference {
			pay = x
		}
	}
	if pay == nil {
		p.next++
		pay = &providerPayment{id: fmt.Sprintf("hp_%d", p.next), reference: in.Reference, currency: in.Currency,
			callbackURL: in.CallbackURL, orderID: orderID, amount: in.Amount}
		p.payments[pay.id] = pay
	}
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": pay.id, "url": p.URL + "/pay/" + pay.id})
}

func (p *Provider) refund(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Amount int64 `json:"amount"`
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	delay := p.refundDelay
	p.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.FailRefunds != 0 {
		http.Error(w, "refunds unavailable", p.FailRefunds)
		return
	}
	pay := p.payments[r.PathValue("id")]
	switch {
	case pay == nil:
		http.Error(w, "no such payment", http.StatusNotFound)
	case p.refunds[key] != 0:
		w.WriteHeader(http.StatusOK) // a repeat: returned once
	case pay.refunded+in.Amount > pay.amount:
		http.Error(w, "refund exceeds the payment", http.StatusUnprocessableEntity)
	default:
		pay.refunded += in.Amount
		p.refunds[key] = in.Amount
		w.WriteHeader(http.StatusCreated)
	}
}

// SetFailRefunds makes refunds answer status (0: succeed).
func (p *Provider) SetFailRefunds(status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.FailRefunds = status
}

// SetRefundDelay makes refunds answer only after d (0: at once).
func (p *Provider) SetRefundDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refundDelay = d
}

// PaymentOf returns the id of the payment made for an order ("" if none).
func (p *Provider) PaymentOf(orderID int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.payments {
		if x.orderID == orderID {
			return x.id
		}
	}
	return ""
}

// Refunded is how much of a payment the provider gave back.
func (p *Provider) Refunded(paymentID string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if x := p.payments[paymentID]; x != nil {
		return x.refunded
	}
	return 0
}

// Pay takes the payment (as if the buyer paid on the provider's page) and
// reports it to the service with a signed callback; it returns the
// callback's status code.
func (p *Provider) Pay(t testing.TB, paymentID string) int {
	t.Helper()
	p.mu.Lock()
	pay := p.payments[paymentID]
	p.mu.Unlock()
	if pay == nil {
		t.Fatalf("fake provider: no payment %s", paymentID)
	}
	body, _ := json.Marshal(payment.Callback{PaymentID: pay.id, OrderID: pay.orderID, Status: "paid", Amount: pay.amount, Currency: pay.currency})
	req, _ := http.NewRequest(http.MethodPost, pay.callbackURL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(payment.SignatureHeader, payment.Sign(p.Secret, body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("fake provider: callback: %v", err)
	}
	res.Body.Close()
	return res.StatusCode
}

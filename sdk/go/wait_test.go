package ticketsales

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// WaitForOrder reads the order until it is paid, and stops at a
// cancelled one with ErrOrderCancelled.
func TestWaitForOrder(t *testing.T) {
	ctx := context.Background()
	pending := answer{http.StatusOK, nil, fmt.Sprintf(orderJSON, "pending_payment")}
	srv, rec := serve(t, pending, pending, answer{http.StatusOK, nil, fmt.Sprintf(orderJSON, "paid")})
	c, _ := testClient(t, srv.URL, &Doer{})
	o, err := WaitForOrder(ctx, c, 7, 10*time.Millisecond)
	if err != nil || o.Status != OrderStatusPaid || o.Id != 7 || len(rec.all()) != 3 {
		t.Fatalf("%+v %v after %d reads", o, err, len(rec.all()))
	}
	for _, r := range rec.all() {
		if r.method != http.MethodGet || r.path != "/v1/orders/7" {
			t.Fatalf("%+v", r)
		}
	}

	srv, _ = serve(t, pending, answer{http.StatusOK, nil,
		`{"data": {"id": 7, "status": "cancelled", "cancel_reason": "payment_timeout"}, "request_id": "r"}`})
	c, _ = testClient(t, srv.URL, &Doer{})
	o, err = WaitForOrder(ctx, c, 7, 10*time.Millisecond)
	if !errors.Is(err, ErrOrderCancelled) || o.Status != OrderStatusCancelled {
		t.Fatalf("%+v %v", o, err)
	}

	// Never paid within the caller's time: the last order read, ctx's error.
	srv, _ = serve(t, pending)
	c, _ = testClient(t, srv.URL, &Doer{})
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	o, err = WaitForOrder(ctx, c, 7, 10*time.Millisecond)
	if !errors.Is(err, context.DeadlineExceeded) || o.Status != OrderStatusPendingPayment {
		t.Fatalf("%+v %v", o, err)
	}

	// A problem (the order is not this key's) is returned as such.
	srv, _ = serve(t, problemAnswer(http.StatusNotFound, "not_found", nil))
	c, _ = testClient(t, srv.URL, &Doer{})
	var p *Problem
	if _, err := WaitForOrder(context.Background(), c, 7, 0); !errors.As(err, &p) || p.Code != ProblemCodeNotFound {
		t.Fatalf("%v", err)
	}
}

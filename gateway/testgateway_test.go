package gateway_test

import (
	"context"
	"errors"
	"testing"

	"ticketsales/gateway"
	"ticketsales/testenv"
)

func TestRefundReturnsMoneyOncePerKey(t *testing.T) {
	ctx := context.Background()
	db, _ := testenv.DB(t)
	g := &gateway.TestGateway{DB: db, BaseURL: "http://gw.test"}
	p, err := g.CreatePayment(ctx, gateway.PaymentRequest{OrderID: 1, Amount: 1000, Currency: "RUB", Description: "x"})
	if err != nil || p.URL != "http://gw.test/pay/"+p.ID {
		t.Fatalf("create: %+v %v", p, err)
	}
	// Nothing is refunded from an unpaid payment.
	if err := g.Refund(ctx, p.ID, "rf_0", 100); !errors.Is(err, gateway.ErrRefundExceedsPayment) {
		t.Fatalf("refund of an unpaid payment: %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE gateway_payments SET status = 'paid' WHERE id = ?", p.ID); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // a retried refund returns money once
		if err := g.Refund(ctx, p.ID, "rf_1", 600); err != nil {
			t.Fatalf("refund #%d: %v", i+1, err)
		}
	}
	if err := g.Refund(ctx, p.ID, "rf_2", 500); !errors.Is(err, gateway.ErrRefundExceedsPayment) {
		t.Fatalf("over-refund: %v", err)
	}
	if err := g.Refund(ctx, p.ID, "rf_3", 400); err != nil {
		t.Fatal(err)
	}
	var refunded int64
	if err := db.NewRaw("SELECT refunded FROM gateway_payments WHERE id = ?", p.ID).Scan(ctx, &refunded); err != nil || refunded != 1000 {
		t.Fatalf("refunded %d (%v), want 1000", refunded, err)
	}
}

func TestCallbackSignature(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"payment_id":"pay_1","order_id":1,"status":"paid"}`)
	sig := gateway.Sign(secret, body)
	if !gateway.Verify(secret, body, sig) {
		t.Fatal("a correct signature was refused")
	}
	if gateway.Verify([]byte("other"), body, sig) || gateway.Verify(secret, append(body, ' '), sig) || gateway.Verify(secret, body, "") {
		t.Fatal("a wrong signature was accepted")
	}
}

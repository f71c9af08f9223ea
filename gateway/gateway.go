// Package gateway is the payment gateway seam: the service creates a payment
// for a gateway order (the buyer pays at its URL) and refunds through it.
// The built-in test gateway implements it for development and the sandbox.
package gateway

import "context"

// PaymentRequest asks the gateway to collect an order's amount.
type PaymentRequest struct {
	OrderID     int64
	Amount      int64
	Currency    string
	Description string
}

// Payment is a created payment: the buyer is sent to URL.
type Payment struct {
	ID  string
	URL string
}

// Gateway takes and returns money.
type Gateway interface {
	CreatePayment(ctx context.Context, req PaymentRequest) (Payment, error)
	// Refund returns amount of the payment; repeating a refund with the same
	// key returns money once.
	Refund(ctx context.Context, paymentID, refundKey string, amount int64) error
}

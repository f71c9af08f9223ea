package ticketsales

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultPollInterval is WaitForOrder's interval when the caller names
// none and the service sends no Retry-After.
const DefaultPollInterval = 2 * time.Second

// ErrOrderCancelled is WaitForOrder's error for an order that was
// cancelled instead of paid (its payment window passed, or the buyer or
// partner cancelled it): it will never be paid.
var ErrOrderCancelled = errors.New("order cancelled")

// OrderGetter is the part of the client WaitForOrder uses.
type OrderGetter interface {
	GetOrderWithResponse(ctx context.Context, id int64, reqEditors ...RequestEditorFn) (*GetOrderResponse, error)
}

// WaitForOrder reads the order every interval (DefaultPollInterval when 0;
// longer when an answer's Retry-After says so) until its payment is
// settled, and returns it:
//
//   - paid (or refunded since, partially or fully): the order, nil;
//   - cancelled: the order and an error wrapping [ErrOrderCancelled];
//   - an answer that is not a success: its [*Problem];
//   - ctx done first: the last order read and ctx's error.
//
// Use it after a confirm answered 202 Accepted (payment accepted, the
// tickets follow: that answer's Retry-After is a good interval), or while
// the buyer pays on the gateway's page (bound ctx by the order's
// expires_at). A rate limit's 429 on the way is retried by the [Doer].
func WaitForOrder(ctx context.Context, c OrderGetter, id int64, interval time.Duration) (Order, error) {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	var last Order
	for {
		res, err := Check(c.GetOrderWithResponse(ctx, id))
		if err != nil {
			return last, err
		}
		if res.JSON200 == nil {
			return last, fmt.Errorf("ticketsales: order %d: HTTP %d without an order", id, res.StatusCode())
		}
		last = res.JSON200.Data
		switch last.Status {
		case OrderStatusPaid, OrderStatusPartiallyRefunded, OrderStatusRefunded:
			return last, nil
		case OrderStatusCancelled:
			reason := "no reason given"
			if last.CancelReason != nil {
				reason = string(*last.CancelReason)
			}
			return last, fmt.Errorf("ticketsales: order %d: %w (%s)", id, ErrOrderCancelled, reason)
		}
		wait := interval
		if res.HTTPResponse != nil {
			if ra, ok := retryAfter(res.HTTPResponse.Header.Get("Retry-After"), time.Now()); ok && ra > wait {
				wait = ra
			}
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return last, err
		}
	}
}

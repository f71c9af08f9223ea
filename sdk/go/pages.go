package ticketsales

import (
	"context"
	"fmt"
	"iter"
)

// PageFunc reads one page of a list: the first with cursor nil, then each
// one after with the previous page's meta.next_cursor. It answers the
// page's items and its meta.
type PageFunc[T any] func(ctx context.Context, cursor *string) ([]T, *Meta, error)

// All walks a list to its end by cursor, yielding each item once: rows
// added or removed meanwhile neither repeat nor hide those that were
// there when the walk began. An error (a [*Problem], a lost connection
// after the Doer's retries, ctx done) is yielded once and ends the walk;
// so does breaking out of the loop, which reads no further page.
//
//	for order, err := range client.Orders(ctx, &ticketsales.ListOrdersParams{PerPage: ptr(int64(200))}) {
//		if err != nil {
//			return err
//		}
//		…
//	}
func All[T any](ctx context.Context, page PageFunc[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			items, meta, err := page(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if meta == nil || meta.NextCursor == nil || *meta.NextCursor == "" || len(items) == 0 {
				return
			}
			if cursor != nil && *cursor == *meta.NextCursor {
				var zero T
				yield(zero, fmt.Errorf("ticketsales: the list answered the same cursor twice"))
				return
			}
			cursor = meta.NextCursor
		}
	}
}

// listPage is the part of a list's answer All reads.
func listPage[T any, R Response](res R, err error, data func(R) ([]T, *Meta, bool)) ([]T, *Meta, error) {
	res, err = Check(res, err)
	if err != nil {
		return nil, nil, err
	}
	items, meta, ok := data(res)
	if !ok {
		return nil, nil, fmt.Errorf("ticketsales: HTTP %d without a list", res.StatusCode())
	}
	return items, meta, nil
}

// walkParams copies a list's parameters for a walk: the first page as
// given (a page number too), every later one by cursor alone.
func walkParams[P any](params *P, set func(p *P, page *int64, cursor *string)) func(cursor *string) *P {
	var p P
	if params != nil {
		p = *params
	}
	return func(cursor *string) *P {
		if cursor != nil {
			set(&p, nil, cursor)
		}
		return &p
	}
}

// Orders walks the orders params select, newest first, by cursor.
func (c *ClientWithResponses) Orders(ctx context.Context, params *ListOrdersParams) iter.Seq2[Order, error] {
	next := walkParams(params, func(p *ListOrdersParams, page *int64, cursor *string) { p.Page, p.Cursor = page, cursor })
	return All(ctx, func(ctx context.Context, cursor *string) ([]Order, *Meta, error) {
		res, err := c.ListOrdersWithResponse(ctx, next(cursor))
		return listPage(res, err, func(r *ListOrdersResponse) ([]Order, *Meta, bool) {
			if r.JSON200 == nil {
				return nil, nil, false
			}
			return r.JSON200.Data, r.JSON200.Meta, true
		})
	})
}

// Events walks the events params select, soonest first, by cursor.
func (c *ClientWithResponses) Events(ctx context.Context, params *ListEventsParams) iter.Seq2[Event, error] {
	next := walkParams(params, func(p *ListEventsParams, page *int64, cursor *string) { p.Page, p.Cursor = page, cursor })
	return All(ctx, func(ctx context.Context, cursor *string) ([]Event, *Meta, error) {
		res, err := c.ListEventsWithResponse(ctx, next(cursor))
		return listPage(res, err, func(r *ListEventsResponse) ([]Event, *Meta, bool) {
			if r.JSON200 == nil {
				return nil, nil, false
			}
			return r.JSON200.Data, r.JSON200.Meta, true
		})
	})
}

// Sessions walks the schedule slots params select, soonest first, by cursor.
func (c *ClientWithResponses) Sessions(ctx context.Context, params *ListSessionsParams) iter.Seq2[Session, error] {
	next := walkParams(params, func(p *ListSessionsParams, page *int64, cursor *string) { p.Page, p.Cursor = page, cursor })
	return All(ctx, func(ctx context.Context, cursor *string) ([]Session, *Meta, error) {
		res, err := c.ListSessionsWithResponse(ctx, next(cursor))
		return listPage(res, err, func(r *ListSessionsResponse) ([]Session, *Meta, bool) {
			if r.JSON200 == nil {
				return nil, nil, false
			}
			return r.JSON200.Data, r.JSON200.Meta, true
		})
	})
}

// WebhookDeliveries walks an endpoint's deliveries, newest first, by cursor.
func (c *ClientWithResponses) WebhookDeliveries(ctx context.Context, endpointID int64, params *ListWebhookDeliveriesParams) iter.Seq2[WebhookDelivery, error] {
	next := walkParams(params, func(p *ListWebhookDeliveriesParams, page *int64, cursor *string) { p.Page, p.Cursor = page, cursor })
	return All(ctx, func(ctx context.Context, cursor *string) ([]WebhookDelivery, *Meta, error) {
		res, err := c.ListWebhookDeliveriesWithResponse(ctx, endpointID, next(cursor))
		return listPage(res, err, func(r *ListWebhookDeliveriesResponse) ([]WebhookDelivery, *Meta, bool) {
			if r.JSON200 == nil {
				return nil, nil, false
			}
			return r.JSON200.Data, r.JSON200.Meta, true
		})
	})
}

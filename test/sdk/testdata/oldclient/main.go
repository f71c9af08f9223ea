// Command oldclient is a partner's program written against a client that
// oapi-codegen generated from a published OpenAPI document of API v1
// (package client, beside it), and nothing else: no SDK layer, its own
// keys and polling. TestOldClientsWork generates the client from each
// document in sdk/history and runs this against today's service, so a
// partner who generated a client then still sells with it now. It
// asserts what a partner's code relies on: statuses, amounts, ids, the
// problem's code, not just a 2xx.
//
// It is written against the names the 1.0.0 document generates; within
// v1 a later document must generate them too (a renamed generated type
// is a breaking change, docs/api.md).
//
//	TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… go run .
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"time"

	"example.com/oldpartner/client"
)

func main() {
	base, key := os.Getenv("TICKETS_URL"), os.Getenv("TICKETS_KEY")
	if base == "" || key == "" {
		log.Fatal("set TICKETS_URL and TICKETS_KEY (a sandbox key)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.NewClientWithResponses(base, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	if err := flow(ctx, c); err != nil {
		log.Fatal(err)
	}
	log.Print("old client flow passed")
}

// want fails the flow with what was got when ok is false.
func want(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// status checks an answer's HTTP status.
func status(what string, res *http.Response, body []byte, codes ...int) error {
	return want(slices.Contains(codes, res.StatusCode), "%s: HTTP %d, want %v: %s", what, res.StatusCode, codes, body)
}

func flow(ctx context.Context, c *client.ClientWithResponses) error {
	// The catalog: a published seated event.
	published := client.ListEventsParamsFilterStatus("published")
	events, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{FilterStatus: &published})
	if err != nil {
		return fmt.Errorf("list events: %w", err)
	}
	if err := status("list events", events.HTTPResponse, events.Body, 200); err != nil {
		return err
	}
	var event *client.Event
	for i, e := range events.JSON200.Data {
		if err := want(e.Id > 0 && e.Title != "" && e.Status == "published" && !e.StartsAt.IsZero(), "an event: %+v", e); err != nil {
			return err
		}
		if e.HasScheme && event == nil {
			event = &events.JSON200.Data[i]
		}
	}
	if event == nil {
		return fmt.Errorf("no published seated event among %d", len(events.JSON200.Data))
	}
	log.Printf("event %d %q at %s", event.Id, event.Title, event.Venue.Name)

	scheme, err := c.GetEventSchemeWithResponse(ctx, event.Id, nil)
	if err != nil {
		return fmt.Errorf("scheme: %w", err)
	}
	if err := status("scheme", scheme.HTTPResponse, scheme.Body, 200); err != nil {
		return err
	}
	zones := map[string]bool{}
	for _, z := range scheme.JSON200.Data.Zones {
		zones[z.Id] = true
	}
	if err := want(len(zones) > 0, "the scheme has no zones: %s", scheme.Body); err != nil {
		return err
	}

	avail, err := c.GetEventAvailabilityWithResponse(ctx, event.Id, nil)
	if err != nil {
		return fmt.Errorf("availability: %w", err)
	}
	if err := status("availability", avail.HTTPResponse, avail.Body, 200); err != nil {
		return err
	}
	if err := want(avail.JSON200.Data.EventId == event.Id && avail.JSON200.Data.Version != "", "availability of event %d: %+v", event.Id, avail.JSON200.Data); err != nil {
		return err
	}
	var seat *client.SeatAvailability
	for i, s := range avail.JSON200.Data.Seats {
		if s.Status == client.SeatAvailabilityStatusFree && s.Price.Amount > 0 {
			seat = &avail.JSON200.Data.Seats[i]
			break
		}
	}
	if seat == nil {
		return fmt.Errorf("event %d has no free seat", event.Id)
	}
	if err := want(zones[seat.ZoneId], "seat %s is in zone %q, which the scheme does not have", seat.SeatId, seat.ZoneId); err != nil {
		return err
	}

	// A hold of that seat.
	ref := []client.SeatRef{{ZoneId: seat.ZoneId, SeatId: seat.SeatId}}
	hold, err := c.CreateReservationWithResponse(ctx, &client.CreateReservationParams{IdempotencyKey: rand.Text()},
		client.CreateReservationJSONRequestBody{EventId: event.Id, Seats: &ref})
	if err != nil {
		return fmt.Errorf("reserve: %w", err)
	}
	if err := status("reserve", hold.HTTPResponse, hold.Body, 201); err != nil {
		return err
	}
	h := hold.JSON201.Data
	if err := want(h.Id != "" && h.EventId == event.Id && h.Status == client.ReservationStatusReserved && len(h.Seats) == 1 &&
		h.Total.Amount == seat.Price.Amount && h.TotalToPay.Amount == h.Total.Amount+h.ServiceFee.Amount &&
		h.ExpiresAt.After(time.Now()), "the hold of %s: %+v", seat.SeatId, h); err != nil {
		return err
	}
	log.Printf("held %s/%s: %d + fee %d %s", seat.ZoneId, seat.SeatId, h.Total.Amount, h.ServiceFee.Amount, h.Total.Currency)

	// The same seat again: the problem decodes, code and seats included.
	again, err := c.CreateReservationWithResponse(ctx, &client.CreateReservationParams{IdempotencyKey: rand.Text()},
		client.CreateReservationJSONRequestBody{EventId: event.Id, Seats: &ref})
	if err != nil {
		return fmt.Errorf("reserve again: %w", err)
	}
	if err := status("reserve again", again.HTTPResponse, again.Body, 409); err != nil {
		return err
	}
	p := again.ApplicationproblemJSON409
	if err := want(p != nil && p.Status == 409 && p.Code == client.ProblemCodeSeatTaken && p.RequestId != "" && p.Title != "" &&
		p.UnavailableSeats != nil && slices.Contains(*p.UnavailableSeats, ref[0]), "the second hold's problem: %s", again.Body); err != nil {
		return err
	}
	log.Printf("the same seat again: %d %s", p.Status, p.Code)

	// An order of the hold, paid by an external payment.
	rid := h.Id
	created, err := c.CreateOrderWithResponse(ctx, &client.CreateOrderParams{IdempotencyKey: rand.Text()}, client.CreateOrderJSONRequestBody{
		EventId: event.Id, ReservationId: &rid, Payment: client.CreateOrderInputBodyPaymentExternal,
		Customer: client.Customer{Email: "anna@example.com", FirstName: "Анна", LastName: "Павлова", Phone: "+7 999 123-45-67"},
	})
	if err != nil {
		return fmt.Errorf("create order: %w", err)
	}
	if err := status("create order", created.HTTPResponse, created.Body, 201); err != nil {
		return err
	}
	o := created.JSON201.Data
	if err := want(o.Id > 0 && o.EventId == event.Id && o.Status == client.OrderStatusPendingPayment && o.Payment == "external" &&
		o.Amount.Amount == h.TotalToPay.Amount && o.Total.Amount == h.Total.Amount && o.IsTest &&
		o.Customer.FirstName == "Анна" && o.ReservationId != nil && *o.ReservationId == h.Id, "the created order: %s", created.Body); err != nil {
		return err
	}
	confirmed, err := c.ConfirmOrderWithResponse(ctx, o.Id, &client.ConfirmOrderParams{IdempotencyKey: rand.Text()},
		client.ConfirmOrderJSONRequestBody{ExternalPaymentId: "pay-" + rand.Text(), PaidAmount: o.Amount.Amount})
	if err != nil {
		return fmt.Errorf("confirm: %w", err)
	}
	if err := status("confirm", confirmed.HTTPResponse, confirmed.Body, 200, 202); err != nil {
		return err
	}
	paid, err := waitFor(ctx, c, o.Id, client.OrderStatusPaid)
	if err != nil {
		return err
	}
	if err := want(paid.Amount == o.Amount && paid.PaidAt != nil && paid.Customer.LastName == "Павлова", "the paid order: %+v", paid); err != nil {
		return err
	}
	log.Printf("order %d: %s, %d %s", paid.Id, paid.Status, paid.Amount.Amount, paid.Amount.Currency)

	tickets, err := c.ListOrderTicketsWithResponse(ctx, o.Id)
	if err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	if err := status("tickets", tickets.HTTPResponse, tickets.Body, 200); err != nil {
		return err
	}
	if err := want(len(tickets.JSON200.Data) == 1, "order %d has %d tickets", o.Id, len(tickets.JSON200.Data)); err != nil {
		return err
	}
	t := tickets.JSON200.Data[0]
	if err := want(t.Id > 0 && t.Status == client.TicketStatusActive && len(t.Barcode) == 13 && t.Seat != nil &&
		t.Price.Amount == seat.Price.Amount && t.OrderUrl != "" && t.IsTest, "the ticket: %s", tickets.Body); err != nil {
		return err
	}
	log.Printf("ticket %s: barcode %s", t.Number, t.Barcode)

	// A full refund.
	reason := "покупатель не сможет прийти"
	refund, err := c.RefundOrderWithResponse(ctx, o.Id, &client.RefundOrderParams{IdempotencyKey: rand.Text()}, client.RefundOrderJSONRequestBody{Reason: &reason})
	if err != nil {
		return fmt.Errorf("refund: %w", err)
	}
	if err := status("refund", refund.HTTPResponse, refund.Body, 201, 202); err != nil {
		return err
	}
	r := refund.JSON201
	if r == nil {
		r = refund.JSON202
	}
	if err := want(r.Data.Id != "" && r.Data.OrderId == o.Id && r.Data.Amount == o.Amount && r.Data.Reason == reason &&
		len(r.Data.Tickets) == 1 && r.Data.Tickets[0].Id == t.Id, "the refund: %s", refund.Body); err != nil {
		return err
	}
	refunded, err := waitFor(ctx, c, o.Id, client.OrderStatusRefunded)
	if err != nil {
		return err
	}
	log.Printf("refund %s: %d %s, order %s", r.Data.Id, r.Data.Amount.Amount, r.Data.Amount.Currency, refunded.Status)

	// The orders, a page of one at a time.
	one := int64(1)
	for page := int64(1); page <= 2; page++ {
		list, err := c.ListOrdersWithResponse(ctx, &client.ListOrdersParams{Page: &page, PerPage: &one})
		if err != nil {
			return fmt.Errorf("list orders: %w", err)
		}
		if err := status("list orders", list.HTTPResponse, list.Body, 200); err != nil {
			return err
		}
		m := list.JSON200.Meta
		if err := want(m != nil && m.CurrentPage == page && m.PerPage == 1 && m.Total == 1 && m.LastPage == 1, "page %d's meta: %s", page, list.Body); err != nil {
			return err
		}
		if page == 1 {
			err = want(len(list.JSON200.Data) == 1 && list.JSON200.Data[0].Id == o.Id && list.JSON200.Data[0].Amount == o.Amount &&
				list.JSON200.Data[0].Status == client.OrderStatusRefunded, "page 1: %s", list.Body)
		} else {
			err = want(len(list.JSON200.Data) == 0, "page 2 of 1: %s", list.Body)
		}
		if err != nil {
			return err
		}
	}
	log.Printf("orders: 1 in 1 page")
	return nil
}

// waitFor reads the order until it has status st.
func waitFor(ctx context.Context, c *client.ClientWithResponses, id int64, st client.OrderStatus) (client.Order, error) {
	for {
		res, err := c.GetOrderWithResponse(ctx, id)
		if err != nil {
			return client.Order{}, fmt.Errorf("get order %d: %w", id, err)
		}
		if err := status("get order", res.HTTPResponse, res.Body, 200); err != nil {
			return client.Order{}, err
		}
		o := res.JSON200.Data
		if err := want(o.Id == id, "got order %d for %d", o.Id, id); err != nil {
			return client.Order{}, err
		}
		if o.Status == st {
			return o, nil
		}
		select {
		case <-ctx.Done():
			return o, fmt.Errorf("order %d is %s, not %s: %w", id, o.Status, st, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// Command example runs the contract's sandbox check with the Go SDK and
// nothing else: a seated order from a reservation, a general-admission
// order, a scheduled order, each confirmed with its tickets read back, and a
// full refund. It is what a partner's program looks like: ticketsales.New
// (keys, retries), ticketsales.Check and *ticketsales.Problem for the
// answers that failed, ticketsales.WaitForOrder after a confirm.
//
//	TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… go run .
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	ticketsales "github.com/ticketsales/ticketsales/sdk/go"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

func main() {
	base, key := os.Getenv("TICKETS_URL"), os.Getenv("TICKETS_KEY")
	if base == "" || key == "" {
		log.Fatal("set TICKETS_URL (the service) and TICKETS_KEY (a sandbox API key)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Authenticated with the key; every creating call gets its own
	// Idempotency-Key, and a 429 or 503 is retried after its Retry-After.
	c, err := ticketsales.New(base, key)
	if err != nil {
		log.Fatal(err)
	}
	if err := SandboxCheck(ctx, c, log.Printf); err != nil {
		log.Fatal(err)
	}
	log.Printf("sandbox check passed (SDK %s, API %s)", ticketsales.Version, ticketsales.APIVersion)
}

// SandboxCheck runs the check and reports each step through logf.
func SandboxCheck(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any)) error {
	published := ticketsales.ListEventsParamsFilterStatus("published")
	events, err := ticketsales.Check(c.ListEventsWithResponse(ctx, &ticketsales.ListEventsParams{FilterStatus: &published}))
	if err != nil {
		return fmt.Errorf("list events: %w", err)
	}
	var seated, general, scheduled *ticketsales.Event
	for i, e := range events.JSON200.Data {
		switch {
		case e.HasScheme && seated == nil:
			seated = &events.JSON200.Data[i]
		case !e.HasScheme:
			sessions, err := ticketsales.Check(c.ListSessionsWithResponse(ctx, &ticketsales.ListSessionsParams{FilterEventId: &e.Id}))
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			if len(sessions.JSON200.Data) > 0 && scheduled == nil {
				scheduled = &events.JSON200.Data[i]
			} else if len(sessions.JSON200.Data) == 0 && general == nil {
				general = &events.JSON200.Data[i]
			}
		}
	}
	if seated == nil || general == nil || scheduled == nil {
		return fmt.Errorf("the catalog needs a seated, a general-admission and a scheduled event on sale")
	}
	buyer := ticketsales.Customer{Email: "anna@example.com", FirstName: "Anna", LastName: "Pavlova", Phone: "+7 999 123-45-67"}

	// 0. What this key may sell of the seated event, and when: its sales
	// channel (none: general sale) and its window.
	share, err := ticketsales.Check(c.GetEventAllocationWithResponse(ctx, seated.Id))
	if err != nil {
		return fmt.Errorf("allocation: %w", err)
	}
	if w := share.JSON200.Data.Window; !w.Open {
		return fmt.Errorf("sales of %q through this key are not open (window %v to %s)", seated.Title, w.StartsAt, w.EndsAt.Format(time.RFC3339))
	}
	channel := "general sale"
	if ch := share.JSON200.Data.Channel; ch != nil {
		channel = "channel " + ch.Ref
	}
	logf("selling %q in %s until %s", seated.Title, channel, share.JSON200.Data.Window.EndsAt.Format(time.RFC3339))

	// 1. Seated: a free seat from availability, held, ordered, confirmed.
	hold, seat, err := holdAFreeSeat(ctx, c, seated.Id)
	if err != nil {
		return err
	}
	logf("held %s of %q until %s", seat.SeatId, seated.Title, hold.ExpiresAt.Format(time.RFC3339))
	rid := hold.Id
	seatedOrder, err := order(ctx, c, logf, "seated", ticketsales.CreateOrderInputBody{EventId: seated.Id, ReservationId: &rid, Customer: buyer,
		Payment: ticketsales.CreateOrderInputBodyPaymentExternal})
	if err != nil {
		return err
	}
	if err := paidWithTickets(ctx, c, logf, seatedOrder, true); err != nil {
		return err
	}

	// 2. General admission: a category's tickets, by quantity.
	cats, err := ticketsales.Check(c.ListEventCategoriesWithResponse(ctx, general.Id))
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	if len(cats.JSON200.Data) == 0 {
		return fmt.Errorf("event %d has no ticket category", general.Id)
	}
	items := []ticketsales.OrderItemInput{{TicketCategoryId: cats.JSON200.Data[0].Id, Quantity: 2}}
	gaOrder, err := order(ctx, c, logf, "general admission", ticketsales.CreateOrderInputBody{EventId: general.Id, Items: &items,
		Customer: buyer, Payment: ticketsales.CreateOrderInputBodyPaymentExternal})
	if err != nil {
		return err
	}
	if err := paidWithTickets(ctx, c, logf, gaOrder, false); err != nil {
		return err
	}

	// 3. Scheduled: a session's capacity.
	sessions, err := ticketsales.Check(c.ListSessionsWithResponse(ctx, &ticketsales.ListSessionsParams{FilterEventId: &scheduled.Id}))
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	cats, err = ticketsales.Check(c.ListEventCategoriesWithResponse(ctx, scheduled.Id))
	if err != nil {
		return fmt.Errorf("categories: %w", err)
	}
	if len(sessions.JSON200.Data) == 0 || len(cats.JSON200.Data) == 0 {
		return fmt.Errorf("scheduled event %d: %d sessions, %d categories", scheduled.Id, len(sessions.JSON200.Data), len(cats.JSON200.Data))
	}
	slot := sessions.JSON200.Data[0].Id
	items = []ticketsales.OrderItemInput{{TicketCategoryId: cats.JSON200.Data[0].Id, Quantity: 1}}
	slotOrder, err := order(ctx, c, logf, "scheduled", ticketsales.CreateOrderInputBody{EventId: scheduled.Id, Items: &items,
		ScheduleSlotId: &slot, Customer: buyer, Payment: ticketsales.CreateOrderInputBodyPaymentExternal})
	if err != nil {
		return err
	}
	if err := paidWithTickets(ctx, c, logf, slotOrder, false); err != nil {
		return err
	}

	// 4. A full refund of the seated order: its seat is free again. The
	// zero params leave the Idempotency-Key to the SDK, as everywhere here.
	reason := "buyer cannot come"
	refund, err := ticketsales.Check(c.RefundOrderWithResponse(ctx, seatedOrder.Id, &ticketsales.RefundOrderParams{},
		ticketsales.RefundOrderJSONRequestBody{Reason: &reason}))
	if err != nil {
		return fmt.Errorf("refund: %w", err)
	}
	r := refund.JSON201.Data
	if r.Status != "completed" || r.OrderStatus != "refunded" || r.Amount.Amount != seatedOrder.Amount.Amount {
		return fmt.Errorf("refund: %+v", r)
	}
	logf("refunded order %d: %d.%02d %s, %s", seatedOrder.Id, r.Amount.Amount/100, r.Amount.Amount%100, r.Amount.Currency, r.MoneyReturnedBy)
	return nil
}

// holdAFreeSeat holds a seat availability shows free; another buyer may
// take it first (409 seat_taken): then the next free one.
func holdAFreeSeat(ctx context.Context, c *ticketsales.ClientWithResponses, event int64) (ticketsales.Reservation, ticketsales.SeatAvailability, error) {
	avail, err := ticketsales.Check(c.GetEventAvailabilityWithResponse(ctx, event, nil))
	if err != nil {
		return ticketsales.Reservation{}, ticketsales.SeatAvailability{}, fmt.Errorf("availability: %w", err)
	}
	for _, s := range avail.JSON200.Data.Seats {
		if s.Status != "free" {
			continue
		}
		hold, err := ticketsales.Check(c.CreateReservationWithResponse(ctx, &ticketsales.CreateReservationParams{},
			ticketsales.CreateReservationJSONRequestBody{EventId: event, Seats: &[]ticketsales.SeatRef{{ZoneId: s.ZoneId, SeatId: s.SeatId}}}))
		var p *ticketsales.Problem
		if errors.As(err, &p) && p.Code == ticketsales.ProblemCodeSeatTaken {
			continue
		} else if err != nil {
			return ticketsales.Reservation{}, s, fmt.Errorf("reserve: %w", err)
		}
		return hold.JSON201.Data, s, nil
	}
	return ticketsales.Reservation{}, ticketsales.SeatAvailability{}, fmt.Errorf("event %d has no free seat", event)
}

// order creates an order, confirms its external payment and waits until it
// is paid: a confirm answers 200 with the paid order, or 202 when the
// payment is accepted and the tickets follow (WaitForOrder reads the order
// until then).
func order(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), what string, in ticketsales.CreateOrderInputBody) (ticketsales.Order, error) {
	created, err := ticketsales.Check(c.CreateOrderWithResponse(ctx, &ticketsales.CreateOrderParams{}, in))
	if err != nil {
		return ticketsales.Order{}, fmt.Errorf("%s order: %w", what, err)
	}
	o := created.JSON201.Data
	if _, err := ticketsales.Check(c.ConfirmOrderWithResponse(ctx, o.Id, &ticketsales.ConfirmOrderParams{},
		ticketsales.ConfirmInputBody{ExternalPaymentId: "pay-" + rand.Text(), PaidAmount: o.Amount.Amount})); err != nil {
		return ticketsales.Order{}, fmt.Errorf("%s confirm: %w", what, err)
	}
	paid, err := ticketsales.WaitForOrder(ctx, c, o.Id, time.Second)
	if err != nil {
		return ticketsales.Order{}, fmt.Errorf("%s order %d: %w", what, o.Id, err)
	}
	logf("%s order %d: %s, %d.%02d %s", what, o.Id, paid.Status, o.Amount.Amount/100, o.Amount.Amount%100, o.Amount.Currency)
	return paid, nil
}

// paidWithTickets checks a paid order's tickets: active, with a barcode,
// a seat exactly when seated, of the order's environment.
func paidWithTickets(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), o ticketsales.Order, seated bool) error {
	if o.Status != "paid" {
		return fmt.Errorf("order %d is %s after confirm", o.Id, o.Status)
	}
	ts, err := ticketsales.Check(c.ListOrderTicketsWithResponse(ctx, o.Id))
	if err != nil {
		return fmt.Errorf("tickets: %w", err)
	}
	if len(ts.JSON200.Data) == 0 {
		return fmt.Errorf("order %d has no tickets", o.Id)
	}
	for _, t := range ts.JSON200.Data {
		if t.Status != "active" || len(t.Barcode) != 13 || (t.Seat != nil) != seated || t.OrderUrl == "" || t.IsTest != o.IsTest {
			return fmt.Errorf("order %d ticket %+v", o.Id, t)
		}
		logf("  ticket %s barcode %s", t.Number, t.Barcode)
	}
	return signedCodes(ctx, c, logf, o, ts.JSON200.Data)
}

// signedCodes checks the tickets' signed codes as a door does offline:
// with the event's published public key (a key with the checkin scope
// reads it; without, 403 insufficient_scope, the check is skipped).
func signedCodes(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), o ticketsales.Order, ts []ticketsales.Ticket) error {
	res, err := ticketsales.Check(c.GetCheckInPublicKeyWithResponse(ctx, o.EventId))
	var p *ticketsales.Problem
	if errors.As(err, &p) && p.Code == ticketsales.ProblemCodeInsufficientScope {
		logf("  signed codes not checked: the key has no checkin scope")
		return nil
	} else if err != nil {
		return fmt.Errorf("public key: %w", err)
	}
	pub, err := ticketcode.ParsePublicKey(res.JSON200.Data.PublicKey)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if t.SignedBarcode == nil {
			return fmt.Errorf("ticket %s has no signed code", t.Number)
		}
		code, err := ticketcode.Verify(pub, *t.SignedBarcode, o.EventId)
		if err != nil || code.TicketID != t.Id || code.Barcode != t.Barcode {
			return fmt.Errorf("ticket %s: its signed code %q does not verify (%v)", t.Number, *t.SignedBarcode, err)
		}
	}
	logf("  %d signed codes verified with the event's public key", len(ts))
	return nil
}

// Command example runs the contract's sandbox check with the generated Go
// client and nothing else: a seated order from a reservation, a
// general-admission order, a scheduled order, each confirmed with its
// tickets read back, and a full refund.
//
//	TICKETS_URL=http://127.0.0.1:8080 TICKETS_KEY=tk_sandbox_… go run github.com/ticketsales/ticketsales/sdk/go/example
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"net/http"
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
	c, err := ticketsales.NewClientWithResponses(base, ticketsales.WithRequestEditorFn(Bearer(key)))
	if err != nil {
		log.Fatal(err)
	}
	if err := SandboxCheck(ctx, c, log.Printf); err != nil {
		log.Fatal(err)
	}
}

// Bearer authenticates every request with the API key.
func Bearer(key string) ticketsales.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+key)
		return nil
	}
}

// newKey is a fresh Idempotency-Key: one per creating call.
func newKey() string { return rand.Text() }

// fail describes an answer the check did not expect.
func fail(step string, status int, body []byte) error {
	return fmt.Errorf("%s: HTTP %d: %.300s", step, status, body)
}

// SandboxCheck runs the check and reports each step through logf.
func SandboxCheck(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any)) error {
	published := ticketsales.ListEventsParamsFilterStatus("published")
	events, err := c.ListEventsWithResponse(ctx, &ticketsales.ListEventsParams{FilterStatus: &published})
	if err != nil {
		return err
	}
	if events.JSON200 == nil {
		return fail("list events", events.StatusCode(), events.Body)
	}
	var seated, general, scheduled *ticketsales.Event
	for i, e := range events.JSON200.Data {
		switch {
		case e.HasScheme && seated == nil:
			seated = &events.JSON200.Data[i]
		case !e.HasScheme:
			sessions, err := c.ListSessionsWithResponse(ctx, &ticketsales.ListSessionsParams{FilterEventId: &e.Id})
			if err != nil {
				return err
			}
			if sessions.JSON200 == nil {
				return fail("list sessions", sessions.StatusCode(), sessions.Body)
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

	// 1. Seated: a free seat from availability, held, ordered, confirmed.
	avail, err := c.GetEventAvailabilityWithResponse(ctx, seated.Id, nil)
	if err != nil {
		return err
	}
	if avail.JSON200 == nil {
		return fail("availability", avail.StatusCode(), avail.Body)
	}
	var seat *ticketsales.SeatAvailability
	for i, s := range avail.JSON200.Data.Seats {
		if s.Status == "free" {
			seat = &avail.JSON200.Data.Seats[i]
			break
		}
	}
	if seat == nil {
		return fmt.Errorf("event %d has no free seat", seated.Id)
	}
	hold, err := c.CreateReservationWithResponse(ctx, &ticketsales.CreateReservationParams{IdempotencyKey: newKey()},
		ticketsales.CreateReservationJSONRequestBody{EventId: seated.Id, Seats: &[]ticketsales.SeatRef{{ZoneId: seat.ZoneId, SeatId: seat.SeatId}}})
	if err != nil {
		return err
	}
	if hold.JSON201 == nil {
		return fail("reserve", hold.StatusCode(), hold.Body)
	}
	logf("held %s of %q until %s", seat.SeatId, seated.Title, hold.JSON201.Data.ExpiresAt.Format(time.RFC3339))
	rid := hold.JSON201.Data.Id
	seatedOrder, err := order(ctx, c, logf, "seated", ticketsales.CreateOrderInputBody{EventId: seated.Id, ReservationId: &rid, Customer: buyer,
		Payment: ticketsales.CreateOrderInputBodyPaymentExternal})
	if err != nil {
		return err
	}
	if err := paidWithTickets(ctx, c, logf, seatedOrder, true); err != nil {
		return err
	}

	// 2. General admission: a category's tickets, by quantity.
	cats, err := c.ListEventCategoriesWithResponse(ctx, general.Id)
	if err != nil {
		return err
	}
	if cats.JSON200 == nil || len(cats.JSON200.Data) == 0 {
		return fail("categories", cats.StatusCode(), cats.Body)
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
	sessions, err := c.ListSessionsWithResponse(ctx, &ticketsales.ListSessionsParams{FilterEventId: &scheduled.Id})
	if err != nil {
		return err
	}
	cats, err = c.ListEventCategoriesWithResponse(ctx, scheduled.Id)
	if err != nil {
		return err
	}
	if sessions.JSON200 == nil || cats.JSON200 == nil || len(cats.JSON200.Data) == 0 {
		return fmt.Errorf("scheduled event %d: sessions %d, categories %d", scheduled.Id, sessions.StatusCode(), cats.StatusCode())
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

	// 4. A full refund of the seated order: its seat is free again.
	reason := "buyer cannot come"
	refund, err := c.RefundOrderWithResponse(ctx, seatedOrder.Id, &ticketsales.RefundOrderParams{IdempotencyKey: newKey()},
		ticketsales.RefundOrderJSONRequestBody{Reason: &reason})
	if err != nil {
		return err
	}
	if refund.JSON201 == nil {
		return fail("refund", refund.StatusCode(), refund.Body)
	}
	r := refund.JSON201.Data
	if r.Status != "completed" || r.OrderStatus != "refunded" || r.Amount.Amount != seatedOrder.Amount.Amount {
		return fmt.Errorf("refund: %+v", r)
	}
	logf("refunded order %d: %d.%02d %s, %s", seatedOrder.Id, r.Amount.Amount/100, r.Amount.Amount%100, r.Amount.Currency, r.MoneyReturnedBy)
	return nil
}

// order creates an order and confirms its external payment.
func order(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), what string, in ticketsales.CreateOrderInputBody) (ticketsales.Order, error) {
	created, err := c.CreateOrderWithResponse(ctx, &ticketsales.CreateOrderParams{IdempotencyKey: newKey()}, in)
	if err != nil {
		return ticketsales.Order{}, err
	}
	if created.JSON201 == nil {
		return ticketsales.Order{}, fail(what+" order", created.StatusCode(), created.Body)
	}
	o := created.JSON201.Data
	confirmed, err := c.ConfirmOrderWithResponse(ctx, o.Id, &ticketsales.ConfirmOrderParams{IdempotencyKey: newKey()},
		ticketsales.ConfirmInputBody{ExternalPaymentId: "pay-" + newKey(), PaidAmount: o.Amount.Amount})
	if err != nil {
		return ticketsales.Order{}, err
	}
	if confirmed.JSON200 == nil {
		return ticketsales.Order{}, fail(what+" confirm", confirmed.StatusCode(), confirmed.Body)
	}
	logf("%s order %d: %s, %d.%02d %s", what, o.Id, confirmed.JSON200.Data.Status, o.Amount.Amount/100, o.Amount.Amount%100, o.Amount.Currency)
	return confirmed.JSON200.Data, nil
}

// paidWithTickets checks a paid order's tickets: active, with a barcode,
// a seat exactly when seated, of the order's environment.
func paidWithTickets(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), o ticketsales.Order, seated bool) error {
	if o.Status != "paid" {
		return fmt.Errorf("order %d is %s after confirm", o.Id, o.Status)
	}
	ts, err := c.ListOrderTicketsWithResponse(ctx, o.Id)
	if err != nil {
		return err
	}
	if ts.JSON200 == nil || len(ts.JSON200.Data) == 0 {
		return fail("tickets", ts.StatusCode(), ts.Body)
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
// reads it; without, the check is skipped).
func signedCodes(ctx context.Context, c *ticketsales.ClientWithResponses, logf func(string, ...any), o ticketsales.Order, ts []ticketsales.Ticket) error {
	res, err := c.GetCheckInPublicKeyWithResponse(ctx, o.EventId)
	if err != nil {
		return err
	}
	if res.StatusCode() == http.StatusForbidden {
		logf("  signed codes not checked: the key has no checkin scope")
		return nil
	}
	if res.JSON200 == nil {
		return fail("public key", res.StatusCode(), res.Body)
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

package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/store"
)

// LoadDocument builds the rendered document of an order's tickets, their
// QR codes the codes codes signs (nil: the bare barcodes). Its PDFURL is the
// caller's to set: the page links the PDF with the token it was opened by.
func LoadDocument(ctx context.Context, db bun.IDB, codes *CodeSigner, orderID int64) (Order, *store.Order, error) {
	o, err := store.GetOrderByID(ctx, db, orderID)
	if err != nil {
		return Order{}, nil, err
	}
	ev, err := store.GetEventPlace(ctx, db, o.EventID)
	if err != nil {
		return Order{}, nil, fmt.Errorf("event of order %d: %w", orderID, err)
	}
	loc, err := time.LoadLocation(ev.Timezone)
	if err != nil {
		loc = time.UTC
	}
	rows, err := store.ListOrderTickets(ctx, db, orderID)
	if err != nil {
		return Order{}, nil, err
	}
	doc := Order{OrderID: o.ID, EventTitle: ev.Title, Venue: ev.Venue, City: ev.City, StartsAt: ev.StartsAt,
		Location: loc, Sandbox: o.IsTest}
	var signed []string
	if codes != nil {
		// Without its key (sealed with a secret no longer configured) the
		// QR codes carry the bare barcodes: the tickets are still shown.
		signed, err = codes.Sign(ctx, db, o.EventID, o.IsTest, TicketCodes(rows))
		if err != nil && !CannotSign(err) {
			return Order{}, nil, fmt.Errorf("ticket codes of order %d: %w", orderID, err)
		}
	}
	for i, t := range rows {
		seat := t.Category
		if t.Label != nil {
			seat = *t.Label
		}
		doc.Tickets = append(doc.Tickets, Ticket{Number: t.Number, Barcode: t.Barcode, Status: t.Status,
			Seat: seat, Category: t.Category, Price: FormatMoney(t.Price, o.Currency)})
		if signed != nil {
			doc.Tickets[i].Code = signed[i]
		}
	}
	return doc, o, nil
}

// TicketCodes are what the codes of tickets say (their event is the
// signer's to add).
func TicketCodes(rows []store.Ticket) []ticketcode.Code {
	out := make([]ticketcode.Code, len(rows))
	for i, t := range rows {
		out[i] = ticketcode.Code{TicketID: t.ID, Barcode: t.Barcode}
	}
	return out
}

// Package email composes the e-mail that brings a production order its
// tickets. It is apart from package delivery so the api, which renders
// pages but sends no mail, does not link the mail transport.
package email

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/mail"
)

// Tickets composes the e-mail that brings a production order its
// tickets: the order page's link and the tickets listed. It returns nil when
// there is nothing to send (a sandbox order, or one e-mailed already). The
// Message-ID is the order's, so a send repeated after a crash is the same
// message.
func Tickets(ctx context.Context, db bun.IDB, links delivery.Links, orderID int64) (*mail.Message, error) {
	return compose(ctx, db, links, orderID, "")
}

// TicketsAgain composes the tickets e-mail once more, when the organizer
// sends it again from the cabinet (the buyer lost it): the same
// message, with a Message-ID of its own per resend (resendID), so it is a
// new e-mail, while a send of the same resend repeated after a crash is the
// same message. It returns nil for a sandbox order, and for one no longer
// paid (refunded in full since the organizer asked).
func TicketsAgain(ctx context.Context, db bun.IDB, links delivery.Links, orderID int64, resendID string) (*mail.Message, error) {
	if resendID == "" {
		return nil, fmt.Errorf("tickets e-mail of order %d again: no resend id", orderID)
	}
	return compose(ctx, db, links, orderID, resendID)
}

func compose(ctx context.Context, db bun.IDB, links delivery.Links, orderID int64, resendID string) (*mail.Message, error) {
	doc, o, err := delivery.LoadDocument(ctx, db, links.Codes, orderID)
	if err != nil {
		return nil, err
	}
	if o.IsTest || (o.EmailedAt != nil && resendID == "") {
		return nil, nil
	}
	if resendID != "" && !o.Status.TicketsValid() {
		// Refunded or cancelled since the organizer asked: its tickets
		// are void, and an e-mail bringing them would mislead the buyer.
		return nil, nil
	}
	// The link was never sent: one that cannot be shown is replaced. A
	// resend replaces one too: the buyer asked because the first e-mail
	// is lost, and its link with it.
	page, err := links.OrderPage(ctx, db, o, true)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("order-%d-tickets@ticketsales", o.ID)
	if resendID != "" {
		id = fmt.Sprintf("order-%d-tickets-again-%s@ticketsales", o.ID, resendID)
	}
	return &mail.Message{
		To:        o.CustomerEmail,
		Subject:   fmt.Sprintf("Your tickets: %s", doc.EventTitle),
		MessageID: id,
		Text:      text(o.CustomerFirstName, o.ID, doc, page),
	}, nil
}

// text is the e-mail's body: the order page's link, where the tickets' QR
// codes are and their PDF downloads, and each valid ticket by number and
// seat. The codes themselves stay behind the link: an e-mail is copied to
// previews, outboxes and forwards, and a code is what admits. The PDF is
// not attached (docs/decisions.md, "The tickets e-mail"): it is made when
// the buyer first asks for it, off the sale's path, and shows a ticket
// refunded since as VOID, which an attached copy never would. Refunded
// tickets are not listed, only counted.
func text(firstName string, orderID int64, doc delivery.Order, page string) string {
	var valid []delivery.Ticket
	for _, t := range doc.Tickets {
		if !t.Void() {
			valid = append(valid, t)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\nthank you for your order %d. Your %d ticket(s) for %s:\n\n",
		firstName, orderID, len(valid), doc.EventTitle)
	for _, t := range valid {
		fmt.Fprintf(&b, "  %s: %s\n", t.Number, t.Seat)
	}
	if n := len(doc.Tickets) - len(valid); n > 0 {
		fmt.Fprintf(&b, "\n%d ticket(s) of this order were refunded and are no longer valid.\n", n)
	}
	fmt.Fprintf(&b, "\nOpen your tickets here, show the QR code at the door or download them as a PDF to print:\n%s\n", page)
	return b.String()
}

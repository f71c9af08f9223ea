// Package delivery gets an order's tickets to the buyer: the public order
// page and its access links, the printable PDF (one page per ticket), the
// EAN-13 barcodes and QR codes, and the tickets e-mail. Rendering needs no
// database or network; the document is read from the store.
package delivery

import (
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// Ticket is one ticket as rendered.
type Ticket struct {
	Number  string // e.g. "T-000123-01"
	Barcode string // 13 digits (EAN-13)
	// Code is the signed code (package ticketcode) the QR code carries;
	// "": the barcode (format 1).
	Code     string
	Status   states.TicketStatus
	Seat     string // label like "Stalls, row 1, seat 5", or category name for general admission
	Category string
	Price    string // already formatted, e.g. "3 000.00 RUB"
}

// Order is what the order page and the PDF show.
type Order struct {
	OrderID    int64
	EventTitle string
	Venue      string
	City       string
	StartsAt   time.Time      // shown in Location below
	Location   *time.Location // venue time zone; nil = UTC
	Tickets    []Ticket
	PDFURL     string // link to the PDF on the order page (relative or absolute)
	// Sandbox: the order was made with a sandbox key. Its tickets hold real
	// seats' labels and scannable codes, so every ticket is marked TEST
	// wherever it is shown: a screenshot or printout must not pass for a
	// real ticket with a person at the door.
	Sandbox bool
}

// Void reports whether the ticket must be shown as not valid for entry:
// refunded tickets are void.
func (t Ticket) Void() bool { return t.Status == states.TicketRefunded }

// localStart returns StartsAt in the venue's zone: buyers need the time as
// printed on the venue's posters, not the server's zone.
func (o Order) localStart() time.Time {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	return o.StartsAt.In(loc)
}

// whenText is the human-readable local date/time shared by the PDF and the page.
func (o Order) whenText() string {
	if o.StartsAt.IsZero() {
		return "Date to be announced"
	}
	t := o.localStart()
	return t.Format("Mon, 02 Jan 2006, 15:04") + " " + zoneLabel(t)
}

// zoneLabel prefers a letter abbreviation (MSK, UTC); tzdata uses numeric
// names like "+05" for many zones, which read better as "UTC+05:00".
func zoneLabel(t time.Time) string {
	name, _ := t.Zone()
	if name != "" && strings.IndexFunc(name, func(r rune) bool { return !('A' <= r && r <= 'Z') }) < 0 {
		return name
	}
	return "UTC" + t.Format("-07:00")
}

// QRContent is what the ticket's QR code carries: its signed code, or its
// barcode.
func (t Ticket) QRContent() string {
	if t.Code != "" {
		return t.Code
	}
	return t.Barcode
}

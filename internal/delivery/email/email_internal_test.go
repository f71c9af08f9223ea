package email

import (
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/states"
)

// The e-mail lists the valid tickets by number and seat, never a code (the
// codes admit, and stay behind the link), and counts refunded ones apart.
func TestTicketsTextListsValidTicketsWithoutCodes(t *testing.T) {
	doc := delivery.Order{EventTitle: "Swan Lake", Tickets: []delivery.Ticket{
		{Number: "T-000042-01", Barcode: "4601234567893", Code: "signed-1", Seat: "Parterre, row 1, seat 5", Status: states.TicketActive},
		{Number: "T-000042-02", Barcode: "4601234567909", Code: "signed-2", Seat: "Parterre, row 1, seat 6", Status: states.TicketRefunded},
	}}
	got := text("Anna", 42, doc, "https://tickets.example/o/42?access_token=t")
	for _, want := range []string{"Hello Anna", "order 42", "Your 1 ticket(s) for Swan Lake", "T-000042-01: Parterre, row 1, seat 5",
		"1 ticket(s) of this order were refunded", "https://tickets.example/o/42?access_token=t"} {
		if !strings.Contains(got, want) {
			t.Errorf("the e-mail lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"T-000042-02", "seat 6", "4601234567893", "4601234567909", "signed-1"} {
		if strings.Contains(got, never) {
			t.Errorf("the e-mail shows %q:\n%s", never, got)
		}
	}
}

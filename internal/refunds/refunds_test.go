package refunds

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

// A refund's id is the same for a repeat of the same request (the API
// key, the order, the Idempotency-Key and the tickets, in any order), so a
// retry after a lost answer finds the refund instead of making another;
// any other request gets another id.
func TestRefundIDFollowsTheRequest(t *testing.T) {
	id := ID(1, 100, "key-1", []int64{7, 8, 9})
	if again := ID(1, 100, "key-1", []int64{9, 7, 8}); again != id {
		t.Errorf("the same tickets in another order: %s, want %s", again, id)
	}
	others := map[string]string{
		"another API key":         ID(2, 100, "key-1", []int64{7, 8, 9}),
		"another order":           ID(1, 101, "key-1", []int64{7, 8, 9}),
		"another Idempotency-Key": ID(1, 100, "key-2", []int64{7, 8, 9}),
		"fewer tickets":           ID(1, 100, "key-1", []int64{7, 8}),
		"every active ticket":     ID(1, 100, "key-1", nil),
		// The key is free text: it must not run into the tickets.
		"a key ending like the tickets": ID(1, 100, "key-1|[7 8 9]", nil),
	}
	seen := map[string]string{id: "the request"}
	for name, other := range others {
		if was, ok := seen[other]; ok {
			t.Errorf("%s: the same id as %s (%s)", name, was, other)
		}
		seen[other] = name
	}
}

// Tickets the order does not have are a 422 naming each of them (a
// request error, nothing changed); tickets refunded already a 409
// invalid_state; any other error passes as it is.
func TestRefundErrors(t *testing.T) {
	err := refundError(fmt.Errorf("refund: %w", &store.RefundTicketsError{NotInOrder: []int64{41, 42}, Refunded: []int64{7}}))
	var verr *errs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("tickets of another order: %v", err)
	}
	var named []string
	for _, f := range verr.Fields {
		named = append(named, fmt.Sprint(f.Location, "=", f.Value))
	}
	if fmt.Sprint(named) != "[body.ticket_ids=41 body.ticket_ids=42]" {
		t.Errorf("tickets of another order: %v", named)
	}
	if p := verr.Problem(); p.Status != 422 || p.Code != "validation_error" {
		t.Errorf("tickets of another order answered %d %s", p.Status, p.Code)
	}
	err = refundError(&store.RefundTicketsError{Refunded: []int64{7}})
	var se *errs.StateError
	if !errors.As(err, &se) || se.Problem().Status != 409 || se.Problem().Code != "invalid_state" || se.Status != "refunded already" {
		t.Errorf("a ticket refunded already: %v", err)
	}
	if err := refundError(errs.NotFound); err != errs.NotFound {
		t.Errorf("another error: %v", err)
	}
	if err := refundError(nil); err != nil {
		t.Errorf("no error: %v", err)
	}
}

// A refund's request holds its bounds whoever makes it (the partner API,
// the cabinet, ticketctl), checked before anything is read: at most 20
// ticket ids (at least one from a cabinet form, whose list is what is
// refunded; none elsewhere is every active ticket), each a valid id once,
// a reason of at most 500 characters (not bytes).
func TestRefundBounds(t *testing.T) {
	ids := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i + 1)
		}
		return out
	}
	partner := func(tickets []int64, reason string) Request {
		return Request{By: AsPartner(&apikey.Principal{KeyID: 3, CompanyID: 1}), OrderID: 9, TicketIDs: tickets, Reason: reason,
			Source: FromIdempotencyKey("k")}
	}
	cabinet := func(tickets []int64, reason string) Request {
		return Request{By: AsOrganizer(1, false), OrderID: 9, TicketIDs: tickets, Reason: reason, Source: FromCabinetToken("t")}
	}
	ticketctl := func(tickets []int64, reason string) Request {
		return Request{By: AsOrganizer(1, true), OrderID: 9, TicketIDs: tickets, Reason: reason, Source: OneOff()}
	}
	for _, c := range []struct {
		name  string
		in    Request
		field string // "": accepted
	}{
		{"a partner's refund of every ticket (no ids)", partner(nil, ""), ""},
		{"ticketctl's refund of every ticket (no ids)", ticketctl(nil, ""), ""},
		{"a cabinet form choosing no ticket", cabinet(nil, ""), "body.ticket_ids"},
		{"a cabinet form choosing an empty list", cabinet([]int64{}, ""), "body.ticket_ids"},
		{"one ticket", partner(ids(1), ""), ""},
		{"one ticket from a cabinet form", cabinet(ids(1), ""), ""},
		{"MaxTickets tickets", partner(ids(MaxTickets), ""), ""},
		{"MaxTickets tickets from a cabinet form", cabinet(ids(MaxTickets), ""), ""},
		{"MaxTickets+1 tickets", partner(ids(MaxTickets+1), ""), "body.ticket_ids"},
		{"MaxTickets+1 tickets from ticketctl", ticketctl(ids(MaxTickets+1), ""), "body.ticket_ids"},
		{"ticket 0", partner([]int64{0}, ""), "body.ticket_ids[0]"},
		{"a negative ticket", partner([]int64{5, -5}, ""), "body.ticket_ids[1]"},
		{"a ticket twice", partner([]int64{5, 5}, ""), "body.ticket_ids[1]"},
		{"a ticket twice, apart", cabinet([]int64{5, 6, 5}, ""), "body.ticket_ids[2]"},
		{"a ticket twice from ticketctl", ticketctl([]int64{7, 7}, ""), "body.ticket_ids[1]"},
		{"a reason of 500 Latin characters", partner(nil, strings.Repeat("a", MaxReasonLength)), ""},
		{"a reason of 500 Cyrillic characters (1000 bytes)", cabinet(ids(1), strings.Repeat("я", MaxReasonLength)), ""},
		{"a reason of 501 characters", partner(nil, strings.Repeat("a", MaxReasonLength+1)), "body.reason"},
		{"a reason of 501 Cyrillic characters", cabinet(ids(1), strings.Repeat("я", MaxReasonLength+1)), "body.reason"},
		{"a reason of two lines", ticketctl(nil, "Передумали.\nВернём позже."), ""},
	} {
		err := checkRefund(c.in)
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: refused with %v", c.name, err)
			}
			continue
		}
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: %v, want a RequestError", c.name, err)
			continue
		}
		if _, ok := problems.Fields(t, err)[c.field]; !ok {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, err, c.field)
		}
	}
}

// A refund request's problems read as sentences where a person reads them
// (the cabinet's page, ticketctl); the API answers its fields.
func TestRefundRequestErrorInWords(t *testing.T) {
	for _, c := range []struct {
		in   Request
		want string
	}{
		{Request{By: AsOrganizer(1, false), OrderID: 9, Source: FromCabinetToken("t")}, "Choose at least one ticket to refund."},
		{Request{By: AsOrganizer(1, false), OrderID: 9, TicketIDs: []int64{4}, Source: FromCabinetToken("t"),
			Reason: strings.Repeat("я", 501)}, "The reason must be 0 to 500 characters long."},
		{Request{By: AsOrganizer(1, false), OrderID: 9, TicketIDs: []int64{4, 4}, Source: OneOff()}, "Ticket listed twice (4)."},
	} {
		if err := checkRefund(c.in); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.in, err, c.want)
		}
	}
}

// Who asks and what the id derives from fit together: a partner's refund
// by its Idempotency-Key, the organizer's by a cabinet token or once; a
// cabinet record only with a cabinet token. Anything else is a bug of
// the caller, refused before anything is read.
func TestRefundRequestFitsTogether(t *testing.T) {
	p := &apikey.Principal{KeyID: 3, CompanyID: 1}
	for name, in := range map[string]Request{
		"nobody asks":                      {OrderID: 9, Source: OneOff()},
		"no source":                        {By: AsOrganizer(1, false), OrderID: 9},
		"a partner's refund made once":     {By: AsPartner(p), OrderID: 9, Source: OneOff()},
		"a partner's refund by a token":    {By: AsPartner(p), OrderID: 9, TicketIDs: []int64{1}, Source: FromCabinetToken("t")},
		"the organizer's by a partner key": {By: AsOrganizer(1, false), OrderID: 9, Source: FromIdempotencyKey("k")},
		"a record without a token":         {By: AsOrganizer(1, false), OrderID: 9, Source: OneOff(), Action: &store.CabinetAction{}},
	} {
		err := checkRefund(in)
		var re *RequestError
		if err == nil || errors.As(err, &re) {
			t.Errorf("%s: %v, want the caller's bug refused", name, err)
		}
	}
}

// A request's id is stable under the order of its tickets, for every
// source, and the same as the ids refunds had before (a partner's by its
// key, a cabinet form's by OrganizerRefundID), so a repeat across a deploy
// still finds its refund. A one-off source is another refund each time.
func TestRequestIDIsStable(t *testing.T) {
	p := &apikey.Principal{KeyID: 3, CompanyID: 1}
	once := OneOff()
	for name, c := range map[string]struct {
		by   Asker
		src  Source
		want string
	}{
		"partner":   {AsPartner(p), FromIdempotencyKey("k-1"), ID(3, 9, "k-1", []int64{7, 8, 9})},
		"cabinet":   {AsOrganizer(1, true), FromCabinetToken("tok"), OrganizerRefundID(9, "tok", []int64{7, 8, 9})},
		"ticketctl": {AsOrganizer(1, true), once, ID(0, 9, "ticketctl:"+once.value, []int64{7, 8, 9})},
	} {
		a := Request{By: c.by, OrderID: 9, TicketIDs: []int64{7, 8, 9}, Source: c.src}.ID()
		b := Request{By: c.by, OrderID: 9, TicketIDs: []int64{9, 7, 8}, Source: c.src}.ID()
		if a != b || a != c.want {
			t.Errorf("%s: %s and %s for the same tickets, want %s", name, a, b, c.want)
		}
	}
	if OrganizerRefundID(9, "tok", nil) != ID(0, 9, "cabinet:tok", nil) {
		t.Error("a cabinet form's refund id moved")
	}
	x := Request{By: AsOrganizer(1, false), OrderID: 9, Source: OneOff()}
	y := Request{By: AsOrganizer(1, false), OrderID: 9, Source: OneOff()}
	if x.ID() == y.ID() {
		t.Errorf("two one-off refunds share id %s", x.ID())
	}
}

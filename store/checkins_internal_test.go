package store

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// The outcome of a scan, for each state a ticket can be found in.
func TestScanDecision(t *testing.T) {
	at := time.Now()
	session, other := int64(7), int64(8)
	paid := func(edit func(*ScannedTicket)) *ScannedTicket {
		tk := &ScannedTicket{EventID: 1, Status: states.TicketActive, OrderStatus: states.OrderPaid}
		if edit != nil {
			edit(tk)
		}
		return tk
	}
	in := Scan{EventID: 1, Direction: states.ScanIn}
	for _, c := range []struct {
		name string
		t    *ScannedTicket
		s    Scan
		want states.ScanOutcome
	}{
		{"no such ticket", nil, in, states.ScanUnknown},
		{"a paid ticket", paid(nil), in, states.ScanAdmitted},
		{"a partially refunded order's active ticket", paid(func(t *ScannedTicket) { t.OrderStatus = states.OrderPartiallyRefunded }), in, states.ScanAdmitted},
		{"inside already", paid(func(t *ScannedTicket) { t.Inside, t.CheckedInAt = true, &at }), in, states.ScanAlreadyCheckedIn},
		{"out and back in (re-entry)", paid(func(t *ScannedTicket) { t.CheckedInAt = &at }), in, states.ScanAdmitted},
		{"refunded", paid(func(t *ScannedTicket) { t.Status = states.TicketRefunded }), in, states.ScanVoid},
		{"order cancelled", paid(func(t *ScannedTicket) { t.OrderStatus = states.OrderCancelled }), in, states.ScanVoid},
		{"order awaiting payment", paid(func(t *ScannedTicket) { t.OrderStatus = states.OrderPendingPayment }), in, states.ScanNotPaid},
		{"another event", paid(func(t *ScannedTicket) { t.EventID = 2 }), in, states.ScanWrongEvent},
		{"a timed ticket at its session's door", paid(func(t *ScannedTicket) { t.SessionID = &session }), Scan{EventID: 1, SessionID: 7}, states.ScanAdmitted},
		{"a timed ticket at another session's door", paid(func(t *ScannedTicket) { t.SessionID = &other }), Scan{EventID: 1, SessionID: 7}, states.ScanWrongEvent},
		{"a timed ticket at a door of any session", paid(func(t *ScannedTicket) { t.SessionID = &other }), in, states.ScanAdmitted},
		{"out", paid(func(t *ScannedTicket) { t.Inside = true }), Scan{EventID: 1, Direction: states.ScanOut}, states.ScanExited},
		{"out of a refunded ticket", paid(func(t *ScannedTicket) { t.Status = states.TicketRefunded }), Scan{EventID: 1, Direction: states.ScanOut}, states.ScanVoid},
	} {
		if got := decide(c.t, c.s); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

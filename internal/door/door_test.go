package door

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// The outcome of a scan, for each state a ticket can be found in.
func TestScanDecision(t *testing.T) {
	session, other := int64(7), int64(8)
	paid := func(edit func(*Ticket)) *Ticket {
		tk := &Ticket{EventID: 1, Status: states.TicketActive, OrderStatus: states.OrderPaid}
		if edit != nil {
			edit(tk)
		}
		return tk
	}
	in := Scan{EventID: 1, Direction: states.ScanIn}
	for _, c := range []struct {
		name string
		t    *Ticket
		s    Scan
		want states.ScanOutcome
	}{
		{"no such ticket", nil, in, states.ScanUnknown},
		{"a paid ticket", paid(nil), in, states.ScanAdmitted},
		{"a partially refunded order's active ticket", paid(func(t *Ticket) { t.OrderStatus = states.OrderPartiallyRefunded }), in, states.ScanAdmitted},
		{"inside already", paid(func(t *Ticket) { t.Inside = true }), in, states.ScanAlreadyCheckedIn},
		{"out and back in (re-entry)", paid(nil), in, states.ScanAdmitted},
		{"refunded", paid(func(t *Ticket) { t.Status = states.TicketRefunded }), in, states.ScanVoid},
		{"order cancelled", paid(func(t *Ticket) { t.OrderStatus = states.OrderCancelled }), in, states.ScanVoid},
		{"order awaiting payment", paid(func(t *Ticket) { t.OrderStatus = states.OrderPendingPayment }), in, states.ScanNotPaid},
		{"another event", paid(func(t *Ticket) { t.EventID = 2 }), in, states.ScanWrongEvent},
		{"a timed ticket at its session's door", paid(func(t *Ticket) { t.SessionID = &session }), Scan{EventID: 1, SessionID: 7}, states.ScanAdmitted},
		{"a timed ticket at another session's door", paid(func(t *Ticket) { t.SessionID = &other }), Scan{EventID: 1, SessionID: 7}, states.ScanWrongEvent},
		{"a timed ticket at a door of any session", paid(func(t *Ticket) { t.SessionID = &other }), in, states.ScanAdmitted},
		{"out", paid(func(t *Ticket) { t.Inside = true }), Scan{EventID: 1, Direction: states.ScanOut}, states.ScanExited},
		{"out of a refunded ticket", paid(func(t *Ticket) { t.Status = states.TicketRefunded }), Scan{EventID: 1, Direction: states.ScanOut}, states.ScanVoid},
	} {
		if got := Decide(c.t, c.s); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// The conflict an offline scan reveals, for each way a door can let a
// holder in against the record by the scans' times, and none where it
// did not let them in or an exit lies between the two entries.
func TestConflictOf(t *testing.T) {
	at := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	entry := Scan{Offline: true, Direction: states.ScanIn, Gate: "East", DeviceID: "dev-B", ScannedAt: at}
	with := func(edit func(*Scan)) Scan {
		s := entry
		edit(&s)
		return s
	}
	elsewhere := &Pass{ID: 7, Outcome: states.ScanAdmitted, Gate: "North", DeviceID: "dev-A", At: at.Add(-time.Minute)}
	online := &Pass{ID: 8, Outcome: states.ScanAdmitted, Gate: "North", At: at.Add(time.Minute)} // names no device
	sameDevice := &Pass{ID: 9, Outcome: states.ScanAdmitted, Gate: "West", DeviceID: "dev-B", At: at.Add(-time.Minute)}
	exit := &Pass{ID: 10, Outcome: states.ScanExited, Gate: "North", DeviceID: "dev-A", At: at.Add(-2 * time.Minute)}
	voidBefore, voidAfter := at.Add(-time.Minute), at.Add(time.Minute)
	// The upload lets the ticket out 30 s after the entry, before the
	// online admission: that is the holder coming back.
	leaving := with(func(s *Scan) { s.LeftAt = at.Add(30 * time.Second) })
	// A copy let in elsewhere by the record between the scan and an exit.
	backIn := &Pass{ID: 11, Outcome: states.ScanAlreadyCheckedIn, Gate: "South", DeviceID: "dev-C", At: at.Add(-30 * time.Second)}
	for _, c := range []struct {
		name          string
		s             Scan
		outcome       states.ScanOutcome
		voidSince     *time.Time
		before, after *Pass
		want          states.ConflictKind
		withID        int64
	}{
		{"a copy let in while another device's admission had it inside", entry, states.ScanAlreadyCheckedIn, nil, elsewhere, nil, states.ConflictTwoDoors, 7},
		{"inside by an online admission at another gate after the scan", entry, states.ScanAlreadyCheckedIn, nil, nil, online, states.ConflictTwoDoors, 8},
		{"inside by an online admission at its own gate", with(func(s *Scan) { s.Gate = "North" }), states.ScanAlreadyCheckedIn, nil, nil, online, "", 0},
		{"inside by its own device's admission: scanned twice", entry, states.ScanAlreadyCheckedIn, nil, sameDevice, nil, "", 0},
		{"inside, but let out before the scan (the exit uploaded late)", entry, states.ScanAlreadyCheckedIn, nil, exit, nil, "", 0},
		{"inside by another device's entry the record had found inside", entry, states.ScanAlreadyCheckedIn, nil, backIn, nil, states.ConflictTwoDoors, 11},
		{"a copy the device refused", with(func(s *Scan) { s.DoorOutcome = states.ScanAlreadyCheckedIn }), states.ScanAlreadyCheckedIn, nil, elsewhere, nil, "", 0},
		{"a copy the device says it let in", with(func(s *Scan) { s.DoorOutcome = states.ScanAdmitted }), states.ScanAlreadyCheckedIn, nil, elsewhere, nil, states.ConflictTwoDoors, 7},
		{"a ticket refunded after the scan", entry, states.ScanVoid, &voidAfter, nil, nil, states.ConflictAdmittedVoid, 0},
		{"a ticket refunded before the scan, the device silent", entry, states.ScanVoid, &voidBefore, nil, nil, "", 0},
		{"a ticket refunded before the scan the device says it let in", with(func(s *Scan) { s.DoorOutcome = states.ScanAdmitted }), states.ScanVoid, &voidBefore, nil, nil, states.ConflictAdmittedVoid, 0},
		{"a void ticket the device refused", with(func(s *Scan) { s.DoorOutcome = states.ScanVoid }), states.ScanVoid, &voidAfter, nil, nil, "", 0},
		{"let in while inside by an earlier admission elsewhere", entry, states.ScanAdmitted, nil, elsewhere, exit, states.ConflictAdmittedWhileInside, 7},
		{"let in, and another door let it in after, before an exit", entry, states.ScanAdmitted, nil, exit, online, states.ConflictAdmittedWhileInside, 8},
		{"a re-entry after an exit", entry, states.ScanAdmitted, nil, exit, nil, "", 0},
		{"a first entry", entry, states.ScanAdmitted, nil, nil, nil, "", 0},
		{"after its own device's admission", entry, states.ScanAdmitted, nil, sameDevice, nil, "", 0},
		{"an online scan", with(func(s *Scan) { s.Offline = false }), states.ScanAlreadyCheckedIn, nil, elsewhere, nil, "", 0},
		{"an exit", with(func(s *Scan) { s.Direction = states.ScanOut }), states.ScanVoid, nil, nil, nil, "", 0},
		{"a ticket not paid", entry, states.ScanNotPaid, nil, elsewhere, nil, "", 0},
		{"inside by an admission elsewhere after its own exit in the upload", leaving, states.ScanAlreadyCheckedIn, nil, nil, online, "", 0},
		{"inside by an admission elsewhere before the scan, leaving later", leaving, states.ScanAlreadyCheckedIn, nil, elsewhere, nil, states.ConflictTwoDoors, 7},
		{"let in elsewhere after its own exit in the upload", leaving, states.ScanAdmitted, nil, exit, online, "", 0},
		{"let in elsewhere before its own exit in the upload", with(func(s *Scan) { s.LeftAt = at.Add(2 * time.Minute) }), states.ScanAdmitted, nil, exit, online, states.ConflictAdmittedWhileInside, 8},
	} {
		got, p := ConflictOf(c.s, c.outcome, c.voidSince, c.before, c.after)
		var id int64
		if p != nil {
			id = p.ID
		}
		if got != c.want || id != c.withID {
			t.Errorf("%s: %q with %d, want %q with %d", c.name, got, id, c.want, c.withID)
		}
	}
}

// Whether an offline entry of a void ticket is taken as the door's
// admission of it: the device's word when it gave one; without it, only
// when the ticket became void after the scan (a list from before the
// refund said valid; one from after it said void, and the door refused).
func TestAdmittedVoid(t *testing.T) {
	scan := time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC)
	before, after := scan.Add(-time.Minute), scan.Add(time.Minute)
	for _, c := range []struct {
		name        string
		doorOutcome states.ScanOutcome
		voidSince   *time.Time
		want        bool
	}{
		{"silent, refunded after the scan", "", &after, true},
		{"silent, refunded before the scan", "", &before, false},
		{"silent, refunded the same instant", "", &scan, false},
		{"silent, void since a time not on record", "", nil, false},
		{"says admitted, refunded before the scan", states.ScanAdmitted, &before, true},
		{"says admitted, refunded after the scan", states.ScanAdmitted, &after, true},
		{"says void, refunded after the scan", states.ScanVoid, &after, false},
		{"says already_checked_in, refunded after the scan", states.ScanAlreadyCheckedIn, &after, false},
		{"says void, refunded before the scan", states.ScanVoid, &before, false},
	} {
		if got := AdmittedVoid(c.doorOutcome, scan, c.voidSince); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

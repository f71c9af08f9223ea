package checkin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/door"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/store"
)

// Offline serves doors that scan without the network: the list of an
// event's tickets they download (and its changes since), the event's
// public key that verifies the tickets' signed codes, the batch of scans
// they upload later, and the conflicts those batches reveal.
type Offline struct {
	DB    *bun.DB
	Codes *delivery.CodeSigner
}

// MaxBatch is the most scans one batch carries.
const MaxBatch = 1000

// settlers is how many tickets' scans a batch settles at once (each
// ticket's in scanned_at order).
const settlers = 8

// DoorList is what a door downloads to scan an event offline.
type DoorList struct {
	EventID   int64  `json:"event_id"`
	PublicKey string `json:"public_key" doc:"The event's Ed25519 public key, unpadded base64url of 32 bytes: it verifies the tickets' signed codes (format T2)."`
	Cursor    string `json:"cursor" doc:"Pass it as updated_since for the tickets changed since this list."`
	Delta     bool   `json:"delta" doc:"true: only the tickets changed since updated_since (apply them by id, over the list held); false: every ticket."`
	// Categories name the tickets' category_id.
	Categories []DoorCategory   `json:"categories"`
	Tickets    []DoorListTicket `json:"tickets"`
}

// DoorCategory is a category of a door list.
type DoorCategory struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// DoorListTicket is a ticket as a door list holds it: no buyer, no money,
// not its barcode (only a hash to match a 13-digit barcode scanned).
type DoorListTicket struct {
	ID          int64                  `json:"id"`
	BarcodeHash string                 `json:"barcode_hash" doc:"The first 12 bytes of SHA-256 of the 13-digit barcode, unpadded base64url: matches a barcode scanned (format 1)."`
	CategoryID  int64                  `json:"category_id"`
	SessionID   *int64                 `json:"session_id,omitempty" doc:"For a scheduled event: the session (schedule slot) the ticket is for."`
	Seat        string                 `json:"seat,omitempty" doc:"The seat's label; absent for general admission."`
	State       states.DoorTicketState `json:"state" doc:"valid: admits; void: refunded or cancelled; not_paid."`
	Inside      bool                   `json:"inside,omitempty" doc:"Admitted and not let out since."`
	CheckedInAt *time.Time             `json:"checked_in_at,omitempty" doc:"Its first admission, and at which gate."`
	Gate        string                 `json:"gate,omitempty"`
}

// allowed refuses a door key limited to another event; the event must be
// the company's (404).
func allowed(ctx context.Context, db bun.IDB, p *apikey.Principal, eventID int64) (*store.Event, error) {
	if p.CheckinEventID != nil && *p.CheckinEventID != eventID {
		return nil, fmt.Errorf("door key %d at event %d: %w", p.KeyID, eventID, errs.DoorElsewhere)
	}
	return store.GetEvent(ctx, db, p.CompanyID, eventID)
}

// PublicKey is the event's public key of ticket codes, unpadded base64url.
func (o *Offline) PublicKey(ctx context.Context, p *apikey.Principal, eventID int64) (string, error) {
	if _, err := allowed(ctx, o.DB, p, eventID); err != nil {
		return "", err
	}
	pub, err := o.Codes.PublicKey(ctx, o.DB, eventID, p.IsTest())
	if err != nil {
		return "", err
	}
	return ticketcode.EncodePublicKey(pub), nil
}

// List is the event's door list for the caller's environment: every
// ticket, or with since (a list's cursor) those changed since.
func (o *Offline) List(ctx context.Context, p *apikey.Principal, eventID int64, since string) (*DoorList, error) {
	if since != "" && !validCursor(since) {
		return nil, errs.Invalid("query.updated_since", "a cursor a door list returned", since)
	}
	if _, err := allowed(ctx, o.DB, p, eventID); err != nil {
		return nil, err
	}
	pub, err := o.Codes.PublicKey(ctx, o.DB, eventID, p.IsTest())
	if err != nil {
		return nil, err
	}
	cats, err := store.ListDoorCategories(ctx, o.DB, eventID)
	if err != nil {
		return nil, err
	}
	cursor, delta, rows, err := store.ListDoorTickets(ctx, o.DB, p.CompanyID, p.IsTest(), eventID, since)
	if err != nil {
		return nil, err
	}
	out := &DoorList{EventID: eventID, PublicKey: ticketcode.EncodePublicKey(pub), Cursor: cursor, Delta: delta,
		Categories: make([]DoorCategory, len(cats)), Tickets: make([]DoorListTicket, len(rows))}
	for i, c := range cats {
		out.Categories[i] = DoorCategory{ID: c.ID, Name: c.Name}
	}
	for i, r := range rows {
		t := DoorListTicket{ID: r.ID, BarcodeHash: ticketcode.BarcodeHash(r.Barcode), CategoryID: r.CategoryID,
			SessionID: r.SessionID, State: door.TicketState(r.Status, r.OrderStatus), Inside: r.Inside, CheckedInAt: r.CheckedInAt}
		if r.Label != nil {
			t.Seat = *r.Label
		}
		if r.CheckedInGate != nil {
			t.Gate = *r.CheckedInGate
		}
		out.Tickets[i] = t
	}
	return out, nil
}

// validCursor tells whether s reads as a door list's cursor as Postgres
// reads a pg_snapshot: "xmin:xmax:xip,…" of decimal transaction ids, with
// xmin <= xip < xmax, ascending. Anything else Postgres would refuse (and
// the list would fail on) is refused here, as the caller's mistake.
func validCursor(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return false
	}
	xmin, ok1 := parseXid(parts[0])
	xmax, ok2 := parseXid(parts[1])
	if !ok1 || !ok2 || xmin > xmax {
		return false
	}
	if parts[2] == "" {
		return true
	}
	prev := xmin
	for _, x := range strings.Split(parts[2], ",") {
		v, ok := parseXid(x)
		if !ok || v < prev || v >= xmax {
			return false
		}
		prev = v
	}
	return true
}

// parseXid reads a 64-bit transaction id (xid8) in decimal digits only.
// Its low 32 bits are the 32-bit id, which is never 0 (Postgres's invalid
// id: a snapshot naming it is refused, so 2^32 or 2^63 are not ids).
func parseXid(s string) (uint64, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false // no sign, space or underscore
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || uint32(v) == 0 {
		return 0, false
	}
	return v, true
}

// BatchScan is one scan a door made offline.
type BatchScan struct {
	Barcode   string
	Gate      string // "": the door key's gate
	DeviceID  string
	Direction states.ScanDirection // "": in
	ScannedAt time.Time
	// DoorOutcome is what the device answered at the door ("": it does
	// not say; an entry is then taken as let in).
	DoorOutcome states.ScanOutcome
}

// BatchScanResult is a batch scan's outcome, in the batch's order.
type BatchScanResult struct {
	Index     int                `json:"index" doc:"The scan's place in the batch, from 0."`
	CheckInID int64              `json:"check_in_id"`
	Outcome   states.ScanOutcome `json:"outcome"`
	TicketID  *int64             `json:"ticket_id,omitempty"`
	// Conflict marks a scan whose door let the holder in against what the
	// service had recorded; ConflictKind says how.
	Conflict     bool                `json:"conflict" doc:"The device let the holder in (it said so, or did not say) against what the service had recorded of the ticket: conflict_kind says how. Listed in the event's check-in conflicts and announced as ticket.check_in_conflict."`
	ConflictKind states.ConflictKind `json:"conflict_kind,omitempty" doc:"two_doors (outcome already_checked_in: another door's admission had the ticket inside, a copy most likely), admitted_while_inside (outcome admitted, at an event with re-entry: the ticket was inside by another door's admission when scanned, let out since), admitted_void (outcome void: refunded or cancelled, and the device let the holder in: it said admitted, or said nothing and the ticket became void after the scan; the holder is inside). Absent without a conflict."`
	Repeated     bool                `json:"repeated" doc:"Uploaded before (same device, barcode and scanned_at): the outcome recorded then, nothing recorded again."`
	// FirstCheckIn is the ticket's first admission, as an online scan's.
	FirstCheckIn *FirstCheckIn `json:"first_check_in,omitempty" doc:"When and at which gate the ticket was first admitted: on already_checked_in, and on admitted when the scan is not the ticket's first admission (a re-entry). Absent on the first admission itself."`
}

// Batch settles scans a door made offline at the event, each as an online
// scan is (store.CheckIn, marked offline; a ticket's several scans in one
// transaction, settleTicket), in scanned_at order: of two devices that
// let one ticket in while apart, the one that scanned first admits it and
// the other's scan is a conflict, as is an entry let in while the ticket
// was inside or void (the store's conflict rule, decided in the scan's
// transaction by the scans' times).
// Every scan is recorded once: a scan uploaded again (same device,
// barcode and scanned_at) answers what was recorded.
//
// sessionID is the door's session of a scheduled event (0: any).
func (o *Offline) Batch(ctx context.Context, p *apikey.Principal, eventID, sessionID int64, scans []BatchScan) ([]BatchScanResult, error) {
	if len(scans) > MaxBatch {
		return nil, errs.Invalid("body.scans", fmt.Sprintf("at most %d scans a batch", MaxBatch), len(scans))
	}
	if p.CheckinEventID != nil && *p.CheckinEventID != eventID {
		return nil, fmt.Errorf("door key %d at event %d: %w", p.KeyID, eventID, errs.DoorElsewhere)
	}
	ev, err := store.GetDoorEvent(ctx, o.DB, p.CompanyID, eventID, sessionID)
	if err != nil {
		return nil, err
	}
	if sessionID != 0 && !ev.SessionFound {
		return nil, errs.Invalid("body.session_id", "not a session of the event (see /v1/sessions)", sessionID)
	}
	keys := &keyOf{db: o.DB}
	now := time.Now()
	work := make([]store.Scan, len(scans))
	for i, in := range scans {
		at := fmt.Sprintf("body.scans[%d]", i)
		in.Barcode = strings.TrimSpace(in.Barcode) // a scanner's trailing CR or tab
		if err := checkScan(at, in.Barcode, in.Gate, in.DeviceID, in.Direction); err != nil {
			return nil, err
		}
		if p.CheckinGate != nil {
			switch in.Gate {
			case "":
				in.Gate = *p.CheckinGate
			case *p.CheckinGate:
			default:
				return nil, fmt.Errorf("door key %d at gate %q: %w", p.KeyID, in.Gate, errs.DoorElsewhere)
			}
		}
		switch {
		case in.Gate == "":
			return nil, errs.Invalid(at+".gate", "name the gate (or use a door key limited to one)", "")
		case in.DeviceID == "":
			return nil, errs.Invalid(at+".device_id", "name the device that scanned offline", "")
		case in.ScannedAt.IsZero():
			return nil, errs.Invalid(at+".scanned_at", "when the device scanned the ticket", "")
		}
		if err := checkScannedAt(in.ScannedAt, now); err != nil {
			return nil, errs.Invalid(at+".scanned_at", "the device's clock is off: a scan's time is within the last 7 days and at most 5 minutes ahead", in.ScannedAt)
		}
		if in.Direction == "" {
			in.Direction = states.ScanIn
		}
		if in.DoorOutcome != "" && !slices.Contains(states.ScanOutcomes, in.DoorOutcome) {
			return nil, errs.Invalid(at+".door_outcome", "one of the scan outcomes, as the device answered", in.DoorOutcome)
		}
		if in.Direction == states.ScanOut && !ev.AllowReentry {
			return nil, errs.Invalid(at+".direction", "the event does not allow re-entry: scan exits only where it does", in.Direction)
		}
		barcode, err := lookupBarcode(ctx, keys, in.Barcode, p.IsTest())
		if err != nil {
			return nil, err
		}
		// Postgres keeps microseconds: the time compared on a repeat is
		// the time stored.
		work[i] = store.Scan{CompanyID: p.CompanyID, APIKeyID: p.KeyID, IsTest: p.IsTest(), EventID: eventID,
			SessionID: sessionID, Barcode: barcode, Gate: in.Gate, DeviceID: in.DeviceID, Direction: in.Direction,
			ScannedAt: in.ScannedAt.Truncate(time.Microsecond), Offline: true, DoorOutcome: in.DoorOutcome}
	}
	// Each barcode's scans in scanned_at order (the batch's order among
	// equal times); barcodes apart settle at once.
	order := make([]int, len(work))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return work[a].ScannedAt.Compare(work[b].ScannedAt) })
	var groups [][]int
	byBarcode := map[string]int{}
	for _, i := range order {
		g, ok := byBarcode[work[i].Barcode]
		if !ok {
			g = len(groups)
			byBarcode[work[i].Barcode] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	// Each scan knows the ticket's next exit in the batch, which settles
	// after it: the conflict rule must not take the holder's return
	// elsewhere for a second holder.
	for _, g := range groups {
		var left time.Time
		for k := len(g) - 1; k >= 0; k-- {
			work[g[k]].LeftAt = left
			if work[g[k]].Direction == states.ScanOut {
				left = work[g[k]].ScannedAt
			}
		}
	}
	out := make([]BatchScanResult, len(work))
	next := make(chan []int)
	errc := make(chan error, settlers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range min(settlers, len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range next {
				if err := o.settleTicket(ctx, g, work, out); err != nil {
					errc <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for _, g := range groups {
		select {
		case next <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errc:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// settleTicket settles one barcode's scans of the batch (g, indexes of
// work in scanned_at order) into out. Several settle in one transaction
// (each scan in a savepoint of it), so the ticket's row lock is held from
// the first to the last: another upload's scan of the ticket is judged
// before them all or after them all, never between an entry and the exit
// that follows it here.
func (o *Offline) settleTicket(ctx context.Context, g []int, work []store.Scan, out []BatchScanResult) error {
	run := func(ctx context.Context, db bun.IDB) error {
		for _, i := range g {
			r, err := o.settle(ctx, db, work[i])
			if err != nil {
				return fmt.Errorf("scan %d of the batch: %w", i, err)
			}
			r.Index = i
			out[i] = r
		}
		return nil
	}
	if len(g) == 1 {
		return run(ctx, o.DB)
	}
	if err := o.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return run(ctx, tx) }); err != nil {
		return fmt.Errorf("settle %d scans of %s: %w", len(g), work[g[0]].Barcode, err)
	}
	return nil
}

// settle records one offline scan, or finds it recorded.
func (o *Offline) settle(ctx context.Context, db bun.IDB, s store.Scan) (BatchScanResult, error) {
	res, err := store.CheckIn(ctx, db, s)
	if store.IsRecordedAlready(err) {
		r, err := store.GetOfflineCheckIn(ctx, db, s.CompanyID, s.IsTest, s.EventID, s.DeviceID, s.Barcode, s.ScannedAt)
		if err != nil {
			return BatchScanResult{}, err
		}
		return BatchScanResult{CheckInID: r.ID, Outcome: r.Outcome, TicketID: r.TicketID, Repeated: true,
			Conflict: r.Conflict != "", ConflictKind: r.Conflict,
			FirstCheckIn: firstCheckIn(r.Outcome, r.First, r.CheckedInAt, r.CheckedInGate)}, nil
	}
	if err != nil {
		return BatchScanResult{}, err
	}
	out := BatchScanResult{CheckInID: res.CheckInID, Outcome: res.Outcome, Conflict: res.Conflict != "", ConflictKind: res.Conflict}
	if t := res.Ticket; t != nil {
		out.TicketID = &t.ID
		out.FirstCheckIn = firstCheckIn(res.Outcome, res.First, t.CheckedInAt, t.CheckedInGate)
	}
	return out, nil
}

// Conflicts returns a page (from 1) of the event's check-in conflicts
// among the tickets of the caller's environment, oldest scan first, and
// how many there are; an event not the company's is errs.NotFound
// (store.ListCheckInConflicts says what a conflict is).
func (o *Offline) Conflicts(ctx context.Context, p *apikey.Principal, eventID int64, page store.Paging) ([]store.OfflineConflict, int, error) {
	if p.CheckinEventID != nil && *p.CheckinEventID != eventID {
		return nil, 0, fmt.Errorf("door key %d at event %d: %w", p.KeyID, eventID, errs.DoorElsewhere)
	}
	if _, err := store.GetEvent(ctx, o.DB, p.CompanyID, eventID); err != nil {
		return nil, 0, err
	}
	return store.ListCheckInConflicts(ctx, o.DB, p.CompanyID, p.IsTest(), eventID, page)
}

package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// conflictsBody is GET /v1/events/{id}/check-in/conflicts as an organizer
// reads it.
type conflictsBody struct {
	Data []struct {
		CheckInID         int64     `json:"check_in_id"`
		Kind              string    `json:"kind"`
		Outcome           string    `json:"outcome"`
		TicketID          int64     `json:"ticket_id"`
		OrderID           int64     `json:"order_id"`
		Gate              string    `json:"gate"`
		DeviceID          string    `json:"device_id"`
		ScannedAt         time.Time `json:"scanned_at"`
		AdmittedCheckInID int64     `json:"admitted_check_in_id"`
		AdmittedGate      string    `json:"admitted_gate"`
	} `json:"data"`
}

func (f *fixture) conflicts(t *testing.T, event int64) conflictsBody {
	t.Helper()
	var out conflictsBody
	res := f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts", event), f.keyA)
	if res.Status != http.StatusOK {
		t.Fatalf("conflicts: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &out)
	return out
}

// A ticket a device let in offline and refunded before the upload: the
// holder is inside and the money is back. The upload says so (void, a
// conflict of kind admitted_void), the organizer finds it in the event's
// conflicts and is told by webhook; the refund stands. A device that says
// it turned the holder away (door_outcome void) raises nothing.
func TestOfflineAdmissionOfAVoidTicket(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	order, ts := f.signedTickets(t, f.keyA, "parterre-3-11", "parterre-3-12")
	// The device downloaded its list while both were valid, then lost the
	// network and let the first holder in; meanwhile the order was refunded.
	at := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Millisecond)
	if res := f.refund(t, order); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	got, raw := f.uploadRaw(t, door, event, map[string]any{"barcode": ts[0].SignedBarcode, "gate": "East", "device_id": "dev-V", "scanned_at": at})
	if g := got.Data[0]; g.Outcome != "void" || !g.Conflict || raw[0]["conflict_kind"] != "admitted_void" {
		t.Fatalf("a void ticket let in offline: %+v", raw[0])
	}
	c := f.conflicts(t, event)
	if len(c.Data) != 1 || c.Data[0].Kind != "admitted_void" || c.Data[0].TicketID != ts[0].ID || c.Data[0].OrderID != order ||
		c.Data[0].DeviceID != "dev-V" || c.Data[0].Gate != "East" || !c.Data[0].ScannedAt.Equal(at) || c.Data[0].Outcome != "void" {
		t.Fatalf("conflicts: %+v", c.Data)
	}
	ev := r.await("ticket.check_in_conflict", func(d map[string]any) bool { return fmt.Sprint(d["ticket_id"]) == fmt.Sprint(ts[0].ID) })
	var data map[string]any
	dec := json.NewDecoder(strings.NewReader(string(ev.Data)))
	dec.UseNumber() // ids are large
	if err := dec.Decode(&data); err != nil || data["kind"] != "admitted_void" || data["gate"] != "East" ||
		data["device_id"] != "dev-V" || fmt.Sprint(data["event_id"]) != fmt.Sprint(event) || fmt.Sprint(data["order_id"]) != fmt.Sprint(order) ||
		data["ticket_number"] != ts[0].Number {
		t.Fatalf("ticket.check_in_conflict: %s (%v)", ev.Data, err)
	}
	for _, personal := range []string{"customer", "email", "phone", "first_name", "last_name", "barcode"} {
		if strings.Contains(string(ev.Data), personal) {
			t.Fatalf("the conflict's webhook carries %q: %s", personal, ev.Data)
		}
	}
	// The refund stands: the ticket is still void at the door.
	list, _ := f.doorList(t, door, event, "")
	for _, lt := range list.Data.Tickets {
		if lt.ID == ts[0].ID && lt.State != "void" {
			t.Fatalf("the ticket in the door list after the upload: %+v", lt)
		}
	}

	// A device that knew of the refund and turned the holder away.
	got, raw = f.uploadRaw(t, door, event, map[string]any{"barcode": ts[1].Barcode, "gate": "East", "device_id": "dev-V",
		"scanned_at": at.Add(time.Minute), "door_outcome": "void"})
	if g := got.Data[0]; g.Outcome != "void" || g.Conflict || raw[0]["conflict_kind"] != nil {
		t.Fatalf("a void ticket the device refused: %+v", raw[0])
	}
	if c := f.conflicts(t, event); len(c.Data) != 1 {
		t.Fatalf("conflicts after a refusal: %+v", c.Data)
	}
}

// A device that does not say what it answered is taken to have let in a
// void ticket only when the ticket became void after the scan: a scan
// made after the refund found it void in any list downloaded since, so
// no admission is assumed and nothing is listed.
func TestOfflineScanAfterTheRefundIsNoConflict(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	order, ts := f.signedTickets(t, f.keyA, "parterre-3-24", "parterre-3-25")
	before := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Millisecond)
	if res := f.refund(t, order); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	after := time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
	got, raw := f.uploadRaw(t, door, event,
		map[string]any{"barcode": ts[0].SignedBarcode, "gate": "East", "device_id": "dev-V", "scanned_at": before},
		map[string]any{"barcode": ts[1].SignedBarcode, "gate": "East", "device_id": "dev-V", "scanned_at": after})
	if g := got.Data[0]; g.Outcome != "void" || !g.Conflict || raw[0]["conflict_kind"] != "admitted_void" {
		t.Fatalf("scanned before the refund: %+v", raw[0])
	}
	if g := got.Data[1]; g.Outcome != "void" || g.Conflict || raw[1]["conflict_kind"] != nil {
		t.Fatalf("scanned after the refund: %+v", raw[1])
	}
	if c := f.conflicts(t, event); len(c.Data) != 1 || c.Data[0].TicketID != ts[0].ID {
		t.Fatalf("conflicts: %+v", c.Data)
	}
}

// At an event with re-entry, a copy let in offline while the ticket was
// inside (admitted at another door, let out only later) is a conflict of
// kind admitted_while_inside, paired with the admission it overlapped;
// the ticket stays where the later exit left it. A device that says it
// refused the copy raises nothing.
func TestOfflineCopyLetInWhileInside(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-13", "parterre-3-14")
	out := func(barcode string) {
		t.Helper()
		res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "direction": "out"}`, barcode, event), idemKey(t))
		if res.Status != http.StatusOK {
			t.Fatalf("exit: %d %s", res.Status, res.Body)
		}
	}
	in := make([]int64, len(ts))
	mid := make([]time.Time, len(ts))
	for i, tk := range ts {
		got := f.scan(t, door, event, tk.Barcode, "North")
		if got.Data.Outcome != "admitted" {
			t.Fatalf("online: %+v", got.Data)
		}
		in[i] = got.Data.ID
		time.Sleep(20 * time.Millisecond)
		mid[i] = time.Now().UTC().Truncate(time.Millisecond)
		time.Sleep(20 * time.Millisecond)
		out(tk.Barcode)
	}
	got, raw := f.uploadRaw(t, door, event,
		map[string]any{"barcode": ts[0].SignedBarcode, "gate": "East", "device_id": "dev-C", "scanned_at": mid[0]})
	if g := got.Data[0]; g.Outcome != "admitted" || !g.Conflict || raw[0]["conflict_kind"] != "admitted_while_inside" {
		t.Fatalf("a copy let in while the ticket was inside: %+v", raw[0])
	}
	got, raw = f.uploadRaw(t, door, event,
		map[string]any{"barcode": ts[1].SignedBarcode, "gate": "East", "device_id": "dev-C", "scanned_at": mid[1], "door_outcome": "already_checked_in"})
	if g := got.Data[0]; g.Conflict || raw[0]["conflict_kind"] != nil {
		t.Fatalf("a copy the device refused: %+v", raw[0])
	}
	c := f.conflicts(t, event)
	if len(c.Data) != 1 || c.Data[0].Kind != "admitted_while_inside" || c.Data[0].TicketID != ts[0].ID ||
		c.Data[0].AdmittedCheckInID != in[0] || c.Data[0].AdmittedGate != "North" || c.Data[0].DeviceID != "dev-C" {
		t.Fatalf("conflicts: %+v", c.Data)
	}
	ev := r.await("ticket.check_in_conflict", func(d map[string]any) bool { return fmt.Sprint(d["ticket_id"]) == fmt.Sprint(ts[0].ID) })
	var data struct {
		Kind              string `json:"kind"`
		AdmittedCheckInID int64  `json:"admitted_check_in_id"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Kind != "admitted_while_inside" || data.AdmittedCheckInID != in[0] {
		t.Fatalf("ticket.check_in_conflict: %s", ev.Data)
	}
	var inside bool
	if err := f.DB.NewRaw("SELECT inside FROM tickets WHERE id = ?", ts[0].ID).Scan(context.Background(), &inside); err != nil || inside {
		t.Fatalf("the ticket after the upload: inside %v (%v)", inside, err)
	}
}

// A device working offline lets a holder in and out again, and another
// door lets them back in before the upload: their return, not a second
// holder. The upload answers no conflict, and none is listed.
func TestOfflineInAndOutThenBackElsewhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-17")
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("back in online: %+v", got.Data)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	got, raw := f.uploadRaw(t, door, event,
		map[string]any{"barcode": ts[0].SignedBarcode, "gate": "East", "device_id": "dev-E", "scanned_at": now.Add(-10 * time.Minute)},
		map[string]any{"barcode": ts[0].SignedBarcode, "gate": "East", "device_id": "dev-E", "scanned_at": now.Add(-5 * time.Minute), "direction": "out"})
	if got.Data[0].Conflict || got.Data[1].Conflict {
		t.Fatalf("in and out offline, back in elsewhere since: %+v", raw)
	}
	if c := f.conflicts(t, event); len(c.Data) != 0 {
		t.Fatalf("conflicts: %+v", c.Data)
	}
}

// manyConflicts records n conflicts (admitted_void, one a second from
// t0) of the ticket straight in the store: an event with more than a page.
func (f *fixture) manyConflicts(t *testing.T, event, ticketID, keyID int64, barcode string, t0 time.Time, n int) {
	t.Helper()
	if _, err := f.DB.NewRaw(`INSERT INTO check_ins (company_id, event_id, ticket_id, barcode, gate, device_id, outcome, api_key_id,
			scanned_at, offline, is_test, conflict)
		SELECT ?, ?, ?, ?, 'East', 'dev-' || g, 'void', ?, ?::timestamptz + g * interval '1 second', true, true, 'admitted_void'
		FROM generate_series(1, ?) g`, f.companyA, event, ticketID, barcode, keyID, t0, n).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An event's conflicts come a page at a time, as every list does: 50 by
// default, at most 200, oldest scan first, with the total in meta.
func TestOfflineConflictsListedPageByPage(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	_, doorID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-26")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	const n = 120
	f.manyConflicts(t, event, ts[0].ID, doorID, ts[0].Barcode, t0, n)
	type listed struct {
		conflictsBody
		Meta struct {
			CurrentPage int `json:"current_page"`
			PerPage     int `json:"per_page"`
			Total       int `json:"total"`
			LastPage    int `json:"last_page"`
		} `json:"meta"`
	}
	get := func(query string) listed {
		t.Helper()
		res := f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts%s", event, query), f.keyA)
		if res.Status != http.StatusOK {
			t.Fatalf("conflicts%s: %d %s", query, res.Status, res.Body)
		}
		var out listed
		res.Decode(t, &out)
		return out
	}
	first := get("")
	if len(first.Data) != 50 || first.Meta.Total != n || first.Meta.PerPage != 50 || first.Meta.LastPage != 3 || first.Meta.CurrentPage != 1 ||
		!first.Data[0].ScannedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("the first page: %d conflicts, meta %+v", len(first.Data), first.Meta)
	}
	last := get("?page=3")
	if len(last.Data) != n-100 || !last.Data[len(last.Data)-1].ScannedAt.Equal(t0.Add(n*time.Second)) || last.Meta.CurrentPage != 3 {
		t.Fatalf("the last page: %d conflicts, meta %+v", len(last.Data), last.Meta)
	}
	for i := 1; i < len(last.Data); i++ {
		if !last.Data[i-1].ScannedAt.Before(last.Data[i].ScannedAt) {
			t.Fatalf("the last page is not in scanned_at order: %+v", last.Data)
		}
	}
	if all := get("?per_page=200"); len(all.Data) != n || all.Meta.LastPage != 1 {
		t.Fatalf("200 a page: %d conflicts, meta %+v", len(all.Data), all.Meta)
	}
	if past := get("?page=4"); len(past.Data) != 0 || past.Meta.Total != n {
		t.Fatalf("past the last page: %+v", past)
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts?per_page=201", event), f.keyA),
		http.StatusUnprocessableEntity, "validation_error")
}

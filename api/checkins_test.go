package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type checkInBody struct {
	Data struct {
		ID      int64  `json:"id"`
		Outcome string `json:"outcome"`
		Gate    string `json:"gate"`
		Ticket  *struct {
			ID       int64  `json:"id"`
			EventID  int64  `json:"event_id"`
			Category string `json:"category"`
			Seat     *struct {
				SeatID string `json:"seat_id"`
			} `json:"seat"`
		} `json:"ticket"`
		FirstCheckIn *struct {
			Gate string `json:"gate"`
		} `json:"first_check_in"`
	} `json:"data"`
}

// scan sends one scan with key at the event's door.
func (f *fixture) scan(t *testing.T, key string, event int64, barcode, gate string) checkInBody {
	t.Helper()
	res := f.Do(t, http.MethodPost, "/v1/check-ins", key,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": %q, "device_id": "dev-1"}`, barcode, event, gate), idemKey(t))
	if res.Status != http.StatusOK {
		t.Fatalf("scan %s at %s: %d %s", barcode, gate, res.Status, res.Body)
	}
	var out checkInBody
	res.Decode(t, &out)
	return out
}

// paidTickets buys seats with key and returns the order and its tickets.
func (f *fixture) paidTickets(t *testing.T, key string, seats ...string) (int64, []ticket) {
	t.Helper()
	id := f.paidOrder(t, key, seats...)
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), key).Decode(t, &ts)
	if len(ts.Data) != len(seats) {
		t.Fatalf("tickets: %+v", ts.Data)
	}
	return id, ts.Data
}

// Every outcome a door is told, each from the case that makes it.
func TestCheckInOutcomes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	realDoor, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-11", "parterre-2-12")

	got := f.scan(t, door, event, ts[0].Barcode, "North")
	if got.Data.Outcome != "admitted" || got.Data.Ticket == nil || got.Data.Ticket.Seat == nil ||
		got.Data.Ticket.Seat.SeatID != "parterre-2-11" || got.Data.Ticket.Category == "" {
		t.Fatalf("first scan: %+v", got.Data)
	}
	again := f.scan(t, door, event, ts[0].Barcode, "South")
	if again.Data.Outcome != "already_checked_in" || again.Data.FirstCheckIn == nil || again.Data.FirstCheckIn.Gate != "North" {
		t.Fatalf("second scan: %+v", again.Data)
	}
	if w := f.scan(t, door, f.ids["standup"], ts[1].Barcode, "North"); w.Data.Outcome != "wrong_event" ||
		w.Data.Ticket == nil || w.Data.Ticket.EventID != event {
		t.Fatalf("a ticket at another event's door: %+v", w.Data)
	}
	if u := f.scan(t, door, event, "4006381333931", "North"); u.Data.Outcome != "unknown" || u.Data.Ticket != nil {
		t.Fatalf("an unknown barcode: %+v", u.Data)
	}
	if s := f.scan(t, realDoor, event, ts[1].Barcode, "North"); s.Data.Outcome != "sandbox" || s.Data.Ticket != nil {
		t.Fatalf("a sandbox ticket at a real door: %+v", s.Data)
	}
	// A refunded ticket is void at once.
	other, ots := f.paidTickets(t, f.keyA, "parterre-2-13")
	if res := f.refund(t, other); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	if v := f.scan(t, door, event, ots[0].Barcode, "North"); v.Data.Outcome != "void" {
		t.Fatalf("a refunded ticket: %+v", v.Data)
	}
	// The door key reads nothing of orders.
	expectProblem(t, f.Get(t, "/v1/orders", door), http.StatusForbidden, "insufficient_scope")
}

// Two gates scanning copies of one ticket at once let it in exactly once.
func TestCheckInAdmitsOnceUnderARace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-14")
	const gates = 20
	outcomes := make(chan string, gates)
	var wg sync.WaitGroup
	for i := range gates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
				fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "gate-%d"}`, ts[0].Barcode, event, i), idemKey(t))
			var b checkInBody
			res.Decode(t, &b)
			outcomes <- b.Data.Outcome
		}()
	}
	wg.Wait()
	close(outcomes)
	count := map[string]int{}
	for o := range outcomes {
		count[o]++
	}
	if count["admitted"] != 1 || count["already_checked_in"] != gates-1 {
		t.Fatalf("outcomes of %d racing scans: %v", gates, count)
	}
	if scans := f.scansOf(t, ts[0].ID); scans != gates {
		t.Fatalf("%d scans recorded", scans)
	}
}

// A ticket admitted at the door is not refunded through the API (its
// refund, whole or by ticket, is refused and changes nothing); the others
// of its order still are. Its admission is announced by webhook.
func TestCheckedInTicketIsNotRefunded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	id, ts := f.paidTickets(t, f.keyA, "parterre-2-15", "parterre-2-16")
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	expectProblem(t, f.refund(t, id), http.StatusConflict, "ticket_checked_in")
	expectProblem(t, f.refund(t, id, ts[0].ID), http.StatusConflict, "ticket_checked_in")
	if res := f.refund(t, id, ts[1].ID); res.Status != http.StatusCreated {
		t.Fatalf("refund of the ticket not scanned: %d %s", res.Status, res.Body)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("the admitted ticket after the refusal: %+v", got.Data)
	}
	ev := r.await("ticket.checked_in", func(data map[string]any) bool { return fmt.Sprint(data["ticket_id"]) == fmt.Sprint(ts[0].ID) })
	var data struct {
		TicketID     int64  `json:"ticket_id"`
		TicketNumber string `json:"ticket_number"`
		OrderID      int64  `json:"order_id"`
		EventID      int64  `json:"event_id"`
		Gate         string `json:"gate"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Gate != "North" || data.EventID != event ||
		data.OrderID != id || data.TicketNumber != ts[0].Number {
		t.Fatalf("ticket.checked_in: %s (%v)", ev.Data, err)
	}
}

// A door key limited to an event and a gate scans only there, and needs
// not name its gate.
func TestDoorKeyLimitedToItsEventAndGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	event := f.ids["swan-lake"]
	door, keyID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	if _, err := f.DB.NewRaw("UPDATE api_keys SET checkin_event_id = ?, checkin_gate = 'North' WHERE id = ?", event, keyID).
		Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-17")
	scan := func(body string) *testenv.Response {
		return f.Do(t, http.MethodPost, "/v1/check-ins", door, body, idemKey(t))
	}
	expectProblem(t, scan(fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, ts[0].Barcode, f.ids["standup"])),
		http.StatusForbidden, "door_key_elsewhere")
	expectProblem(t, scan(fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "South"}`, ts[0].Barcode, event)),
		http.StatusForbidden, "door_key_elsewhere")
	res := scan(fmt.Sprintf(`{"barcode": %q, "event_id": %d}`, ts[0].Barcode, event))
	var got checkInBody
	res.Decode(t, &got)
	if res.Status != http.StatusOK || got.Data.Outcome != "admitted" || got.Data.Gate != "North" {
		t.Fatalf("scan at the key's own door: %d %s", res.Status, res.Body)
	}
}

// A general-admission ticket is admitted with no seat (null, as the
// document says).
func TestCheckInGeneralAdmission(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["standup"]
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), f.keyA).Decode(t, &cats)
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}],
		"customer": %s, "payment": "external"}`, event, cats.Data[0].ID, customer), idemKey(t))
	var ob orderBody
	res.Decode(t, &ob)
	if res := f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), f.keyA).Decode(t, &ts)
	got := f.scan(t, door, event, ts.Data[0].Barcode, "Main")
	if got.Data.Outcome != "admitted" || got.Data.Ticket == nil || got.Data.Ticket.Seat != nil {
		t.Fatalf("general admission scan: %+v", got.Data)
	}
}

// A sandbox door never touches a real ticket: it is unknown there, its
// scan is not tied to it, and the real door admits it afterwards.
func TestSandboxDoorLeavesRealTicketsAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	sandboxDoor, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	realDoor, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, prod, "parterre-3-11")
	if got := f.scan(t, sandboxDoor, event, ts[0].Barcode, "Test"); got.Data.Outcome != "unknown" || got.Data.Ticket != nil {
		t.Fatalf("a real ticket at a sandbox door: %+v", got.Data)
	}
	if tied := f.scansOf(t, ts[0].ID); tied != 0 {
		t.Fatalf("the sandbox scan is tied to the real ticket: %d", tied)
	}
	got := f.scan(t, realDoor, event, ts[0].Barcode, "North")
	if got.Data.Outcome != "admitted" || got.Data.FirstCheckIn != nil && got.Data.FirstCheckIn.Gate != "North" {
		t.Fatalf("the real door after the sandbox one: %+v", got.Data)
	}
}

// A door may name its session of a scheduled event: a ticket of another
// session is wrong_event and says which it is for; a session not of the
// event is refused.
func TestCheckInBySession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["expo"]
	var sessions struct{ Data []struct{ ID int64 } }
	f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", event), f.keyA).Decode(t, &sessions)
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), f.keyA).Decode(t, &cats)
	first, second := sessions.Data[0].ID, sessions.Data[1].ID
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, fmt.Sprintf(`{"event_id": %d, "schedule_slot_id": %d,
		"items": [{"ticket_category_id": %d, "quantity": 2}], "customer": %s, "payment": "external"}`,
		event, first, cats.Data[0].ID, customer), idemKey(t))
	var ob orderBody
	res.Decode(t, &ob)
	if res := f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), f.keyA).Decode(t, &ts)
	scan := func(barcode string, session int64) *testenv.Response {
		return f.Do(t, http.MethodPost, "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "Hall", "session_id": %d}`, barcode, event, session), idemKey(t))
	}
	var got struct {
		Data struct {
			Outcome string `json:"outcome"`
			Ticket  struct {
				SessionID int64 `json:"session_id"`
			} `json:"ticket"`
		} `json:"data"`
	}
	scan(ts.Data[0].Barcode, second).Decode(t, &got)
	if got.Data.Outcome != "wrong_event" || got.Data.Ticket.SessionID != first {
		t.Fatalf("a ticket of the first session at the second's door: %+v", got.Data)
	}
	scan(ts.Data[0].Barcode, first).Decode(t, &got)
	if got.Data.Outcome != "admitted" || got.Data.Ticket.SessionID != first {
		t.Fatalf("at its own session's door: %+v", got.Data)
	}
	var other struct{ Data []struct{ ID int64 } }
	f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", f.ids["swan-lake"]), f.keyA).Decode(t, &other)
	if len(other.Data) > 0 {
		expectProblem(t, scan(ts.Data[1].Barcode, other.Data[0].ID), http.StatusUnprocessableEntity, "validation_error")
	}
	expectProblem(t, scan(ts.Data[1].Barcode, 999999), http.StatusUnprocessableEntity, "validation_error")
}

// An exit at an event that does not allow re-entry is refused and leaves
// nothing behind: the ticket stays inside, no scan is recorded.
func TestExitRefusedWithoutReentry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, f.keyA, "parterre-3-12")
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "direction": "out"}`, ts[0].Barcode, event), idemKey(t))
	expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	if scans := f.scansOf(t, ts[0].ID); scans != 1 {
		t.Fatalf("%d scans recorded", scans)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("after the refused exit: %+v", got.Data)
	}
}

// A device whose clock is far off is told so and changes nothing: no
// admission from 2099, no 500 for a time before year one.
func TestScanTimeFromABrokenClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.paidTickets(t, f.keyA, "parterre-3-13")
	for _, at := range []string{"2099-01-01T00:00:00Z", "0001-01-01T00:00:01+05:00", "2020-01-01T00:00:00Z"} {
		res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "scanned_at": %q}`, ts[0].Barcode, event, at), idemKey(t))
		expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
	}
	if scans := f.scansOf(t, ts[0].ID); scans != 0 {
		t.Fatalf("%d scans recorded", scans)
	}
	got := f.scan(t, door, event, ts[0].Barcode, "North")
	if got.Data.Outcome != "admitted" {
		t.Fatalf("a scan with no time after the refusals: %+v", got.Data)
	}
}

// scansOf counts the scans recorded of the ticket.
func (f *fixture) scansOf(t *testing.T, ticketID int64) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins WHERE ticket_id = ?", ticketID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// first_check_in is the ticket's first admission, told only where it is
// news: on a repeat (already_checked_in) and on a re-entry's admission;
// never on the first admission itself, online or uploaded.
func TestFirstCheckInOnlyOnRepeatsAndReentries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-15", "parterre-3-16")

	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" || got.Data.FirstCheckIn != nil {
		t.Fatalf("a first admission online: %+v", got.Data)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" ||
		got.Data.FirstCheckIn == nil || got.Data.FirstCheckIn.Gate != "North" {
		t.Fatalf("a repeat online: %+v", got.Data)
	}
	res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "South", "direction": "out"}`, ts[0].Barcode, event), idemKey(t))
	if res.Status != http.StatusOK {
		t.Fatalf("exit: %d %s", res.Status, res.Body)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "admitted" ||
		got.Data.FirstCheckIn == nil || got.Data.FirstCheckIn.Gate != "North" {
		t.Fatalf("a re-entry online: %+v", got.Data)
	}

	at := time.Now().UTC().Add(-5 * time.Minute).Truncate(time.Millisecond)
	scans := []map[string]any{
		{"barcode": ts[1].SignedBarcode, "gate": "East", "device_id": "dev-F", "scanned_at": at},
		{"barcode": ts[1].SignedBarcode, "gate": "East", "device_id": "dev-F", "scanned_at": at.Add(time.Second)},
		{"barcode": ts[1].SignedBarcode, "gate": "East", "device_id": "dev-F", "scanned_at": at.Add(2 * time.Second), "direction": "out"},
		{"barcode": ts[1].SignedBarcode, "gate": "West", "device_id": "dev-F", "scanned_at": at.Add(3 * time.Second)},
	}
	for round := range 2 { // the second: the same scans uploaded again
		got, raw := f.uploadRaw(t, door, event, scans...)
		first := func(i int) string {
			fc, _ := raw[i]["first_check_in"].(map[string]any)
			if fc == nil {
				return ""
			}
			return fmt.Sprint(fc["gate"])
		}
		if got.Data[0].Outcome != "admitted" || first(0) != "" || got.Data[1].Outcome != "already_checked_in" || first(1) != "East" ||
			got.Data[3].Outcome != "admitted" || first(3) != "East" || got.Data[0].Repeated != (round == 1) {
			t.Fatalf("round %d of uploads: %+v", round, raw)
		}
	}
}

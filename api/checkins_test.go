package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"ticketsales/internal/apikey"
	"ticketsales/test/testenv"
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
	var scans int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins WHERE ticket_id = ?", ts[0].ID).Scan(context.Background(), &scans); err != nil || scans != gates {
		t.Fatalf("%d scans recorded (%v)", scans, err)
	}
}

// A ticket admitted at the door is not refunded through the API (its
// refund, whole or by ticket, is refused and changes nothing); the others
// of its order still are. Its admission is announced by webhook.
func TestCheckedInTicketIsNotRefunded(t *testing.T) {
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
		TicketID int64  `json:"ticket_id"`
		EventID  int64  `json:"event_id"`
		Gate     string `json:"gate"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.Gate != "North" || data.EventID != event {
		t.Fatalf("ticket.checked_in: %s (%v)", ev.Data, err)
	}
}

// A door key limited to an event and a gate scans only there, and needs
// not name its gate.
func TestDoorKeyLimitedToItsEventAndGate(t *testing.T) {
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
		http.StatusForbidden, "insufficient_scope")
	expectProblem(t, scan(fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "South"}`, ts[0].Barcode, event)),
		http.StatusForbidden, "insufficient_scope")
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

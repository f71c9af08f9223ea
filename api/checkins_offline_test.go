package api_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type doorListBody struct {
	Data struct {
		EventID    int64  `json:"event_id"`
		PublicKey  string `json:"public_key"`
		Cursor     string `json:"cursor"`
		Delta      bool   `json:"delta"`
		Categories []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"categories"`
		Tickets []struct {
			ID          int64  `json:"id"`
			BarcodeHash string `json:"barcode_hash"`
			CategoryID  int64  `json:"category_id"`
			Seat        string `json:"seat"`
			State       string `json:"state"`
			Inside      bool   `json:"inside"`
			Gate        string `json:"gate"`
		} `json:"tickets"`
	} `json:"data"`
}

type batchBody struct {
	Data []struct {
		Index        int    `json:"index"`
		CheckInID    int64  `json:"check_in_id"`
		Outcome      string `json:"outcome"`
		TicketID     *int64 `json:"ticket_id"`
		Conflict     bool   `json:"conflict"`
		ConflictKind string `json:"conflict_kind"`
		Repeated     bool   `json:"repeated"`
	} `json:"data"`
}

type signedTicket struct {
	ticket
	SignedBarcode string `json:"signed_barcode"`
}

// doorList downloads the event's door list (since a cursor, when given).
func (f *fixture) doorList(t *testing.T, key string, event int64, since string, headers ...string) (doorListBody, *testenv.Response) {
	t.Helper()
	path := fmt.Sprintf("/v1/events/%d/check-in/list", event)
	if since != "" {
		path += "?updated_since=" + since
	}
	res := f.Get(t, path, key, headers...)
	var out doorListBody
	if res.Status == http.StatusOK {
		res.Decode(t, &out)
	} else if res.Status != http.StatusNotModified {
		t.Fatalf("door list: %d %s", res.Status, res.Body)
	}
	return out, res
}

// signedTickets buys seats with key and returns the order's tickets with
// their signed codes.
func (f *fixture) signedTickets(t *testing.T, key string, seats ...string) (int64, []signedTicket) {
	t.Helper()
	id := f.paidOrder(t, key, seats...)
	var ts struct{ Data []signedTicket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), key).Decode(t, &ts)
	if len(ts.Data) != len(seats) {
		t.Fatalf("tickets: %+v", ts.Data)
	}
	return id, ts.Data
}

type offlineScan struct {
	Barcode   string    `json:"barcode"`
	Gate      string    `json:"gate"`
	DeviceID  string    `json:"device_id"`
	ScannedAt time.Time `json:"scanned_at"`
	Direction string    `json:"direction,omitempty"`
}

func (f *fixture) uploadScans(t *testing.T, key string, event int64, scans []offlineScan, headers ...string) (batchBody, *testenv.Response) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"event_id": event, "scans": scans})
	if len(headers) == 0 {
		headers = []string{idemKey(t)}
	}
	res := f.Do(t, http.MethodPost, "/v1/check-ins/batch", key, string(b), headers...)
	var out batchBody
	if res.Status == http.StatusOK {
		res.Decode(t, &out)
	}
	return out, res
}

// uploadRaw uploads scans given as JSON objects (members the offlineScan
// helper has not, such as door_outcome).
func (f *fixture) uploadRaw(t *testing.T, key string, event int64, scans ...map[string]any) (batchBody, []map[string]any) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"event_id": event, "scans": scans})
	res := f.Do(t, http.MethodPost, "/v1/check-ins/batch", key, string(b), idemKey(t))
	if res.Status != http.StatusOK {
		t.Fatalf("batch: %d %s", res.Status, res.Body)
	}
	var out batchBody
	res.Decode(t, &out)
	var raw struct{ Data []map[string]any }
	res.Decode(t, &raw)
	return out, raw.Data
}

// A door downloads the event's list, verifies every ticket's signed code
// with the published key, scans offline on two devices (one ticket copied
// onto both), and uploads: the copy is let in once, the other scan is a
// conflict the organizer sees; an upload repeated records nothing twice;
// the list's changes come by cursor, and an unchanged list is 304.
func TestOfflineCheckInRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-11", "parterre-3-12")
	later, lts := f.signedTickets(t, f.keyA, "parterre-3-13")

	list, res := f.doorList(t, door, event, "")
	if res.Header.Get("ETag") == "" || list.Data.Cursor == "" || list.Data.Delta || len(list.Data.Categories) == 0 {
		t.Fatalf("list: %s %s", res.Header, res.Body)
	}
	pub, err := ticketcode.ParsePublicKey(list.Data.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	var key struct {
		Data struct {
			PublicKey string `json:"public_key"`
		}
	}
	f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/public-key", event), door).Decode(t, &key)
	if key.Data.PublicKey != list.Data.PublicKey {
		t.Fatalf("public key %q, list's %q", key.Data.PublicKey, list.Data.PublicKey)
	}
	held := map[int64]string{}
	for _, lt := range list.Data.Tickets {
		if lt.State != "valid" || lt.Inside {
			t.Fatalf("a ticket just sold: %+v", lt)
		}
		held[lt.ID] = lt.BarcodeHash
	}
	for _, tk := range append(append([]signedTicket{}, ts...), lts...) {
		c, err := ticketcode.Verify(pub, tk.SignedBarcode, event)
		if err != nil || c.TicketID != tk.ID || c.Barcode != tk.Barcode {
			t.Fatalf("ticket %d's code %q: %+v %v", tk.ID, tk.SignedBarcode, c, err)
		}
		if held[tk.ID] != ticketcode.BarcodeHash(tk.Barcode) {
			t.Fatalf("ticket %d is not in the list by its barcode: %v", tk.ID, held)
		}
	}

	// Device B's copy of ticket 0 was scanned after device A's; the batch
	// lists it first.
	t0 := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	scans := []offlineScan{
		{Barcode: ts[0].SignedBarcode, Gate: "South", DeviceID: "dev-B", ScannedAt: t0.Add(5 * time.Second)},
		{Barcode: ts[0].SignedBarcode, Gate: "North", DeviceID: "dev-A", ScannedAt: t0},
		{Barcode: ts[1].Barcode, Gate: "North", DeviceID: "dev-A", ScannedAt: t0.Add(time.Second)},
		{Barcode: ts[1].Barcode, Gate: "North", DeviceID: "dev-A", ScannedAt: t0.Add(2 * time.Second)},
	}
	got, res := f.uploadScans(t, door, event, scans)
	if res.Status != http.StatusOK || len(got.Data) != len(scans) {
		t.Fatalf("batch: %d %s", res.Status, res.Body)
	}
	want := []struct {
		outcome  string
		conflict string
	}{{"already_checked_in", "two_doors"}, {"admitted", ""}, {"admitted", ""}, {"already_checked_in", ""}}
	for i, w := range want {
		if g := got.Data[i]; g.Index != i || g.Outcome != w.outcome || g.Conflict != (w.conflict != "") || g.ConflictKind != w.conflict || g.Repeated {
			t.Fatalf("scan %d: %+v, want %+v (all %s)", i, g, w, res.Body)
		}
	}
	var conflicts struct {
		Data []struct {
			Kind             string `json:"kind"`
			TicketID         int64  `json:"ticket_id"`
			DeviceID         string `json:"device_id"`
			Gate             string `json:"gate"`
			AdmittedDeviceID string `json:"admitted_device_id"`
			AdmittedGate     string `json:"admitted_gate"`
		}
	}
	f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts", event), f.keyA).Decode(t, &conflicts)
	if len(conflicts.Data) != 1 || conflicts.Data[0].TicketID != ts[0].ID || conflicts.Data[0].DeviceID != "dev-B" ||
		conflicts.Data[0].AdmittedDeviceID != "dev-A" || conflicts.Data[0].AdmittedGate != "North" || conflicts.Data[0].Kind != "two_doors" {
		t.Fatalf("conflicts: %+v", conflicts.Data)
	}

	// The device never saw the answer and uploads again, under another key.
	again, res := f.uploadScans(t, door, event, scans)
	if res.Status != http.StatusOK {
		t.Fatalf("again: %d %s", res.Status, res.Body)
	}
	for i, g := range again.Data {
		if !g.Repeated || g.CheckInID != got.Data[i].CheckInID || g.Outcome != got.Data[i].Outcome || g.Conflict != got.Data[i].Conflict ||
			g.ConflictKind != got.Data[i].ConflictKind {
			t.Fatalf("repeated scan %d: %+v, first %+v", i, g, got.Data[i])
		}
	}
	var recorded int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins WHERE event_id = ? AND offline", event).Scan(context.Background(), &recorded); err != nil || recorded != len(scans) {
		t.Fatalf("%d offline scans recorded (%v)", recorded, err)
	}

	// The changes since the first list: the two tickets let in.
	delta, _ := f.doorList(t, door, event, list.Data.Cursor)
	inside := map[int64]bool{}
	for _, lt := range delta.Data.Tickets {
		inside[lt.ID] = lt.Inside
	}
	if !delta.Data.Delta || !inside[ts[0].ID] || !inside[ts[1].ID] || len(inside) != 2 {
		t.Fatalf("delta after the batch: %+v", delta.Data)
	}
	// Unchanged: 304; a refund changes the list, and the delta has it.
	now, res := f.doorList(t, door, event, "")
	if _, again := f.doorList(t, door, event, "", "If-None-Match: "+res.Header.Get("ETag")); again.Status != http.StatusNotModified {
		t.Fatalf("unchanged list: %d", again.Status)
	}
	if r := f.refund(t, later); r.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", r.Status, r.Body)
	}
	if _, changed := f.doorList(t, door, event, "", "If-None-Match: "+res.Header.Get("ETag")); changed.Status != http.StatusOK {
		t.Fatalf("list after a refund: %d", changed.Status)
	}
	refunded, _ := f.doorList(t, door, event, now.Data.Cursor)
	if len(refunded.Data.Tickets) != 1 || refunded.Data.Tickets[0].ID != lts[0].ID || refunded.Data.Tickets[0].State != "void" {
		t.Fatalf("delta after the refund: %+v", refunded.Data.Tickets)
	}
	// A cursor ahead of the database (made up, or kept across a restore
	// that lost transactions) would hide changes: the whole list comes.
	if ahead, _ := f.doorList(t, door, event, "99999999:99999999:"); ahead.Data.Delta || len(ahead.Data.Tickets) != len(now.Data.Tickets) {
		t.Fatalf("a list since a cursor from the future: delta %v, %d tickets of %d", ahead.Data.Delta, len(ahead.Data.Tickets), len(now.Data.Tickets))
	}
	// A production door sees no sandbox ticket.
	realDoor, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	if real, _ := f.doorList(t, realDoor, event, ""); len(real.Data.Tickets) != 0 {
		t.Fatalf("a real door's list: %+v", real.Data.Tickets)
	}
}

// A code signed by another key, or changed in one character, fails the
// check a door makes offline and is unknown when uploaded.
func TestOfflineForgedCodeRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-14", "parterre-3-15", "parterre-3-17")
	list, _ := f.doorList(t, door, event, "")
	pub, _ := ticketcode.ParsePublicKey(list.Data.PublicKey)

	_, other, _ := ed25519.GenerateKey(nil)
	forged, _ := ticketcode.Sign(other, ticketcode.Code{EventID: event, TicketID: ts[0].ID, Barcode: ts[0].Barcode})
	tampered := []byte(ts[1].SignedBarcode)
	i := strings.LastIndexByte(string(tampered), '.') + 3
	tampered[i] ^= 1
	for _, code := range []string{forged, string(tampered)} {
		if _, err := ticketcode.Verify(pub, code, event); err == nil {
			t.Fatalf("%q verifies", code)
		}
	}
	at := time.Now().UTC().Add(-time.Minute)
	got, res := f.uploadScans(t, door, event, []offlineScan{
		{Barcode: forged, Gate: "North", DeviceID: "dev-A", ScannedAt: at},
		{Barcode: string(tampered), Gate: "North", DeviceID: "dev-A", ScannedAt: at.Add(time.Second)},
		{Barcode: ts[1].SignedBarcode, Gate: "North", DeviceID: "dev-A", ScannedAt: at.Add(2 * time.Second)},
	})
	if res.Status != http.StatusOK || got.Data[0].Outcome != "unknown" || got.Data[0].TicketID != nil ||
		got.Data[1].Outcome != "unknown" || got.Data[2].Outcome != "admitted" {
		t.Fatalf("batch: %d %s", res.Status, res.Body)
	}
	// Online too: the forged and the changed code are unknown (no ticket
	// is touched); the true code and the bare 13-digit barcode (tickets
	// printed before signed codes) admit.
	for _, code := range []string{forged, string(tampered)} {
		if got := f.scan(t, door, event, code, "North"); got.Data.Outcome != "unknown" || got.Data.Ticket != nil {
			t.Fatalf("online %q: %+v", code, got.Data)
		}
	}
	if got := f.scan(t, door, event, ts[0].SignedBarcode, "North"); got.Data.Outcome != "admitted" || got.Data.Ticket.ID != ts[0].ID {
		t.Fatalf("online, the true code: %+v", got.Data)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("online, its barcode after its code: %+v", got.Data)
	}
	if got := f.scan(t, door, event, ts[2].Barcode, "North"); got.Data.Outcome != "admitted" || got.Data.Ticket.ID != ts[2].ID {
		t.Fatalf("online, a 13-digit barcode: %+v", got.Data)
	}
	var checkedIn int
	if err := f.DB.NewRaw("SELECT count(*) FROM tickets WHERE id = ? AND checked_in_at IS NOT NULL", ts[0].ID).Scan(context.Background(), &checkedIn); err != nil || checkedIn != 1 {
		t.Fatalf("ticket 0 checked in: %d (%v)", checkedIn, err)
	}
}

// A batch over the limit, or a scan without its device or time, is
// refused whole, and nothing is recorded.
func TestOfflineBatchRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	at := time.Now().UTC()
	scans := make([]offlineScan, 1001)
	for i := range scans {
		scans[i] = offlineScan{Barcode: "4006381333931", Gate: "North", DeviceID: "dev-A", ScannedAt: at.Add(time.Duration(i) * time.Millisecond)}
	}
	if _, res := f.uploadScans(t, door, event, scans); res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("1001 scans: %d %s", res.Status, res.Body)
	}
	if _, res := f.uploadScans(t, door, event, []offlineScan{{Barcode: "4006381333931", Gate: "North", DeviceID: "dev-A"}}); res.Status != http.StatusUnprocessableEntity {
		t.Fatalf("no scanned_at: %d %s", res.Status, res.Body)
	}
	future := []offlineScan{{Barcode: "4006381333931", Gate: "North", DeviceID: "dev-A", ScannedAt: at},
		{Barcode: "4006381333931", Gate: "North", DeviceID: "dev-A", ScannedAt: at.AddDate(73, 0, 0)}}
	if _, res := f.uploadScans(t, door, event, future); res.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(res.Body), "body.scans[1].scanned_at") {
		t.Fatalf("a clock in 2099: %d %s", res.Status, res.Body)
	}
	limited, keyID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	if _, err := f.DB.NewRaw("UPDATE api_keys SET checkin_event_id = ? WHERE id = ?", f.ids["standup"], keyID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/list", event), limited), http.StatusForbidden, "door_key_elsewhere")
	reader, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeOrdersRead)
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/list", event), reader), http.StatusForbidden, "insufficient_scope")
	expectProblem(t, f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts", event), door), http.StatusForbidden, "insufficient_scope")
	expectProblem(t, f.Get(t, "/v1/events/999999/check-in/list", door), http.StatusNotFound, "not_found")
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("%d scans recorded (%v)", n, err)
	}
}

// Doors asking at once for a new event's key all get the one kept.
func TestEventKeyMadeOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	path := fmt.Sprintf("/v1/events/%d/check-in/public-key", f.ids["standup"])
	keys := make(chan string, 10)
	for range cap(keys) {
		go func() {
			var k struct {
				Data struct {
					PublicKey string `json:"public_key"`
				}
			}
			f.Get(t, path, door).Decode(t, &k)
			keys <- k.Data.PublicKey
		}()
	}
	first := <-keys
	for range cap(keys) - 1 {
		if k := <-keys; k != first || k == "" {
			t.Fatalf("keys %q and %q", first, k)
		}
	}
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM event_signing_keys WHERE event_id = ?", f.ids["standup"]).Scan(context.Background(), &n); err != nil || n != 1 {
		t.Fatalf("%d keys stored (%v)", n, err)
	}
}

// A sandbox ticket's code is signed with the event's sandbox key: it does
// not verify with the key a real door's list holds (so an offline real
// door refuses it), and online a real door answers sandbox. The same scan
// uploaded by a sandbox door and then by a real one is two scans, each
// settled in its own environment.
func TestSandboxCodesDoNotOpenRealDoors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	sandboxDoor, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	realDoor, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-18")
	realList, _ := f.doorList(t, realDoor, event, "")
	sandboxList, _ := f.doorList(t, sandboxDoor, event, "")
	realPub, _ := ticketcode.ParsePublicKey(realList.Data.PublicKey)
	sandboxPub, _ := ticketcode.ParsePublicKey(sandboxList.Data.PublicKey)
	if realPub.Equal(sandboxPub) {
		t.Fatal("the sandbox and the real door hold one key")
	}
	if _, err := ticketcode.Verify(realPub, ts[0].SignedBarcode, event); err == nil {
		t.Fatal("a sandbox ticket's code verifies with the real door's key")
	}
	if _, err := ticketcode.Verify(sandboxPub, ts[0].SignedBarcode, event); err != nil {
		t.Fatalf("the sandbox door cannot verify its ticket: %v", err)
	}
	if got := f.scan(t, realDoor, event, ts[0].SignedBarcode, "North"); got.Data.Outcome != "sandbox" || got.Data.Ticket != nil {
		t.Fatalf("a sandbox code at a real door online: %+v", got.Data)
	}

	scan := []offlineScan{{Barcode: ts[0].SignedBarcode, Gate: "North", DeviceID: "dev-T", ScannedAt: time.Now().UTC().Add(-time.Minute)}}
	got, res := f.uploadScans(t, sandboxDoor, event, scan)
	if res.Status != http.StatusOK || got.Data[0].Outcome != "admitted" {
		t.Fatalf("the sandbox door's upload: %d %s", res.Status, res.Body)
	}
	got, res = f.uploadScans(t, realDoor, event, scan)
	if res.Status != http.StatusOK || got.Data[0].Outcome != "sandbox" || got.Data[0].Repeated || got.Data[0].TicketID != nil {
		t.Fatalf("the same scan uploaded by a real door: %d %s", res.Status, res.Body)
	}
	var real int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins WHERE NOT is_test AND device_id = 'dev-T'").Scan(context.Background(), &real); err != nil || real != 1 {
		t.Fatalf("%d real scans recorded (%v)", real, err)
	}
}

// Scans made offline before what the service has recorded of a ticket do
// not undo it: at an event with re-entry, a ticket let in online stays in
// when a device uploads its older "in" and "out", so a copy is still
// refused at the door.
func TestLateOfflineScansDoNotUndoTheDoor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-19")
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("online: %+v", got.Data)
	}
	now := time.Now().UTC()
	got, res := f.uploadScans(t, door, event, []offlineScan{
		{Barcode: ts[0].SignedBarcode, Gate: "East", DeviceID: "dev-L", ScannedAt: now.Add(-40 * time.Minute)},
		{Barcode: ts[0].SignedBarcode, Gate: "East", DeviceID: "dev-L", ScannedAt: now.Add(-10 * time.Minute), Direction: "out"},
	})
	if res.Status != http.StatusOK || len(got.Data) != 2 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	var inside bool
	if err := f.DB.NewRaw("SELECT inside FROM tickets WHERE id = ?", ts[0].ID).Scan(context.Background(), &inside); err != nil || !inside {
		t.Fatalf("the ticket after the late upload: inside %v (%v)", inside, err)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("a copy after the late upload: %+v", got.Data)
	}
}

// An online admission that names no device conflicts with an offline scan
// only at another gate: at its own gate it is the same door.
func TestOfflineConflictWithAnUnnamedDevice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-20", "parterre-3-21")
	for _, tk := range ts {
		res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, tk.Barcode, event), idemKey(t))
		if res.Status != http.StatusOK {
			t.Fatalf("online scan: %d %s", res.Status, res.Body)
		}
	}
	at := time.Now().UTC()
	got, res := f.uploadScans(t, door, event, []offlineScan{
		{Barcode: ts[0].SignedBarcode, Gate: "North", DeviceID: "dev-N", ScannedAt: at},
		{Barcode: ts[1].SignedBarcode, Gate: "East", DeviceID: "dev-E", ScannedAt: at},
	})
	if res.Status != http.StatusOK || got.Data[0].Conflict || !got.Data[1].Conflict {
		t.Fatalf("conflicts: %d %s", res.Status, res.Body)
	}
}

// Three devices apart at a re-entry event: in at one, out at another, in
// again at a third, uploaded in the order in, in, out. The late exit is
// older than the third device's entry, so the ticket stays inside and a
// copy is refused.
func TestLateExitOlderThanAnEntryElsewhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-22")
	now := time.Now().UTC()
	for _, s := range []offlineScan{
		{Barcode: ts[0].SignedBarcode, Gate: "North", DeviceID: "dev-1", ScannedAt: now.Add(-60 * time.Minute)},
		{Barcode: ts[0].SignedBarcode, Gate: "East", DeviceID: "dev-3", ScannedAt: now.Add(-20 * time.Minute)},
		{Barcode: ts[0].SignedBarcode, Gate: "South", DeviceID: "dev-2", ScannedAt: now.Add(-40 * time.Minute), Direction: "out"},
	} {
		if _, res := f.uploadScans(t, door, event, []offlineScan{s}); res.Status != http.StatusOK {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "West"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("a copy after the uploads: %+v", got.Data)
	}
}

// An offline admission uploaded after a later exit online still records
// the ticket's first admission (its time and gate, the webhook's news),
// and leaves the ticket outside, where the exit left it.
func TestLateAdmissionStillCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-23")
	res := f.Do(t, http.MethodPost, "/v1/check-ins", door,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "direction": "out"}`, ts[0].Barcode, event), idemKey(t))
	if res.Status != http.StatusOK {
		t.Fatalf("exit: %d %s", res.Status, res.Body)
	}
	got, res := f.uploadScans(t, door, event, []offlineScan{
		{Barcode: ts[0].SignedBarcode, Gate: "East", DeviceID: "dev-L", ScannedAt: time.Now().UTC().Add(-30 * time.Minute)}})
	if res.Status != http.StatusOK || got.Data[0].Outcome != "admitted" {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	var row struct {
		CheckedInGate *string `bun:"checked_in_gate"`
		Inside        bool    `bun:"inside"`
	}
	if err := f.DB.NewRaw("SELECT checked_in_gate, inside FROM tickets WHERE id = ?", ts[0].ID).Scan(context.Background(), &row); err != nil ||
		row.CheckedInGate == nil || *row.CheckedInGate != "East" || row.Inside {
		t.Fatalf("the ticket after the late admission: %+v (%v)", row, err)
	}
}

// allowReentry lets tickets of the event go out and in again, as the
// catalog file's "reentry": true does.
func (f *fixture) allowReentry(t *testing.T, event int64) {
	t.Helper()
	if _, err := f.DB.NewRaw("UPDATE events SET allow_reentry = true WHERE id = ?", event).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A door list's cursor that is not one the service made — malformed, out
// of range, or not a snapshot Postgres would read — is refused with a 422
// naming updated_since, never a 500.
func TestDoorListCursorRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	for _, cursor := range []string{
		"1:9223372036854775808:", "1:4294967296:", "4294967296:4294967297:", "1:18446744073709551616:",
		"1:5:6", "5:1:", "x", "1:5:2,,3", "-1:5:", "1:5: 2",
	} {
		res := f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/list?updated_since=%s", event, url.QueryEscape(cursor)), door)
		p := expectProblem(t, res, http.StatusUnprocessableEntity, "validation_error")
		if len(p.Errors) != 1 || p.Errors[0].Location != "query.updated_since" {
			t.Fatalf("cursor %q: %s", cursor, res.Body)
		}
	}
	if list, _ := f.doorList(t, door, event, "1:9223372036854775807:"); list.Data.Delta {
		t.Fatalf("a cursor ahead of the database: %+v", list.Data)
	}
}

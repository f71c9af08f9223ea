// Package door is a small door scanner, the example of docs/checkin.md: it
// downloads the event's door list, scans barcodes online, keeps scanning
// from the list when the service cannot be reached, and uploads what it
// scanned offline when it is back. cmd/door runs it on barcodes read from
// standard input.
//
// It uses nothing but the standard library and the SDK's ticketcode
// package, so a vendor can read it as the wire protocol.
package door

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

// Door scans one event's tickets at one gate.
type Door struct {
	URL, Key, Gate, Device string
	EventID                int64
	HTTP                   *http.Client

	pub     ed25519.PublicKey
	cursor  string
	byID    map[int64]*listTicket  // the door list, by ticket id
	byHash  map[string]*listTicket // and by barcode hash (13-digit barcodes)
	pending []offlineScan          // scanned offline, not uploaded yet

	// Settled is what the service made of the offline scans uploaded.
	Settled []BatchResult
}

// Inside reports what the door list says of a ticket: whether it is inside,
// and whether the list has it at all.
func (d *Door) Inside(ticketID int64) (inside, listed bool) {
	lt := d.byID[ticketID]
	if lt == nil {
		return false, false
	}
	return lt.Inside, true
}

type listTicket struct {
	ID          int64  `json:"id"`
	BarcodeHash string `json:"barcode_hash"`
	State       string `json:"state"` // valid, void, not_paid
	Inside      bool   `json:"inside"`
}

type offlineScan struct {
	Barcode   string    `json:"barcode"`
	Gate      string    `json:"gate,omitempty"`
	DeviceID  string    `json:"device_id"`
	ScannedAt time.Time `json:"scanned_at"`
	// DoorOutcome is what the door answered: the service then knows a
	// holder turned away from one let in.
	DoorOutcome string `json:"door_outcome"`
}

// Scanned is what the door did with one scan.
type Scanned struct {
	Outcome string // as the service names outcomes
	Offline bool   // decided from the door list
}

// Prepare downloads the door list, or the changes since the last one.
func (d *Door) Prepare(ctx context.Context) error {
	path := fmt.Sprintf("/v1/events/%d/check-in/list", d.EventID)
	if d.cursor != "" {
		path += "?updated_since=" + d.cursor
	}
	var list struct {
		Data struct {
			PublicKey string       `json:"public_key"`
			Cursor    string       `json:"cursor"`
			Delta     bool         `json:"delta"`
			Tickets   []listTicket `json:"tickets"`
		} `json:"data"`
	}
	if err := d.call(ctx, http.MethodGet, path, nil, "", &list); err != nil {
		return fmt.Errorf("door list: %w", err)
	}
	pub, err := ticketcode.ParsePublicKey(list.Data.PublicKey)
	if err != nil {
		return err
	}
	if !list.Data.Delta || d.byID == nil {
		d.byID, d.byHash = map[int64]*listTicket{}, map[string]*listTicket{}
	}
	for i := range list.Data.Tickets {
		t := &list.Data.Tickets[i]
		d.byID[t.ID], d.byHash[t.BarcodeHash] = t, t
	}
	d.pub, d.cursor = pub, list.Data.Cursor
	return nil
}

// Scan asks the service, or decides from the list when it cannot be
// reached (a network error or a 5xx): then the scan waits for Upload.
func (d *Door) Scan(ctx context.Context, code string) (Scanned, error) {
	body, _ := json.Marshal(map[string]any{"barcode": code, "event_id": d.EventID, "gate": d.Gate, "device_id": d.Device})
	var res struct {
		Data struct {
			Outcome string `json:"outcome"`
		} `json:"data"`
	}
	// One Idempotency-Key per scan: a retry of this scan would reuse it.
	err := d.call(ctx, http.MethodPost, "/v1/check-ins", body, rand.Text(), &res)
	var refused *refusal
	switch {
	case err == nil:
		return Scanned{Outcome: res.Data.Outcome}, nil
	case errors.As(err, &refused) && refused.status < 500:
		return Scanned{}, err // the scan itself is wrong: nothing to retry
	}
	return d.decideOffline(code), nil
}

// decideOffline is what the service would answer, from the list. Every
// scan waits for the upload with what the door answered, refusals too: the
// service records them all.
func (d *Door) decideOffline(code string) Scanned {
	s := d.decideFromList(code)
	d.pending = append(d.pending, offlineScan{Barcode: code, Gate: d.Gate, DeviceID: d.Device, ScannedAt: time.Now(),
		DoorOutcome: s.Outcome})
	return s
}

func (d *Door) decideFromList(code string) Scanned {
	var t *listTicket
	if ticketcode.IsSigned(code) {
		c, err := ticketcode.Verify(d.pub, code, d.EventID)
		if err != nil {
			return Scanned{Outcome: "unknown", Offline: true} // forged, changed, or another event's
		}
		if t = d.byID[c.TicketID]; t == nil { // sold after the download: its signature vouches for it
			t = &listTicket{ID: c.TicketID, State: "valid"}
			d.byID[c.TicketID] = t
		}
	} else if t = d.byHash[ticketcode.BarcodeHash(code)]; t == nil {
		return Scanned{Outcome: "unknown", Offline: true}
	}
	outcome := "admitted"
	switch {
	case t.State == "void":
		outcome = "void"
	case t.State == "not_paid":
		outcome = "not_paid"
	case t.Inside:
		outcome = "already_checked_in"
	default:
		t.Inside = true
	}
	return Scanned{Outcome: outcome, Offline: true}
}

// BatchResult is the service's settlement of one offline scan.
type BatchResult struct {
	Outcome      string `json:"outcome"`
	Conflict     bool   `json:"conflict"`
	ConflictKind string `json:"conflict_kind"` // two_doors, admitted_while_inside, admitted_void
}

// Upload sends the offline scans (1000 a batch), settled by the service in
// the order they were made. It returns how many are still waiting.
func (d *Door) Upload(ctx context.Context) (int, error) {
	for len(d.pending) > 0 {
		n := min(len(d.pending), 1000)
		body, _ := json.Marshal(map[string]any{"event_id": d.EventID, "scans": d.pending[:n]})
		var res struct{ Data []BatchResult }
		// A batch retried after a lost answer is not recorded twice (the
		// service knows each scan by device, barcode and time).
		if err := d.call(ctx, http.MethodPost, "/v1/check-ins/batch", body, rand.Text(), &res); err != nil {
			return len(d.pending), err
		}
		d.pending = d.pending[n:]
		d.Settled = append(d.Settled, res.Data...)
	}
	return 0, d.Prepare(ctx) // the list again: what other doors did meanwhile
}

// refusal is an answer with an error status.
type refusal struct {
	status int
	body   []byte
}

func (r *refusal) Error() string { return fmt.Sprintf("HTTP %d: %.300s", r.status, r.body) }

func (d *Door) call(ctx context.Context, method, path string, body []byte, idem string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, d.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	res, err := d.HTTP.Do(req) // Go's transport asks for gzip and unpacks it
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		return &refusal{status: res.StatusCode, body: b}
	}
	return json.Unmarshal(b, out)
}

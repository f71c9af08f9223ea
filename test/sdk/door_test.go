package sdk_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/sdk/go/examples/door"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/test/testenv"
)

type ticket struct {
	ID            int64  `json:"id"`
	Barcode       string `json:"barcode"`
	SignedBarcode string `json:"signed_barcode"`
}

// buy makes a paid general-admission order of n tickets with the partner
// key and returns its tickets.
func buy(t *testing.T, s *testenv.Stack, key string, event int64, n int) []ticket {
	t.Helper()
	var cats struct{ Data []struct{ ID int64 } }
	s.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), key).Decode(t, &cats)
	res := s.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d,
		"items": [{"ticket_category_id": %d, "quantity": %d}], "payment": "external",
		"customer": {"email": "anna@example.com", "first_name": "Anna", "last_name": "Pavlova", "phone": "+7 999 123-45-67"}}`, event, cats.Data[0].ID, n),
		"Idempotency-Key: "+t.Name()+fmt.Sprint(time.Now().UnixNano()))
	var o struct {
		Data struct {
			ID     int64
			Amount struct{ Amount int64 }
		}
	}
	if res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &o)
	if res := s.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", o.Data.ID), key,
		fmt.Sprintf(`{"external_payment_id": "ext-%d", "paid_amount": %d}`, o.Data.ID, o.Data.Amount.Amount),
		"Idempotency-Key: confirm-"+fmt.Sprint(o.Data.ID)); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	var ts struct{ Data []ticket }
	s.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.Data.ID), key).Decode(t, &ts)
	if len(ts.Data) != n || !ticketcode.IsSigned(ts.Data[0].SignedBarcode) {
		t.Fatalf("tickets: %+v", ts.Data)
	}
	return ts.Data
}

// The example door (sdk/go/examples/door) through an outage: online scans, then the service out of
// reach (a forged code and a copy refused from the list, a ticket admitted
// from it), then the upload settled by the service, which agrees.
func TestDoorThroughAnOutage(t *testing.T) {
	s := testenv.NewStack(t)
	s.StartWorker(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	partner, _ := s.Key(t, company, apikey.Sandbox)
	doorKey, _ := s.Key(t, company, apikey.Sandbox, apikey.ScopeCheckin)
	var events struct {
		Data []struct {
			ID   int64
			Slug string
		}
	}
	s.Get(t, "/v1/events", partner).Decode(t, &events)
	var event int64
	for _, e := range events.Data {
		if e.Slug == "standup" {
			event = e.ID
		}
	}
	ts := buy(t, s, partner, event, 3)

	d := &door.Door{URL: s.URL, Key: doorKey, EventID: event, Gate: "North", Device: "north-1", HTTP: &http.Client{}}
	ctx := context.Background()
	if err := d.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	expect := func(code string, outcome string, offline bool) {
		t.Helper()
		got, err := d.Scan(ctx, code)
		if err != nil || got.Outcome != outcome || got.Offline != offline {
			t.Fatalf("scan %.20s…: %+v (%v), want %s offline=%v", code, got, err, outcome, offline)
		}
	}
	expect(ts[0].SignedBarcode, "admitted", false)
	expect(ts[0].Barcode, "already_checked_in", false)
	if err := d.Prepare(ctx); err != nil { // the change since: ticket 0 inside
		t.Fatal(err)
	}

	// The network goes; the door keeps deciding from its list.
	d.HTTP.Transport = roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, fmt.Errorf("network down") })
	forged := []byte(ts[1].SignedBarcode)
	forged[len(forged)-5] ^= 1
	expect(string(forged), "unknown", true)
	expect(ts[0].SignedBarcode, "already_checked_in", true)
	expect(ts[1].SignedBarcode, "admitted", true)
	expect(ts[2].Barcode, "admitted", true)
	expect(ts[2].SignedBarcode, "already_checked_in", true)
	if n, err := d.Upload(ctx); n != 5 || err == nil {
		t.Fatalf("upload without the network: %d waiting, %v", n, err)
	}

	// Back: the upload settles the scans, the service agreeing with the door.
	d.HTTP.Transport = nil
	if n, err := d.Upload(ctx); n != 0 || err != nil {
		t.Fatalf("upload: %d waiting, %v", n, err)
	}
	var outcomes []string
	for _, r := range d.Settled {
		outcomes = append(outcomes, r.Outcome)
	}
	if got := strings.Join(outcomes, ","); got != "unknown,already_checked_in,admitted,admitted,already_checked_in" {
		t.Fatalf("settled: %s", got)
	}
	var admitted int
	if err := s.DB.NewRaw("SELECT count(*) FROM tickets WHERE checked_in_at IS NOT NULL AND id IN (?, ?, ?)",
		ts[0].ID, ts[1].ID, ts[2].ID).Scan(ctx, &admitted); err != nil || admitted != 3 {
		t.Fatalf("%d tickets admitted (%v)", admitted, err)
	}
	// The list after the upload says all three are in.
	for _, tk := range ts {
		if inside, listed := d.Inside(tk.ID); !inside || !listed {
			t.Fatalf("ticket %d in the list after the upload: inside %v, listed %v", tk.ID, inside, listed)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestTicketctlDoorKeys: a key made without scopes is a partner's (no
// checkin); a door key carries checkin alone, may be limited to one of
// its company's events and a gate, lists with its limits, and admits at
// its gate only (elsewhere the door-elsewhere refusal, a 403).
func TestTicketctlDoorKeys(t *testing.T) {
	db, url := testenv.DB(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	s := &testenv.Stack{DB: db}
	acme, other := s.Company(t, "Acme"), s.Company(t, "Other")
	s.Import(t, acme, catalogfile.Demo(time.Now()))
	s.Import(t, other, catalogfile.Demo(time.Now()))
	eventOf := func(company int64, slug string) int64 {
		var id int64
		if err := db.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = ?", company, slug).Scan(ctx, &id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	swan, standup, foreign := eventOf(acme, "swan-lake"), eventOf(acme, "standup"), eventOf(other, "swan-lake")
	cid := strconv.FormatInt(acme, 10)
	countKeys := func() int {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM api_keys").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	out, err := ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--json")
	var partner createdKey
	if err != nil || json.Unmarshal([]byte(out), &partner) != nil || !slices.Equal(partner.Scopes, apikey.PartnerScopes) ||
		slices.Contains(partner.Scopes, apikey.ScopeCheckin) {
		t.Fatalf("a key with default scopes: %v %s", err, out)
	}

	before := countKeys()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"checkin with a partner scope", []string{"--scopes", "checkin,orders:read"}, "only the checkin scope"},
		{"an event without checkin", []string{"--scopes", "orders:read", "--event", strconv.FormatInt(swan, 10)}, "checkin scope"},
		{"a gate without checkin", []string{"--gate", "North"}, "checkin scope"},
		{"another company's event", []string{"--scopes", "checkin", "--event", strconv.FormatInt(foreign, 10)}, "not one of the company's events"},
		{"no such event", []string{"--scopes", "checkin", "--event", "999999"}, "not one of the company's events"},
	} {
		args := append([]string{"key", "create", "--company", cid, "--env", "production"}, tc.args...)
		if out, err := ticketctl(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v %s, want an error saying %q", tc.name, err, out, tc.want)
		}
	}
	if n := countKeys(); n != before {
		t.Fatalf("refused keys were stored: %d keys, %d before", n, before)
	}

	out, err = ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--scopes", "checkin",
		"--event", strconv.FormatInt(standup, 10), "--gate", "North", "--name", "north door", "--json")
	var door createdKey
	if err != nil || json.Unmarshal([]byte(out), &door) != nil || !slices.Equal(door.Scopes, []string{apikey.ScopeCheckin}) ||
		door.CheckinEventID == nil || *door.CheckinEventID != standup || door.CheckinGate == nil || *door.CheckinGate != "North" {
		t.Fatalf("door key create: %v %s", err, out)
	}
	out, err = ticketctl(t, "key", "list", "--company", cid)
	if err != nil || !strings.Contains(out, "DOOR") {
		t.Fatalf("key list: %v %s", err, out)
	}
	var row string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, strconv.FormatInt(door.ID, 10)+" ") {
			row = l
		}
	}
	if !strings.Contains(row, "event "+strconv.FormatInt(standup, 10)+" (Stand-up night)") || !strings.Contains(row, "gate North") {
		t.Fatalf("the door key's row in key list: %q\n%s", row, out)
	}
	out, err = ticketctl(t, "key", "list", "--company", cid, "--json")
	var listed []apikey.CompanyKey
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 2 {
		t.Fatalf("key list --json: %v %s", err, out)
	}

	// The door key scans at its event and gate only.
	p, err := apikey.NewAuthenticator(db, 0).Authenticate(ctx, door.Key)
	if err != nil || p.Has(apikey.ScopeOrdersRead) {
		t.Fatalf("the door key: %+v %v", p, err)
	}
	svc := &checkin.Service{DB: db}
	barcodes := paidTickets(t, db, acme, partner.ID, standup, 2)
	got, err := svc.Scan(ctx, p, checkin.ScanInput{Barcode: barcodes[0], EventID: standup})
	if err != nil || got.Gate != "North" || got.Outcome != states.ScanAdmitted {
		t.Fatalf("a scan at the key's door: %+v %v", got, err)
	}
	for _, in := range []checkin.ScanInput{{Barcode: barcodes[1], EventID: standup, Gate: "South"},
		{Barcode: barcodes[1], EventID: swan, Gate: "North"}} {
		if _, err := svc.Scan(ctx, p, in); !errors.Is(err, errs.DoorElsewhere) {
			t.Errorf("a scan at event %d gate %s: %v, want the door-elsewhere refusal", in.EventID, in.Gate, err)
		}
	}
	// The database refuses limits on a key that is not a door key alone.
	if _, err := db.NewRaw("UPDATE api_keys SET checkin_gate = 'North' WHERE id = ?", partner.ID).Exec(ctx); err == nil {
		t.Fatal("a partner key took a gate")
	}
}

// paidTickets sells n general-admission tickets of the event with the
// production key, as the order saga would (paid, tickets issued), and
// returns their barcodes.
func paidTickets(t *testing.T, db *bun.DB, company, keyID, event int64, n int) []string {
	t.Helper()
	ctx := context.Background()
	var cat int64
	if err := db.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? ORDER BY id LIMIT 1", event).Scan(ctx, &cat); err != nil {
		t.Fatal(err)
	}
	o := &store.Order{CompanyID: company, APIKeyID: keyID, EventID: event, Status: states.OrderPendingPayment,
		Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: time.Now().Add(time.Hour)}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, db, o, []store.ItemQuantity{{CategoryID: cat, Quantity: n, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.MarkOrderPaid(ctx, db, o.ID, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.IssueTickets(ctx, db, o.ID, delivery.NewBarcode); err != nil {
		t.Fatal(err)
	}
	var codes []string
	if err := db.NewRaw("SELECT barcode FROM tickets WHERE order_id = ? ORDER BY position", o.ID).Scan(ctx, &codes); err != nil || len(codes) != n {
		t.Fatalf("%d tickets (%v)", len(codes), err)
	}
	return codes
}

// A ticket admitted at the door is refunded only when the organizer says
// so (--checked-in); without it nothing is refunded. Another company's
// order is not found.
func TestTicketctlRefundOfACheckedInTicket(t *testing.T) {
	db, url := testenv.DB(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	s := &testenv.Stack{DB: db}
	acme, other := s.Company(t, "Acme"), s.Company(t, "Other")
	s.Import(t, acme, catalogfile.Demo(time.Now()))
	var event int64
	if err := db.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = 'standup'", acme).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	_, keyID := s.Key(t, acme, apikey.Production)
	barcodes := paidTickets(t, db, acme, keyID, event, 2)
	var orderID int64
	if err := db.NewRaw("SELECT order_id FROM tickets WHERE barcode = ?", barcodes[0]).Scan(ctx, &orderID); err != nil {
		t.Fatal(err)
	}
	door := &apikey.Principal{KeyID: keyID, CompanyID: acme, Environment: apikey.Production, Scopes: []string{apikey.ScopeCheckin}}
	svc := &checkin.Service{DB: db}
	if got, err := svc.Scan(ctx, door, checkin.ScanInput{Barcode: barcodes[0], EventID: event, Gate: "North"}); err != nil ||
		got.Outcome != states.ScanAdmitted {
		t.Fatalf("scan: %+v %v", got, err)
	}
	order, cid := strconv.FormatInt(orderID, 10), strconv.FormatInt(acme, 10)
	if out, err := ticketctl(t, "order", "refund", "--company", strconv.FormatInt(other, 10), "--order", order); err == nil ||
		!strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("another company's order: %v %s", err, out)
	}
	if out, err := ticketctl(t, "order", "refund", "--company", cid, "--order", order); err == nil ||
		!strings.Contains(err.Error(), "checked in at the door") {
		t.Fatalf("a refund of a checked-in ticket without --checked-in: %v %s", err, out)
	}
	var status string
	if err := db.NewRaw("SELECT status FROM orders WHERE id = ?", orderID).Scan(ctx, &status); err != nil || status != "paid" {
		t.Fatalf("the refused refund changed the order: %s %v", status, err)
	}
	out, err := ticketctl(t, "order", "refund", "--company", cid, "--order", order, "--checked-in", "--reason", "show cancelled for her")
	if err != nil || !strings.Contains(out, "completed") {
		t.Fatalf("the organizer's refund: %v %s", err, out)
	}
	if err := db.NewRaw("SELECT status FROM orders WHERE id = ?", orderID).Scan(ctx, &status); err != nil || status != "refunded" {
		t.Fatalf("the order after the refund: %s %v", status, err)
	}
	if got, err := svc.Scan(ctx, door, checkin.ScanInput{Barcode: barcodes[0], EventID: event, Gate: "North"}); err != nil ||
		got.Outcome != states.ScanVoid {
		t.Fatalf("the refunded ticket at the door: %+v %v", got, err)
	}
}

package store_test

import (
	"context"
	"testing"
	"time"

	"ticketsales/catalogfile"
	"ticketsales/pricing"
	"ticketsales/store"
	"ticketsales/testenv"
)

// TestIssueTicketsDrawsAgainOnBarcodeCollision makes the barcode generator
// repeat itself: the second position must get a fresh barcode, not fail.
func TestIssueTicketsDrawsAgainOnBarcodeCollision(t *testing.T) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company := s.Company(t, "A")
	s.Import(t, company, catalogfile.Demo(time.Now()))
	_, keyID := s.Key(t, company, "sandbox")
	var event, cat int64
	if err := s.DB.NewRaw("SELECT e.id, c.id FROM events e JOIN ticket_categories c ON c.event_id = e.id WHERE e.slug = 'standup'").Scan(ctx, &event, &cat); err != nil {
		t.Fatal(err)
	}
	o := &store.Order{CompanyID: company, APIKeyID: keyID, IsTest: true, EventID: event, Status: store.OrderPendingPayment,
		Payment: "external", CustomerEmail: "a@b.c", CustomerFirstName: "A", CustomerLastName: "B", AccessTokenHash: []byte{1},
		ExpiresAt: time.Now().Add(time.Hour)}
	fee := pricing.Fee{Mode: pricing.Included}
	if err := store.CreateOrderFromItems(ctx, s.DB, o, []store.ItemQuantity{{CategoryID: cat, Quantity: 2, Price: 100}},
		func(p []int64) (int64, int64, int64) { q := fee.Order(p...); return q.Total, q.Fee, q.Amount }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.MarkOrderPaid(ctx, s.DB, o.ID, "x"); err != nil {
		t.Fatal(err)
	}
	draws := []string{"4006381333931", "4006381333931", "5901234123457"}
	next := func() string { d := draws[0]; draws = draws[1:]; return d }
	n, err := store.IssueTickets(ctx, s.DB, o.ID, next)
	if err != nil || n != 2 {
		t.Fatalf("issued %d (%v)", n, err)
	}
	var codes []string
	_ = s.DB.NewRaw("SELECT barcode FROM tickets WHERE order_id = ? ORDER BY position", o.ID).Scan(ctx, &codes)
	if len(codes) != 2 || codes[0] != "4006381333931" || codes[1] != "5901234123457" {
		t.Fatalf("barcodes %v", codes)
	}
}

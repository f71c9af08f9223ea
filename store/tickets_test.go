package store_test

import (
	"context"
	"testing"
	"time"

	"ticketsales/store"
)

// TestIssueTicketsDrawsAgainOnBarcodeCollision makes the barcode generator
// repeat itself: the second position must get a fresh barcode, not fail.
func TestIssueTicketsDrawsAgainOnBarcodeCollision(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	o, _ := s.gaOrder(t, 2, time.Now().Add(time.Hour))
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

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/store"
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
	next := func(bool) string { d := draws[0]; draws = draws[1:]; return d }
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

// TestIssueTicketsDrawsFromTheOrdersEnvironment issues a sandbox and a
// production order's tickets with the generator the activities use: the
// sandbox tickets' barcodes are in the sandbox space, the production ones
// are not, whichever environment the caller runs in.
func TestIssueTicketsDrawsFromTheOrdersEnvironment(t *testing.T) {
	ctx := context.Background()
	s := newDemo(t)
	_, prodKey := s.Key(t, s.company, "production")
	for _, tc := range []struct {
		name   string
		keyID  int64
		isTest bool
	}{{"sandbox", s.keyID, true}, {"production", prodKey, false}} {
		o, _ := s.gaOrderOf(t, tc.keyID, tc.isTest, 3, time.Now().Add(time.Hour))
		if _, _, err := store.MarkOrderPaid(ctx, s.DB, o.ID, "x"); err != nil {
			t.Fatal(err)
		}
		var asked []bool
		n, err := store.IssueTickets(ctx, s.DB, o.ID, func(sandbox bool) string {
			asked = append(asked, sandbox)
			return delivery.NewBarcode(sandbox)
		})
		if err != nil || n != 3 {
			t.Fatalf("%s: issued %d (%v)", tc.name, n, err)
		}
		for _, sandbox := range asked {
			if sandbox != tc.isTest {
				t.Fatalf("%s order: the generator was asked for sandbox=%v", tc.name, sandbox)
			}
		}
		tickets, err := store.ListOrderTickets(ctx, s.DB, o.ID)
		if err != nil || len(tickets) != 3 {
			t.Fatalf("%s: %d tickets (%v)", tc.name, len(tickets), err)
		}
		for _, tk := range tickets {
			if !delivery.ValidEAN13(tk.Barcode) || delivery.IsSandboxBarcode(tk.Barcode) != tc.isTest {
				t.Fatalf("%s ticket %s: barcode %s, sandbox %v", tc.name, tk.Number, tk.Barcode, delivery.IsSandboxBarcode(tk.Barcode))
			}
		}
	}
}

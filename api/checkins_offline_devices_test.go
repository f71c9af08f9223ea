package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

// Four devices upload their offline scans at once, some tickets copied
// onto two of them: every ticket is let in exactly once, each copy comes
// back a conflict the organizer sees, and the list's changes have every
// ticket inside. (The targets at 10,000 tickets are in `make bench`, the
// checkin part: docs/performance.md.)
func TestOfflineDevicesUploadAtOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	order, _ := f.paidTickets(t, f.keyA, "parterre-3-16")
	const n, copies, devices = 40, 8, 4
	ctx := context.Background()
	if _, err := f.DB.NewRaw(`INSERT INTO order_items (order_id, position, category_id, seat_id, price)
		SELECT i.order_id, i.position + g, i.category_id, NULL, i.price FROM order_items i, generate_series(1, ?) g
		WHERE i.order_id = ?`, n-1, order).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.DB.NewRaw(`INSERT INTO tickets (order_id, position, number, barcode)
		SELECT i.order_id, i.position, 'S-' || i.position, '2999' || lpad(i.position::text, 9, '0')
		FROM order_items i WHERE i.order_id = ? AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = i.order_id AND t.position = i.position)`,
		order).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var ts struct{ Data []signedTicket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", order), f.keyA).Decode(t, &ts)
	if len(ts.Data) != n {
		t.Fatalf("%d tickets", len(ts.Data))
	}
	list, _ := f.doorList(t, door, event, "")
	pub, err := ticketcode.ParsePublicKey(list.Data.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	held := make(map[int64]string, len(list.Data.Tickets))
	for _, lt := range list.Data.Tickets {
		held[lt.ID] = lt.BarcodeHash
	}
	for _, tk := range ts.Data {
		c, err := ticketcode.Verify(pub, tk.SignedBarcode, event)
		if err != nil || c.TicketID != tk.ID || held[c.TicketID] != ticketcode.BarcodeHash(c.Barcode) {
			t.Fatalf("ticket %d: %+v %v", tk.ID, c, err)
		}
	}

	// The tickets shared out; the first few scanned again a minute later
	// by the next device (copies), by their code or their barcode.
	t0 := time.Now().Add(-time.Hour).UTC()
	batches := make([][]offlineScan, devices)
	for i := range n {
		d := i % devices
		batches[d] = append(batches[d], offlineScan{Barcode: ts.Data[i].SignedBarcode, Gate: fmt.Sprintf("gate-%d", d),
			DeviceID: fmt.Sprintf("dev-%d", d), ScannedAt: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	for i := range copies {
		d, code := (i+1)%devices, ts.Data[i].Barcode
		if i%2 == 0 {
			code = ts.Data[i].SignedBarcode
		}
		batches[d] = append(batches[d], offlineScan{Barcode: code, Gate: fmt.Sprintf("gate-%d", d),
			DeviceID: fmt.Sprintf("dev-%d", d), ScannedAt: t0.Add(time.Minute + time.Duration(i)*time.Millisecond)})
	}
	var wg sync.WaitGroup
	results := make([]batchBody, devices)
	for d := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, res := f.uploadScans(t, door, event, batches[d])
			if res.Status != http.StatusOK || len(got.Data) != len(batches[d]) {
				t.Errorf("device %d: %d %s", d, res.Status, res.Body)
			}
			results[d] = got
		}()
	}
	wg.Wait()
	admitted, conflicted := map[int64]int{}, map[int64]bool{}
	for _, r := range results {
		for _, s := range r.Data {
			if s.Outcome == "admitted" {
				admitted[*s.TicketID]++
			}
			if s.Conflict {
				if s.Outcome != "already_checked_in" {
					t.Fatalf("a conflict %+v", s)
				}
				conflicted[*s.TicketID] = true
			}
		}
	}
	if len(admitted) != n || len(conflicted) != copies {
		t.Fatalf("%d tickets admitted, %d conflicts: %+v", len(admitted), len(conflicted), results)
	}
	for _, tk := range ts.Data[:copies] {
		if !conflicted[tk.ID] {
			t.Fatalf("copied ticket %d is no conflict", tk.ID)
		}
	}
	for id, k := range admitted {
		if k != 1 {
			t.Fatalf("ticket %d admitted %d times", id, k)
		}
	}
	var conflicts struct {
		Data []struct {
			TicketID int64 `json:"ticket_id"`
		}
	}
	f.Get(t, fmt.Sprintf("/v1/events/%d/check-in/conflicts", event), f.keyA).Decode(t, &conflicts)
	if len(conflicts.Data) != copies {
		t.Fatalf("conflicts listed: %+v", conflicts.Data)
	}
	delta, _ := f.doorList(t, door, event, list.Data.Cursor)
	inside := 0
	for _, lt := range delta.Data.Tickets {
		if lt.Inside {
			inside++
		}
	}
	if inside != n {
		t.Fatalf("%d tickets inside in the changes, want %d", inside, n)
	}
}

package api_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
)

// offlineAt is one offline scan of a ticket's signed code at a gate named
// after its device, at t0 plus a few minutes.
func offlineAt(tk signedTicket, device string, t0 time.Time, minutes int, direction string) offlineScan {
	return offlineScan{Barcode: tk.SignedBarcode, Gate: "gate-" + device, DeviceID: device,
		ScannedAt: t0.Add(time.Duration(minutes) * time.Minute), Direction: direction}
}

// conflictsOf counts the listed conflicts of each ticket.
func (f *fixture) conflictsOf(t *testing.T, event int64) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	for _, c := range f.conflicts(t, event).Data {
		out[c.TicketID]++
	}
	return out
}

// An exit uploaded after the entries it lies between, in scanned_at
// order, is the holder leaving before coming back: the conflict the
// second entry raised by the record of its upload is cleared, whichever
// of the two entries was uploaded first. An exit that does not lie
// between two entries clears nothing, and an entry the exit no longer
// separates from the one before it conflicts with that one instead.
func TestOfflineExitUploadedLaterClearsTheConflict(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	_, ts := f.signedTickets(t, f.keyA, "parterre-1-1", "parterre-1-2", "parterre-1-3", "parterre-1-4")
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	upload := func(s offlineScan) batchBody {
		t.Helper()
		got, res := f.uploadScans(t, door, event, []offlineScan{s})
		if res.Status != http.StatusOK {
			t.Fatalf("upload %+v: %d %s", s, res.Status, res.Body)
		}
		return got
	}
	// Ticket 0: A in at 0, B in at 20 (a conflict by the record then), A
	// out at 10 uploaded last.
	upload(offlineAt(ts[0], "dev-A", t0, 0, ""))
	if got := upload(offlineAt(ts[0], "dev-B", t0, 20, "")); !got.Data[0].Conflict {
		t.Fatalf("B's entry while A's admission was the last on record: %+v", got.Data)
	}
	upload(offlineAt(ts[0], "dev-A", t0, 10, "out"))
	// Ticket 1: B's entry uploaded first, then A's, then A's exit.
	upload(offlineAt(ts[1], "dev-B", t0, 20, ""))
	if got := upload(offlineAt(ts[1], "dev-A", t0, 0, "")); !got.Data[0].Conflict {
		t.Fatalf("A's entry before B's, no exit on record: %+v", got.Data)
	}
	upload(offlineAt(ts[1], "dev-A", t0, 10, "out"))
	// Ticket 2: C let a second holder in at 5, before A's exit at 10.
	upload(offlineAt(ts[2], "dev-A", t0, 0, ""))
	upload(offlineAt(ts[2], "dev-C", t0, 5, ""))
	upload(offlineAt(ts[2], "dev-A", t0, 10, "out"))
	// Ticket 3: A in at 0, B in at 20, D in at 15, A's exit at 10 last:
	// D came back after the exit, and B let a second holder in after D.
	upload(offlineAt(ts[3], "dev-A", t0, 0, ""))
	upload(offlineAt(ts[3], "dev-B", t0, 20, ""))
	upload(offlineAt(ts[3], "dev-D", t0, 15, ""))
	upload(offlineAt(ts[3], "dev-A", t0, 10, "out"))

	got := f.conflicts(t, event)
	by := map[int64]int{}
	for _, c := range got.Data {
		by[c.TicketID]++
	}
	if by[ts[0].ID] != 0 || by[ts[1].ID] != 0 || by[ts[2].ID] != 1 || by[ts[3].ID] != 1 || len(got.Data) != 2 {
		t.Fatalf("conflicts: %+v", got.Data)
	}
	for _, c := range got.Data {
		if c.TicketID == ts[3].ID && (c.DeviceID != "dev-B" || c.AdmittedGate != "gate-dev-D") {
			t.Fatalf("ticket 3's conflict: %+v", c)
		}
	}
	// Nor does the cabinet show the holders who came back as copies
	// refused: their devices let them in.
	rep, err := checkin.Door(context.Background(), f.DB, f.companyA, event, true, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Conflicts {
		if c.TicketNumber == ts[0].Number || c.TicketNumber == ts[1].Number {
			t.Errorf("the cabinet's conflicts: %+v", c)
		}
	}
}

// Devices upload their batches at once, in every order: A's batch lets a
// ticket in at 19:00 and out at 19:10, B's lets it in at 19:20 (the holder
// coming back: no conflict, whatever arrived first), C's lets another
// ticket in at 19:05 while A's holder was inside (a conflict, exactly
// one). Each ticket's scans are judged by scanned_at under its row lock,
// not by which upload got there first.
func TestOfflineConflictsUnderConcurrentUploads(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	f.allowReentry(t, event)
	var ts []signedTicket
	for _, row := range []string{"1", "2"} {
		seats := make([]string, 12)
		for i := range seats {
			seats[i] = fmt.Sprintf("parterre-%s-%d", row, i+1)
		}
		_, bought := f.signedTickets(t, f.keyA, seats...)
		ts = append(ts, bought...)
	}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	returning, copied := map[int64]bool{}, map[int64]bool{}
	var batches [][]offlineScan
	for i, tk := range ts {
		a := []offlineScan{offlineAt(tk, "dev-A", t0, 0, ""), offlineAt(tk, "dev-A", t0, 10, "out")}
		if i%2 == 0 {
			returning[tk.ID] = true
			batches = append(batches, a, []offlineScan{offlineAt(tk, "dev-B", t0, 20, "")})
		} else {
			copied[tk.ID] = true
			batches = append(batches, a, []offlineScan{offlineAt(tk, "dev-C", t0, 5, "")})
		}
	}
	results := make([]batchBody, len(batches))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got, res := f.uploadScans(t, door, event, batches[i])
			if res.Status != http.StatusOK || len(got.Data) != len(batches[i]) {
				t.Errorf("batch %d: %d %s", i, res.Status, res.Body)
			}
			results[i] = got
		}()
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	answered := map[int64]int{}
	for _, r := range results {
		for _, s := range r.Data {
			if s.Conflict {
				answered[*s.TicketID]++
			}
		}
	}
	listed := f.conflictsOf(t, event)
	for _, tk := range ts {
		switch {
		case returning[tk.ID] && (answered[tk.ID] != 0 || listed[tk.ID] != 0):
			t.Errorf("ticket %d, out before it came back: %d conflicts answered, %d listed", tk.ID, answered[tk.ID], listed[tk.ID])
		case copied[tk.ID] && (answered[tk.ID] != 1 || listed[tk.ID] != 1):
			t.Errorf("ticket %d, let in twice at once: %d conflicts answered, %d listed", tk.ID, answered[tk.ID], listed[tk.ID])
		}
	}
	// The holders who came back are inside; those let out are not back.
	rows := []struct {
		ID     int64 `bun:"id"`
		Inside bool  `bun:"inside"`
	}{}
	ids := make([]int64, len(ts))
	for i, tk := range ts {
		ids[i] = tk.ID
	}
	if err := f.DB.NewRaw("SELECT id, inside FROM tickets WHERE id IN (?)", bun.In(ids)).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if returning[r.ID] && !r.Inside {
			t.Errorf("ticket %d, back in at 19:20, is not inside", r.ID)
		}
	}
}

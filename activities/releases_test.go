package activities_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/activities"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

func seatChannel(t *testing.T, acts *activities.Activities, eventID int64, seat string) (ch *int64) {
	t.Helper()
	if err := acts.DB.NewRaw("SELECT channel_id FROM event_seats WHERE event_id = ? AND seat_id = ?", eventID, seat).
		Scan(context.Background(), &ch); err != nil {
		t.Fatal(err)
	}
	return ch
}

// The release activity against Postgres: before release_at nothing moves
// (the run's own time: retried; a moved one's: stale, done), once due the
// channel's unsold seats return to general sale, and a second run finds
// nothing due.
func TestReleaseAllocationOnlyWhenDue(t *testing.T) {
	ctx := context.Background()
	s, company, _, acts := demoStore(t)
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake' AND company_id = ?", company).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	ch, err := store.UpsertChannel(ctx, s.DB, company, "reseller", "Reseller")
	if err != nil {
		t.Fatal(err)
	}
	seats := []string{"parterre-1-1", "parterre-1-2"}
	if mv, err := store.AllocateSeats(ctx, s.DB, company, event, ch.ID, seats); err != nil || len(mv.Moved) != 2 {
		t.Fatalf("allocate: %+v %v", mv, err)
	}
	later := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	if err := store.SetChannelTerms(ctx, s.DB, company, event, ch.ID, window.Window{}, &later); err != nil {
		t.Fatal(err)
	}
	in := contract.AllocationReleaseInput{CompanyID: company, EventID: event, ChannelID: ch.ID, ReleaseAt: later}

	// Not due, and this run's time: an early timer, retried.
	_, err = acts.ReleaseAllocation(ctx, in)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeReleaseEarly || app.NonRetryable() {
		t.Fatalf("before release_at: %v", err)
	}
	// Not due, and another run's time (moved since): done, nothing moved.
	stale := in
	stale.ReleaseAt = later.Add(-24 * time.Hour)
	if out, err := acts.ReleaseAllocation(ctx, stale); err != nil || !out.NotDue {
		t.Fatalf("stale run: %+v %v", out, err)
	}
	for _, seat := range seats {
		if c := seatChannel(t, acts, event, seat); c == nil || *c != ch.ID {
			t.Fatalf("%s left the channel before its release: %v", seat, c)
		}
	}

	// Due: the seats return to general sale, once.
	past := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	if err := store.SetChannelTerms(ctx, s.DB, company, event, ch.ID, window.Window{}, &past); err != nil {
		t.Fatal(err)
	}
	in.ReleaseAt = past
	out, err := acts.ReleaseAllocation(ctx, in)
	if err != nil || out.NotDue || out.Seats != 2 {
		t.Fatalf("due release: %+v %v", out, err)
	}
	for _, seat := range seats {
		if c := seatChannel(t, acts, event, seat); c != nil {
			t.Fatalf("%s still in channel %d after the release", seat, *c)
		}
	}
	terms, err := store.GetChannelTerms(ctx, s.DB, event, ch.ID)
	if err != nil || terms == nil || terms.ReleasedAt == nil || terms.ReleasedSeats != 2 {
		t.Fatalf("terms after the release: %+v %v", terms, err)
	}
	if again, err := acts.ReleaseAllocation(ctx, in); err != nil || !again.NotDue || again.Seats != 0 {
		t.Fatalf("second run: %+v %v", again, err)
	}
}

// A channel that is not the company's is no release to retry.
func TestReleaseAllocationOfAnotherCompanyFailsForGood(t *testing.T) {
	ctx := context.Background()
	s, company, _, acts := demoStore(t)
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE slug = 'swan-lake' AND company_id = ?", company).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	_, err := acts.ReleaseAllocation(ctx, contract.AllocationReleaseInput{CompanyID: company, EventID: event, ChannelID: 1 << 40,
		ReleaseAt: time.Now()})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrTypeReleaseGone || !app.NonRetryable() {
		t.Fatalf("unknown channel: %v", err)
	}
}

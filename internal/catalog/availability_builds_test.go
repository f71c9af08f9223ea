package catalog_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// demoCatalog is a database with the demo catalog of one company, and the
// id of its seated event.
func demoCatalog(t *testing.T) (s *testenv.Stack, company, swan int64) {
	t.Helper()
	return importedEvent(t, catalogfile.Demo(time.Now()), "swan-lake")
}

// importedEvent is a database with one company's catalog file, and the id
// of its event of that slug.
func importedEvent(t *testing.T, file []byte, slug string) (s *testenv.Stack, company, event int64) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	s = &testenv.Stack{}
	s.DB, _ = testenv.DB(t)
	company = s.Company(t, "A")
	s.Import(t, company, file)
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = ?", company, slug).Scan(context.Background(), &event); err != nil {
		t.Fatal(err)
	}
	return s, company, event
}

// TestAvailabilityBuildsAreSharedAndFresh: buyers who open the seat map
// while its build is under way share one build between them, made after
// they asked, so each sees the seat sold just before; the build under way,
// read before that sale, is not theirs.
func TestAvailabilityBuildsAreSharedAndFresh(t *testing.T) {
	ctx := context.Background()
	s, company, swan := demoCatalog(t)
	svc := catalog.New(s.DB, time.Now)
	status := func(a catalog.AvailabilityDoc, seat string) string {
		for _, st := range a.Data.Seats {
			if st.SeatID == seat {
				return string(st.Status)
			}
		}
		return "missing"
	}

	// The first build has read and is held there.
	read, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	svc.AfterBuild(func() { once.Do(func() { close(read); <-release }) })
	first := make(chan catalog.AvailabilityDoc, 1)
	go func() {
		a, err := svc.Availability(ctx, company, swan)
		if err != nil {
			t.Error(err)
		}
		first <- a
	}()
	<-read

	// A seat sold now, then 20 buyers ask while that build is under way.
	if _, err := s.DB.ExecContext(ctx, `WITH s AS (UPDATE event_seats SET state = 'sold' WHERE event_id = ? AND seat_id = 'parterre-1-1'
		RETURNING event_id) UPDATE events SET seat_version = seat_version + 1 WHERE id IN (SELECT event_id FROM s)`, swan); err != nil {
		t.Fatal(err)
	}
	const buyers = 20
	got := make([]catalog.AvailabilityDoc, buyers)
	var wg sync.WaitGroup
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := svc.Availability(ctx, company, swan)
			if err != nil {
				t.Error(err)
			}
			got[i] = a
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); svc.Waiting(swan) < buyers; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d buyers wait for the next build", svc.Waiting(swan), buyers)
		}
	}
	close(release)
	wg.Wait()
	if st := status(<-first, "parterre-1-1"); st != "free" {
		t.Fatalf("the first build read before the sale, yet shows %s", st)
	}
	for i, a := range got {
		if st := status(a, "parterre-1-1"); st != "sold" {
			t.Fatalf("buyer %d, who asked after the sale, sees the seat %s", i, st)
		}
	}
	if n := svc.Builds(); n != 2 {
		t.Fatalf("%d builds for 1 + %d buyers, want 2", n, buyers)
	}
}

// TestAvailabilityBuildPanicIsAnError: a build that panics (on a goroutine
// of its own) fails its waiters with an error, and the next request builds
// again.
func TestAvailabilityBuildPanicIsAnError(t *testing.T) {
	ctx := context.Background()
	s, company, swan := demoCatalog(t)
	svc := catalog.New(s.DB, time.Now)
	var once sync.Once
	svc.AfterBuild(func() { once.Do(func() { panic("boom") }) })
	if _, err := svc.Availability(ctx, company, swan); err == nil {
		t.Fatal("a build that panicked answered without an error")
	}
	a, err := svc.Availability(ctx, company, swan)
	if err != nil || len(a.Data.Seats) != 96 {
		t.Fatalf("the next request: %v, %d seats", err, len(a.Data.Seats))
	}
}

package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestClosingADatabaseClosesItsConnections: a closed *bun.DB leaves no
// connection open in Postgres (the pgx pool under it used to keep its idle
// ones: a test stack's stopped api instances ran Postgres out of them).
func TestClosingADatabaseClosesItsConnections(t *testing.T) {
	ctx := context.Background()
	admin, url := testenv.DB(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	db, err := store.Open(ctx, url+sep+"application_name=closing_test")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.ExecContext(ctx, "SELECT pg_sleep(0.1)"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	count := func() int {
		var n int
		if err := admin.NewRaw("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'closing_test'").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n < 2 {
		t.Fatalf("%d connections open before Close: the test opened too few to tell", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open 5 s after Close", count())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

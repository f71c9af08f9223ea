package catalog_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// The change listener connects with the DATABASE_URL the docs offer, pool
// settings included: pool_max_conns once went to Postgres as a run-time
// parameter, which it refuses, so the listener failed every second and
// every availability read checked the seat version instead.
func TestListenerTakesPoolSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Postgres")
	}
	db, url := testenv.DB(t)
	svc := catalog.New(db, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Listen(ctx, url+"&pool_max_conns=8&pool_min_conns=1", slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	}()
	for deadline := time.Now().Add(10 * time.Second); !svc.Listening(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the listener did not connect with pool settings in the URL")
		}
	}
	cancel()
	<-done
}

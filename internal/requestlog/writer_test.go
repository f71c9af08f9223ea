package requestlog_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ticketsales/ticketsales/internal/metrics"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// A row Postgres cannot store (here bytes that are not UTF-8, which the
// API cleans before they get here) is dropped alone and counted: the other
// rows of its batch, other companies' requests, are written.
func TestUnstorableRowIsDroppedAlone(t *testing.T) {
	db, _ := testenv.DB(t)
	reg := metrics.New(slog.New(slog.DiscardHandler))
	// One batch: nothing is written before Close.
	w := requestlog.NewWriter(db, slog.New(slog.DiscardHandler), time.Hour, reg)
	companyA, companyB := int64(1), int64(2)
	now := time.Now()
	w.Log(store.RequestLogEntry{RequestID: "req_a", CompanyID: &companyA, Method: "GET", Path: "/v1/cities", Status: 200, CreatedAt: now})
	w.Log(store.RequestLogEntry{RequestID: "req_bad", Method: "GET", Path: "/v1/\xff", Status: 404, CreatedAt: now})
	w.Log(store.RequestLogEntry{RequestID: "req_b", CompanyID: &companyB, Method: "GET", Path: "/v1/events", Status: 200, CreatedAt: now})
	w.Close()

	entries, err := store.ListRequestLog(context.Background(), db, store.RequestLogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.RequestID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"req_a", "req_b"}) {
		t.Fatalf("request log holds %v, want the two good rows", ids)
	}
	if n := testutil.ToFloat64(reg.RequestLogRefused); n != 1 {
		t.Fatalf("refused rows counted: %v, want 1", n)
	}
}

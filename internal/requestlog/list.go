package requestlog

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// Entry is one API request as the organizer's request log shows it.
type Entry struct {
	ID         int64     `json:"id"`
	RequestID  string    `json:"request_id"`
	CompanyID  *int64    `json:"company_id,omitempty"`
	APIKeyID   *int64    `json:"api_key_id,omitempty"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Status     int       `json:"status"`
	DurationUS int64     `json:"duration_us"`
	CreatedAt  time.Time `json:"created_at"`
}

// Filter selects entries; zero fields match all.
type Filter struct {
	CompanyID int64
	APIKeyID  int64
	Status    int
	Since     time.Time
	Limit     int // 0: 100
	// The cabinet's filters: the method, a path prefix, one request id, an
	// end of the time range (exclusive), and how many newer entries to skip.
	Method     string
	PathPrefix string
	RequestID  string
	Until      time.Time
	Offset     int
}

// List returns the matching entries, newest first.
func List(ctx context.Context, db bun.IDB, f Filter) ([]Entry, error) {
	rows, err := store.ListRequestLog(ctx, db, store.RequestLogFilter(f))
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, r := range rows {
		out[i] = Entry{ID: r.ID, RequestID: r.RequestID, CompanyID: r.CompanyID, APIKeyID: r.APIKeyID, Method: r.Method,
			Path: r.Path, Status: r.Status, DurationUS: r.DurationUS, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

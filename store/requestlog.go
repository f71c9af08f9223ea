package store

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// RequestLogEntry is one API request as the organizer's request log shows it.
type RequestLogEntry struct {
	bun.BaseModel `bun:"table:request_log"`
	ID            int64     `bun:"id,pk,autoincrement" json:"id"`
	RequestID     string    `bun:"request_id" json:"request_id"`
	CompanyID     *int64    `bun:"company_id" json:"company_id,omitempty"`
	APIKeyID      *int64    `bun:"api_key_id" json:"api_key_id,omitempty"`
	Method        string    `bun:"method" json:"method"`
	Path          string    `bun:"path" json:"path"`
	Status        int       `bun:"status" json:"status"`
	DurationUS    int64     `bun:"duration_us" json:"duration_us"`
	CreatedAt     time.Time `bun:"created_at" json:"created_at"`
}

// InsertRequestLog writes a batch of entries with one COPY: every API
// request adds a row, and COPY is the cheapest way into Postgres (no SQL
// text to build or parse, no ids returned).
func InsertRequestLog(ctx context.Context, db *bun.DB, entries []RequestLogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("write %d request log entries: %w", len(entries), err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		_, err := c.Conn().CopyFrom(ctx, pgx.Identifier{"request_log"},
			[]string{"request_id", "company_id", "api_key_id", "method", "path", "status", "duration_us", "created_at"},
			pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) {
				e := &entries[i]
				return []any{e.RequestID, e.CompanyID, e.APIKeyID, e.Method, e.Path, e.Status, e.DurationUS, e.CreatedAt}, nil
			}))
		return err
	})
	if err != nil {
		return fmt.Errorf("write %d request log entries: %w", len(entries), err)
	}
	return nil
}

// RowRefused reports whether err is Postgres refusing a row's own data (a
// data exception or a broken constraint: SQLSTATE classes 22 and 23), not
// an unreachable database or a wrong statement, which no row can pass.
func RowRefused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23"))
}

// RequestLogFilter selects request log entries; zero fields match all.
type RequestLogFilter struct {
	CompanyID int64
	APIKeyID  int64
	Status    int
	Since     time.Time
	Limit     int
	// The cabinet's filters: the method, a path prefix, one request id, an
	// end of the time range (exclusive), and how many newer entries to skip.
	Method     string
	PathPrefix string
	RequestID  string
	Until      time.Time
	Offset     int
}

// ListRequestLog returns matching entries, newest first.
func ListRequestLog(ctx context.Context, db bun.IDB, f RequestLogFilter) ([]RequestLogEntry, error) {
	var out []RequestLogEntry
	q := db.NewSelect().Model(&out).OrderExpr("created_at DESC, id DESC")
	if f.CompanyID != 0 {
		q.Where("company_id = ?", f.CompanyID)
	}
	if f.APIKeyID != 0 {
		q.Where("api_key_id = ?", f.APIKeyID)
	}
	if f.Status != 0 {
		q.Where("status = ?", f.Status)
	}
	if !f.Since.IsZero() {
		q.Where("created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		q.Where("created_at < ?", f.Until)
	}
	if f.Method != "" {
		q.Where("method = ?", f.Method)
	}
	if f.PathPrefix != "" {
		q.Where("starts_with(path, ?)", f.PathPrefix)
	}
	if f.RequestID != "" {
		q.Where("request_id = ?", f.RequestID)
	}
	if f.Offset > 0 {
		q.Offset(int64(f.Offset))
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	if err := q.Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list request log: %w", err)
	}
	return out, nil
}

// DeleteRequestLogBefore removes entries older than cutoff (retention).
func DeleteRequestLogBefore(ctx context.Context, db bun.IDB, cutoff time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*RequestLogEntry)(nil)).Where("created_at < ?", cutoff).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete request log before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// MarkWorkflowsStarted records that the reservations' workflows run. A
// mark lost with a Postgres crash (the starter writes them through the
// bookkeeping pool) only makes the sweep start the workflow again, which
// Temporal refuses as a duplicate.
func MarkWorkflowsStarted(ctx context.Context, db bun.IDB, ids []string) error {
	_, err := db.NewRaw("UPDATE reservations SET workflow_started = true WHERE id = ANY(?::text[]) AND NOT workflow_started",
		pgdialect.Array(ids)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark %d reservation workflows started: %w", len(ids), err)
	}
	return nil
}

// UnstartedReservations are live holds created before cutoff whose workflow
// start was never recorded: the api that made them died before starting it.
func UnstartedReservations(ctx context.Context, db bun.IDB, cutoff time.Time, limit int) ([]Reservation, error) {
	var rs []Reservation
	err := db.NewSelect().Model(&rs).
		Where("status = 'reserved' AND NOT workflow_started AND created_at < ?", cutoff).
		Order("created_at").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("find reservations without a workflow: %w", err)
	}
	return rs, nil
}

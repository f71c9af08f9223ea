package checkin

// The cabinet's download of an event's scans. The SQL is the store's.

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// ExportCheckInRow is one scan at an event's doors; CheckInExportFilter
// selects an event's scans of one environment (with the buyers or not).
type (
	ExportCheckInRow    = store.ExportCheckInRow
	CheckInExportFilter = store.CheckInExportFilter
)

// EachExportCheckIn calls fn with every scan of the event f selects, in
// the order they were recorded.
func EachExportCheckIn(ctx context.Context, db bun.IDB, f CheckInExportFilter, fn func(ExportCheckInRow) error) error {
	return store.EachExportCheckIn(ctx, db, f, fn)
}

package organizer

// The cabinet's downloads of orders and of their tickets (attendees): the
// rows the order list's search and filters select, every one of them, read
// a batch at a time. The SQL is the store's.

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// ExportOrderRow is one order of the orders export; ExportTicketRow one
// ticket of the attendees export.
type (
	ExportOrderRow  = store.ExportOrderRow
	ExportTicketRow = store.ExportTicketRow
)

// EachExportOrder calls fn with every order of the company f selects (its
// cursors and limit aside), newest first, as the list pages them.
func EachExportOrder(ctx context.Context, db bun.IDB, f Filter, fn func(ExportOrderRow) error) error {
	return store.EachExportOrder(ctx, db, f, fn)
}

// EachExportTicket calls fn with every position of every order f selects,
// with its order: the orders newest first, each one's positions in order.
func EachExportTicket(ctx context.Context, db bun.IDB, f Filter, fn func(ExportOrderRow, ExportTicketRow) error) error {
	return store.EachExportTicket(ctx, db, f, fn)
}

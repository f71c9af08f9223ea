package checkin

// The cabinet's door desk: a ticket found by its barcode, number or
// holder's name, an admission undone by hand, the refused scans, and the
// sessions of a scheduled event. A manual admission is Admit. The SQL is
// the store's.

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// DeskTicket is a ticket as the desk shows it; DeskSearch what its search
// box looks for; Undo an admission undone at the desk; RefusedScan a scan
// the door refused; EventSession one of an event's sessions.
type (
	DeskTicket   = store.DeskTicket
	DeskSearch   = store.DeskSearch
	Undo         = store.Undo
	RefusedScan  = store.RefusedScan
	EventSession = store.EventSession
)

// MinSearch is the shortest text the desk searches.
const MinSearch = store.MinSearch

// Errors of an undo: the ticket is of another session than the desk's
// (ErrOtherSession), or not inside now (ErrNotAdmitted); nothing was
// undone.
var (
	ErrOtherSession = store.ErrOtherSession
	ErrNotAdmitted  = store.ErrNotAdmitted
)

// ParseDeskSearch reads the desk's search text as the order search does,
// keeping what names a ticket or its holder.
func ParseDeskSearch(q string) DeskSearch { return store.ParseDeskSearch(q) }

// FindDeskTickets finds up to limit of the company's tickets s names (the
// desk works at eventID in the environment isTest); one of the other
// environment comes without its holder's name.
func FindDeskTickets(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, s DeskSearch, limit int) ([]DeskTicket, error) {
	return store.FindDeskTickets(ctx, db, companyID, isTest, eventID, s, limit)
}

// UndoCheckIn undoes the ticket's current admission, recorded with the
// user and reason (store.UndoCheckIn: of two racing undos one wins), and
// returns the undo's id.
func UndoCheckIn(ctx context.Context, db bun.IDB, u Undo) (int64, error) {
	return store.UndoCheckIn(ctx, db, u)
}

// ListRefusedScans returns a page (from 1) of the refused scans of the
// company's event in one environment, newest first, of one outcome or all
// (""), and how many there are.
func ListRefusedScans(ctx context.Context, db bun.IDB, companyID int64, isTest bool, eventID int64, outcome states.ScanOutcome,
	page, perPage int) ([]RefusedScan, int, error) {
	return store.ListRefusedScans(ctx, db, companyID, isTest, eventID, outcome, page, perPage)
}

// ListEventSessions lists the event's sessions, soonest first.
func ListEventSessions(ctx context.Context, db bun.IDB, eventID int64) ([]EventSession, error) {
	return store.ListEventSessions(ctx, db, eventID)
}

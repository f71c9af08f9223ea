package organizer

// The company's audit log as the cabinet reads it, and who a signed-in
// user's changes are recorded as. The rows and their SQL are the store's.

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// AuditActions are the actions the log records, in the filter's order.
var AuditActions = store.AuditActions

// AuditEntry is one row of the log; AuditFilter picks the rows of a page.
type (
	AuditEntry  = store.AuditEntry
	AuditFilter = store.AuditFilter
)

// AuditPerson is someone who may appear in the log's actor filter: a
// cabinet user of the company (id and e-mail).
type AuditPerson = store.CabinetUser

// ListAudit returns the company's rows f picks, newest first.
func ListAudit(ctx context.Context, db bun.IDB, f AuditFilter) ([]AuditEntry, error) {
	return store.ListAudit(ctx, db, f)
}

// AuditPeople lists the company's cabinet users for the log's filter, by
// e-mail.
func AuditPeople(ctx context.Context, db bun.IDB, companyID int64) ([]AuditPerson, error) {
	return store.AuditPeople(ctx, db, companyID)
}

// AsUser makes u the actor of every change made with ctx: the audit log
// records it as theirs (by id, labelled with their e-mail).
func AsUser(ctx context.Context, u *User) context.Context {
	return store.WithActor(ctx, store.Actor{Kind: store.ActorUser, UserID: u.ID, Label: u.Email})
}

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

// auditWords are the actions as the cabinet says them; the page keeps the
// code beside the words for support and for the log's readers who grep.
var auditWords = map[string]string{
	store.AuditKeyCreate: "API key created", store.AuditKeyRevoke: "API key revoked",
	store.AuditOrderRefund: "Refund", store.AuditOrderCancel: "Order cancelled", store.AuditOrderResend: "Tickets sent again",
	store.AuditOrderEmail: "Buyer's e-mail corrected", store.AuditOrderNote: "Note on an order",
	store.AuditTeamInvite: "Member invited", store.AuditTeamReinvite: "Invitation sent again", store.AuditTeamRole: "Role changed",
	store.AuditTeamRemove: "Member removed", store.AuditTeamLeave: "Member left", store.AuditTeamPolicy: "Two-factor policy changed",
	store.AuditWebhookCreate: "Webhook endpoint added", store.AuditWebhookEdit: "Webhook endpoint edited",
	store.AuditWebhookDisable: "Webhook endpoint disabled", store.AuditWebhookEnable: "Webhook endpoint enabled",
	store.AuditWebhookRotate: "Webhook secret rotated", store.AuditWebhookDelete: "Webhook endpoint deleted",
	store.AuditCatalogUpload: "Catalog uploaded", store.AuditChannelSave: "Sales channel saved",
	store.AuditChannelApp: "Application moved between channels", store.AuditChannelSale: "General sale window set",
	store.AuditChannelTerms: "Channel terms set", store.AuditChannelAllocate: "Seats allocated", store.AuditChannelQuota: "Quota set",
	store.AuditChannelRelease: "Allocation released", store.AuditCompanyZone: "Company time zone changed",
	store.AuditSignIn: "Signed in", store.AuditSignInFailed: "Sign-in failed", store.AuditTwoFactorEnrol: "Two-factor turned on",
	store.AuditTwoFactorDisable: "Two-factor turned off", store.AuditTwoFactorReset: "Two-factor reset by the owner",
	store.AuditTwoFactorFailed: "Two-factor code refused", store.AuditTwoFactorRecover: "Recovery code used",
	store.AuditDoorAdmit: "Admitted by hand at the door desk", store.AuditDoorUndo: "Admission undone at the door desk",
	store.AuditDoorReplaceKey: "Scanner key replaced",
}

// AuditWord is an action in words (an unknown one as its code).
func AuditWord(action string) string {
	if w, ok := auditWords[action]; ok {
		return w
	}
	return action
}

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

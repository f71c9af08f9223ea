package store

// The company's audit log (docs/cabinet.md, "Audit log"). Who acted comes
// from the request's context (WithActor: the cabinet's signed-in user, the
// API key of a partner's request, ticketctl); what was done is written by
// the store function that does it, with Audit, in the change's own
// transaction: a change never commits without its row.

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"
)

// Actor kinds of an audit row.
const (
	ActorUser      = "user"
	ActorKey       = "key"
	ActorTicketctl = "ticketctl"
	ActorSystem    = "system"
)

// Actor is who acts: a cabinet user, an API key, ticketctl, or the system
// (nothing in the context said).
type Actor struct {
	Kind   string // ActorUser, ActorKey, ActorTicketctl, ActorSystem
	UserID int64  // a cabinet user's id (ActorUser)
	KeyID  int64  // an API key's id (ActorKey)
	// Label names the actor as the log shows it: a user's e-mail, a key's
	// prefix and name.
	Label string
}

type actorKey struct{}

// WithActor makes a the actor of every change made with ctx (the cabinet
// does it for each signed-in request, the API for a key's).
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorOf is the actor WithActor put in ctx, or the system.
func ActorOf(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok && a.Kind != "" {
		return a
	}
	return Actor{Kind: ActorSystem, Label: "system"}
}

// Audit actions: "area.verb". The page offers them as its filter.
const (
	AuditKeyCreate        = "key.create"
	AuditKeyRevoke        = "key.revoke"
	AuditOrderRefund      = "order.refund"
	AuditOrderCancel      = "order.cancel"
	AuditOrderResend      = "order.resend"
	AuditOrderEmail       = "order.email"
	AuditOrderNote        = "order.note"
	AuditTeamInvite       = "team.invite"
	AuditTeamReinvite     = "team.reinvite"
	AuditTeamRole         = "team.role"
	AuditTeamRemove       = "team.remove"
	AuditTeamLeave        = "team.leave"
	AuditTeamPolicy       = "team.two_factor_policy"
	AuditWebhookCreate    = "webhook.create"
	AuditWebhookEdit      = "webhook.edit"
	AuditWebhookDisable   = "webhook.disable"
	AuditWebhookEnable    = "webhook.enable"
	AuditWebhookRotate    = "webhook.rotate_secret"
	AuditWebhookDelete    = "webhook.delete"
	AuditCatalogUpload    = "catalog.upload"
	AuditChannelSave      = "channel.save"
	AuditChannelApp       = "channel.application"
	AuditChannelSale      = "channel.general_sale"
	AuditChannelTerms     = "channel.terms"
	AuditChannelAllocate  = "channel.allocate"
	AuditChannelQuota     = "channel.quota"
	AuditChannelRelease   = "channel.release"
	AuditCompanyZone      = "company.timezone"
	AuditSignIn           = "signin.ok"
	AuditSignInFailed     = "signin.failed"
	AuditTwoFactorEnrol   = "two_factor.enrol"
	AuditTwoFactorDisable = "two_factor.disable"
	AuditTwoFactorReset   = "two_factor.reset"
	AuditTwoFactorFailed  = "two_factor.failed"
	AuditTwoFactorRecover = "two_factor.recovery_code"
	AuditDoorAdmit        = "door.admit"
	AuditDoorUndo         = "door.undo"
	AuditDoorReplaceKey   = "door.replace_key"
)

// AuditActions lists the actions, in the page's order.
var AuditActions = []string{AuditKeyCreate, AuditKeyRevoke, AuditOrderRefund, AuditOrderCancel, AuditOrderResend, AuditOrderEmail,
	AuditOrderNote, AuditTeamInvite, AuditTeamReinvite, AuditTeamRole, AuditTeamRemove, AuditTeamLeave, AuditTeamPolicy,
	AuditWebhookCreate, AuditWebhookEdit, AuditWebhookDisable, AuditWebhookEnable, AuditWebhookRotate, AuditWebhookDelete, AuditCatalogUpload,
	AuditChannelSave, AuditChannelApp, AuditChannelSale, AuditChannelTerms, AuditChannelAllocate, AuditChannelQuota,
	AuditChannelRelease, AuditCompanyZone, AuditSignIn, AuditSignInFailed, AuditTwoFactorEnrol, AuditTwoFactorDisable,
	AuditTwoFactorReset, AuditTwoFactorFailed, AuditTwoFactorRecover, AuditDoorAdmit, AuditDoorUndo, AuditDoorReplaceKey}

// AuditEntry is one row of the company's audit log.
type AuditEntry struct {
	bun.BaseModel `bun:"table:audit_log"`
	ID            int64     `bun:"id,pk,autoincrement"`
	CompanyID     int64     `bun:"company_id"`
	At            time.Time `bun:"at,nullzero,default:now()"`
	// The actor: left empty, Audit takes the context's (ActorOf).
	ActorKind   string `bun:"actor_kind"`
	ActorUserID *int64 `bun:"actor_user_id"`
	ActorKeyID  *int64 `bun:"actor_key_id"`
	Actor       string `bun:"actor"`
	// Action is one of the Audit* constants; Subject names what it was
	// done to ("order 12", "key tk_live_ab12 (Box office)"); Detail holds
	// the rest (never a secret, a password or a token).
	Action  string         `bun:"action"`
	Subject string         `bun:"subject"`
	Detail  map[string]any `bun:"detail,type:jsonb"`
}

// Audit writes e to the company's audit log through db: pass the
// change's transaction, so the row commits with the change or not at all.
// The actor is e's own if it names one, else the context's (WithActor);
// At is the database's now() unless set.
func Audit(ctx context.Context, db bun.IDB, e AuditEntry) error {
	if e.ActorKind == "" {
		a := ActorOf(ctx)
		e.ActorKind, e.Actor = a.Kind, a.Label
		switch a.Kind {
		case ActorUser:
			e.ActorUserID = &a.UserID
		case ActorKey:
			e.ActorKeyID = &a.KeyID
		}
	}
	if e.Actor == "" {
		e.Actor = e.ActorKind
	}
	e.Actor, e.Subject = clip(e.Actor, 300), clip(e.Subject, 500)
	if e.Detail == nil {
		e.Detail = map[string]any{}
	}
	if _, err := db.NewInsert().Model(&e).ExcludeColumn("id").Exec(ctx); err != nil {
		return fmt.Errorf("audit %s of company %d: %w", e.Action, e.CompanyID, err)
	}
	return nil
}

// clip cuts s to n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// audited runs change and the audit row it makes in one transaction: db's
// own if db is one already, else a new one. An entry with no action
// records nothing (the change did nothing worth a row).
func audited(ctx context.Context, db bun.IDB, change func(tx bun.IDB) (AuditEntry, error)) error {
	run := func(ctx context.Context, tx bun.IDB) error {
		e, err := change(tx)
		if err != nil || e.Action == "" {
			return err
		}
		return Audit(ctx, tx, e)
	}
	if tx, ok := db.(bun.Tx); ok {
		return run(ctx, tx)
	}
	if tx, ok := db.(*bun.Tx); ok {
		return run(ctx, tx)
	}
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error { return run(ctx, tx) })
}

// AuditFilter picks rows of the audit page.
type AuditFilter struct {
	CompanyID int64
	Action    string // "": every action
	UserID    int64  // 0: everyone
	// Before: rows older than this id (0: the newest); Limit rows at most.
	Before int64
	Limit  int
}

// ListAudit returns the company's rows, newest first.
func ListAudit(ctx context.Context, db bun.IDB, f AuditFilter) ([]AuditEntry, error) {
	var out []AuditEntry
	q := db.NewSelect().Model(&out).Where("company_id = ?", f.CompanyID)
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.UserID != 0 {
		q = q.Where("actor_user_id = ?", f.UserID)
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	if err := q.OrderExpr("id DESC").Limit(int64(f.Limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("audit log of company %d: %w", f.CompanyID, err)
	}
	return out, nil
}

// AuditPeople lists who acted in the company's log (cabinet users), for
// the page's filter: id and e-mail, by e-mail.
func AuditPeople(ctx context.Context, db bun.IDB, companyID int64) ([]CabinetUser, error) {
	var out []CabinetUser
	if err := db.NewSelect().Model(&out).Where("company_id = ?", companyID).OrderExpr("email, id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("audit people of company %d: %w", companyID, err)
	}
	return out, nil
}

// auditSubject joins non-empty parts with spaces.
func auditSubject(parts ...string) string {
	var b []string
	for _, p := range parts {
		if p != "" {
			b = append(b, p)
		}
	}
	return strings.Join(b, " ")
}

package store

// The cabinet's second factor (organizer's two_factor.go; docs/cabinet.md,
// "Two-factor sign-in"): a person's sealed TOTP secret, its recovery
// codes, and the company's policy. Every change writes its audit rows in
// its own transaction: one per company the person may sign in to (the
// authenticator is the person's, each of those companies sees it).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// TwoFactor is a person's authenticator.
type TwoFactor struct {
	bun.BaseModel `bun:"table:cabinet_two_factor"`
	Email         string     `bun:"email,pk"`
	SealedSecret  []byte     `bun:"sealed_secret"`
	ConfirmedAt   *time.Time `bun:"confirmed_at"`
	LastStep      int64      `bun:"last_step"`
	CreatedAt     time.Time  `bun:"created_at,nullzero,default:now()"`
}

// GetTwoFactor returns the person's authenticator, confirmed or not
// (errs.NotFound: none).
func GetTwoFactor(ctx context.Context, db bun.IDB, email string) (*TwoFactor, error) {
	tf := new(TwoFactor)
	if err := db.NewSelect().Model(tf).Where("email = ?", email).Scan(ctx); err != nil {
		return nil, notFound(err, "two-factor of a cabinet person")
	}
	return tf, nil
}

// TwoFactorState is what the cabinet checks on each request: whether the
// person has a confirmed authenticator and whether the company requires
// one (of owners and finance).
func TwoFactorState(ctx context.Context, db bun.IDB, email string, companyID int64) (enrolled, required bool, err error) {
	err = db.NewRaw(`SELECT EXISTS (SELECT 1 FROM cabinet_two_factor WHERE email = ? AND confirmed_at IS NOT NULL),
		coalesce((SELECT two_factor_required FROM companies WHERE id = ?), false)`, email, companyID).Scan(ctx, &enrolled, &required)
	if err != nil {
		return false, false, fmt.Errorf("two-factor state: %w", err)
	}
	return enrolled, required, nil
}

// TwoFactorRequiredOfPerson reports whether a company the person may sign
// in to (a membership joined and not removed) requires a second factor of
// the person's role there (one of roles): the authenticator is the
// person's, so turning it off in one company drops it in all.
func TwoFactorRequiredOfPerson(ctx context.Context, db bun.IDB, email string, roles []string) (bool, error) {
	var required bool
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM cabinet_users u JOIN companies c ON c.id = u.company_id
		WHERE u.email = ? AND u.joined_at IS NOT NULL AND u.disabled_at IS NULL AND u.role IN (?) AND c.two_factor_required)`,
		email, bun.In(roles)).Scan(ctx, &required)
	if err != nil {
		return false, fmt.Errorf("two-factor policy of a person's companies: %w", err)
	}
	return required, nil
}

// ErrTwoFactorOn: the person's authenticator is confirmed already; begin
// again only after turning it off.
var ErrTwoFactorOn = errors.New("two-factor sign-in is on already")

// BeginTwoFactor stores a new, unconfirmed sealed secret for the person,
// replacing an unconfirmed one (a page opened again); a confirmed one
// stays (ErrTwoFactorOn).
func BeginTwoFactor(ctx context.Context, db bun.IDB, email string, sealed []byte) error {
	res, err := db.NewRaw(`INSERT INTO cabinet_two_factor (email, sealed_secret) VALUES (?, ?)
		ON CONFLICT (email) DO UPDATE SET sealed_secret = excluded.sealed_secret, last_step = 0, created_at = now()
		WHERE cabinet_two_factor.confirmed_at IS NULL`, email, sealed).Exec(ctx)
	if err != nil {
		return fmt.Errorf("begin two-factor: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrTwoFactorOn
	}
	return nil
}

// ErrStepUsed: a code of this time step (or a later one) was accepted
// already: a replayed code.
var ErrStepUsed = errors.New("two-factor code used already")

// ConfirmTwoFactor turns the person's unconfirmed authenticator on, its
// code's step spent (step), and stores the recovery codes' hashes, in one
// transaction with the audit rows: errs.NotFound when there is nothing
// unconfirmed (confirmed meanwhile, or never begun) or its secret is no
// longer sealed (the one the code was checked against: replaced
// meanwhile, by the page opened again).
//
// The person's sessions end, in every company, but the confirming one's
// (userID at sessionVersion; ErrSessionMoved if it moved on meanwhile):
// it returns the session version that session takes to stay, as a new
// password does.
func ConfirmTwoFactor(ctx context.Context, db *bun.DB, email string, userID int64, sessionVersion int, sealed []byte, step int64,
	codeHashes [][]byte, now time.Time) (newVersion int, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`UPDATE cabinet_two_factor SET confirmed_at = ?, last_step = ?
			WHERE email = ? AND confirmed_at IS NULL AND sealed_secret = ?`,
			now, step, email, sealed).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("unconfirmed two-factor of %s: %w", email, errs.NotFound)
		}
		if err := storeRecoveryCodes(ctx, tx, email, codeHashes); err != nil {
			return err
		}
		if newVersion, err = endOtherSessions(ctx, tx, email, userID, sessionVersion, now); err != nil {
			return err
		}
		return auditPerson(ctx, tx, email, AuditTwoFactorEnrol, map[string]any{"recovery_codes": len(codeHashes)})
	})
	return newVersion, err
}

// ErrSessionMoved: the acting session's version moved on meanwhile (a new
// password, a reset): it is signed out, and changes nothing.
var ErrSessionMoved = errors.New("the session ended meanwhile")

// endOtherSessions ends every session of the person, in every company
// (a new session version for each membership), and returns the version
// the acting membership's session (userID, holding sessionVersion) takes
// to stay; ErrSessionMoved when that session ended already.
func endOtherSessions(ctx context.Context, tx bun.IDB, email string, userID int64, sessionVersion int, now time.Time) (int, error) {
	var current int
	if err := tx.NewRaw("SELECT session_version FROM cabinet_users WHERE id = ? AND email = ? FOR NO KEY UPDATE", userID, email).
		Scan(ctx, &current); err != nil {
		return 0, notFound(err, fmt.Sprintf("cabinet user %d", userID))
	}
	if current != sessionVersion {
		return 0, fmt.Errorf("cabinet user %d of session version %d: %w", userID, sessionVersion, ErrSessionMoved)
	}
	if _, err := tx.NewRaw("UPDATE cabinet_users SET session_version = session_version + 1, updated_at = ? WHERE email = ?",
		now, email).Exec(ctx); err != nil {
		return 0, err
	}
	return current + 1, nil
}

func storeRecoveryCodes(ctx context.Context, tx bun.IDB, email string, hashes [][]byte) error {
	if _, err := tx.NewRaw("DELETE FROM cabinet_recovery_codes WHERE email = ?", email).Exec(ctx); err != nil {
		return err
	}
	for _, h := range hashes {
		if _, err := tx.NewRaw("INSERT INTO cabinet_recovery_codes (email, code_hash) VALUES (?, ?)", email, h).Exec(ctx); err != nil {
			return err
		}
	}
	return nil
}

// SpendTwoFactorStep accepts a code of the person's confirmed
// authenticator for step: one statement, so of two uses of a code (or of
// any older one) only the first passes (ErrStepUsed). For sign-ins the
// caller records the sign-in itself.
func SpendTwoFactorStep(ctx context.Context, db bun.IDB, email string, step int64) error {
	res, err := db.NewRaw(`UPDATE cabinet_two_factor SET last_step = ? WHERE email = ? AND confirmed_at IS NOT NULL AND last_step < ?`,
		step, email, step).Exec(ctx)
	if err != nil {
		return fmt.Errorf("spend a two-factor code: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrStepUsed
	}
	return nil
}

// SpendRecoveryCode spends one unused recovery code of the person (by
// its hashes: one per configured secret, any may be the stored one), with
// its audit rows, in one transaction: errs.NotFound if it is not one, or
// used. It returns how many are left.
func SpendRecoveryCode(ctx context.Context, db *bun.DB, email string, hashes [][]byte, now time.Time) (left int, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`UPDATE cabinet_recovery_codes SET used_at = ? WHERE email = ? AND code_hash IN (?) AND used_at IS NULL`,
			now, email, bun.In(hashes)).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("recovery code: %w", errs.NotFound)
		}
		if err := tx.NewRaw("SELECT count(*) FROM cabinet_recovery_codes WHERE email = ? AND used_at IS NULL", email).Scan(ctx, &left); err != nil {
			return err
		}
		return auditPerson(ctx, tx, email, AuditTwoFactorRecover, map[string]any{"left": left})
	})
	return left, err
}

// DisableTwoFactor is the person's turning off of their authenticator:
// removed, with its recovery codes and its audit rows (two_factor.disable),
// in one transaction; errs.NotFound when there is none. Every session of
// the person ends but the acting one (userID at sessionVersion, see
// endOtherSessions), whose new version it returns. An enrolment never
// confirmed is dropped without a row and ends nothing: nothing was on
// (newVersion is sessionVersion).
func DisableTwoFactor(ctx context.Context, db *bun.DB, email string, userID int64, sessionVersion int, now time.Time) (newVersion int, err error) {
	newVersion = sessionVersion
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var confirmed []bool
		if err := tx.NewRaw("DELETE FROM cabinet_two_factor WHERE email = ? RETURNING confirmed_at IS NOT NULL", email).
			Scan(ctx, &confirmed); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if len(confirmed) == 0 {
			return fmt.Errorf("two-factor of %s: %w", email, errs.NotFound)
		}
		if !confirmed[0] {
			return nil
		}
		if newVersion, err = endOtherSessions(ctx, tx, email, userID, sessionVersion, now); err != nil {
			return err
		}
		return auditPerson(ctx, tx, email, AuditTwoFactorDisable, nil)
	})
	return newVersion, err
}

// ErrOtherTeams: the member is in other companies' teams too; one owner
// does not reset the authenticator that guards the others.
var ErrOtherTeams = errors.New("the person is in other teams")

// ErrResetSelf: an owner resets only another member's authenticator; a
// person turns their own off with one of its codes.
var ErrResetSelf = errors.New("one's own authenticator is turned off with a code, not reset")

// ResetMemberTwoFactor is an owner's reset of a member's authenticator
// (the member lost it and its codes): the member must be the company's,
// not removed, and in no other company's team (ErrOtherTeams), else
// errs.NotFound; nor the acting user (ErrResetSelf: without a code, a
// stolen session would drop the factor that guards it). The member's
// sessions end. One transaction, audited.
func ResetMemberTwoFactor(ctx context.Context, db *bun.DB, companyID, userID int64, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if a := ActorOf(ctx); a.Kind == ActorUser && a.UserID == userID {
			return ErrResetSelf
		}
		if err := tx.NewRaw("SELECT * FROM cabinet_users WHERE id = ? AND company_id = ? AND disabled_at IS NULL FOR NO KEY UPDATE",
			userID, companyID).Scan(ctx, u); err != nil {
			return notFound(err, fmt.Sprintf("cabinet user %d", userID))
		}
		var others bool
		if err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM cabinet_users WHERE email = ? AND company_id <> ? AND disabled_at IS NULL)`,
			u.Email, companyID).Scan(ctx, &others); err != nil {
			return err
		}
		if others {
			return ErrOtherTeams
		}
		res, err := tx.NewRaw("DELETE FROM cabinet_two_factor WHERE email = ?", u.Email).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("two-factor of user %d: %w", userID, errs.NotFound)
		}
		if _, err := tx.NewRaw("UPDATE cabinet_users SET session_version = session_version + 1, updated_at = ? WHERE id = ?", now, userID).Exec(ctx); err != nil {
			return err
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditTwoFactorReset, Subject: u.Email,
			Detail: map[string]any{"user_id": u.ID, "role": u.Role}})
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// ResetPersonTwoFactor is the operator's reset of a person's
// authenticator (ticketctl user reset-two-factor): removed, with its
// recovery codes, and every session of the person ended, with a row in
// each company the person may sign in to; errs.NotFound when there is
// none. One transaction.
func ResetPersonTwoFactor(ctx context.Context, db *bun.DB, email string, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("DELETE FROM cabinet_two_factor WHERE email = ?", email).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("two-factor of %s: %w", email, errs.NotFound)
		}
		if _, err := tx.NewRaw("UPDATE cabinet_users SET session_version = session_version + 1, updated_at = ? WHERE email = ?", now, email).Exec(ctx); err != nil {
			return err
		}
		return auditPerson(ctx, tx, email, AuditTwoFactorReset, nil)
	})
}

// SetTwoFactorRequired sets the company's policy, audited.
func SetTwoFactorRequired(ctx context.Context, db bun.IDB, companyID int64, required bool) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		var from bool
		err := tx.NewRaw(`WITH old AS (SELECT two_factor_required FROM companies WHERE id = ? FOR UPDATE)
			UPDATE companies c SET two_factor_required = ? FROM old WHERE c.id = ? RETURNING old.two_factor_required`,
			companyID, required, companyID).Scan(ctx, &from)
		if errors.Is(err, sql.ErrNoRows) {
			return AuditEntry{}, fmt.Errorf("company %d: %w", companyID, errs.NotFound)
		}
		if err != nil || from == required {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditTeamPolicy, Subject: "two-factor sign-in for owner and finance",
			Detail: map[string]any{"required": required}}, nil
	})
}

// auditPerson writes a row of the person's own (actor: each membership)
// in the log of every company the person may sign in to: one statement.
func auditPerson(ctx context.Context, tx bun.IDB, email, action string, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	if a := ActorOf(ctx); a.Kind != ActorSystem {
		// Who did it (the person, or the operator's reset); the row's
		// actor is the membership whose authenticator it is.
		detail["by"] = a.Label
	}
	b, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = tx.NewRaw(`INSERT INTO audit_log (company_id, actor_kind, actor_user_id, actor, action, subject, detail)
		SELECT company_id, 'user', id, email, ?, email, ?::jsonb FROM cabinet_users
		WHERE email = ? AND joined_at IS NOT NULL AND disabled_at IS NULL`, action, string(b), email).Exec(ctx)
	if err != nil {
		return fmt.Errorf("audit %s of a person: %w", action, err)
	}
	return nil
}

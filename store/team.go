package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// Errors of changing a company's team.
var (
	// ErrLastOwner: the change would leave the company without an active
	// owner (one who has set a password and is not disabled).
	ErrLastOwner = errors.New("the company's last active owner cannot leave, be removed or stop being an owner")
	// ErrAlreadyMember: the e-mail is already a user of the company.
	ErrAlreadyMember = errors.New("the e-mail is already in the team")
	// ErrNotInvited: the user has joined or is disabled, so there is no
	// invitation to send again.
	ErrNotInvited = errors.New("the user has no pending invitation")
	// ErrRemoved: the user was removed from the team (disabled).
	ErrRemoved = errors.New("the user is no longer in the team")
)

// TeamMember is a cabinet user as the company's team page lists one.
type TeamMember struct {
	ID         int64      `bun:"id"`
	Email      string     `bun:"email"`
	Role       string     `bun:"role"`
	Joined     bool       `bun:"joined"`
	DisabledAt *time.Time `bun:"disabled_at"`
	CreatedAt  time.Time  `bun:"created_at"`
	// LastSignInAt is the latest session begun as this membership, or
	// nil: never the person's sign-ins to another company.
	LastSignInAt *time.Time `bun:"last_sign_in_at"`
	// LinkExpiresAt is when the user's unused, unexpired link stops
	// working (an invitation while not joined), or nil.
	LinkExpiresAt *time.Time `bun:"link_expires_at"`
	InvitedBy     *string    `bun:"invited_by"`
	// TwoFactor: the person has a confirmed authenticator.
	TwoFactor bool `bun:"two_factor"`
}

// ListTeam returns the company's cabinet users: members first, by e-mail,
// then the removed ones.
func ListTeam(ctx context.Context, db bun.IDB, companyID int64, now time.Time) ([]TeamMember, error) {
	var out []TeamMember
	err := db.NewRaw(`SELECT u.id, u.email, u.role, u.joined_at IS NOT NULL AS joined, u.disabled_at, u.created_at, u.last_sign_in_at,
			(SELECT max(l.expires_at) FROM cabinet_signin_links l WHERE l.user_id = u.id AND l.used_at IS NULL AND l.expires_at > ?) AS link_expires_at,
			i.email AS invited_by,
			EXISTS (SELECT 1 FROM cabinet_two_factor tf WHERE tf.email = u.email AND tf.confirmed_at IS NOT NULL) AS two_factor
		FROM cabinet_users u LEFT JOIN cabinet_users i ON i.id = u.invited_by
		WHERE u.company_id = ?
		ORDER BY u.disabled_at IS NOT NULL, u.email`, now, companyID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list the team of company %d: %w", companyID, err)
	}
	return out, nil
}

// InviteCabinetUser adds a membership of the company for the address, not
// joined, or takes back a removed user of the company (role set, not
// joined again, a new session version), and stores a one-time link for it,
// spending its older ones, in one transaction. A member's e-mail is
// ErrAlreadyMember. Only the company's own rows decide: the statements
// are the same whether the address is a user of another company or of
// none, and another company's membership is neither read nor changed.
func InviteCabinetUser(ctx context.Context, db *bun.DB, companyID int64, email, role string, invitedBy int64,
	tokenHash []byte, expires, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := addPerson(ctx, tx, email); err != nil {
			return err
		}
		err := tx.NewRaw(`INSERT INTO cabinet_users (company_id, email, role, invited_by) VALUES (?, ?, ?, ?)
			ON CONFLICT (company_id, email) DO NOTHING RETURNING *`, companyID, email, role, invitedBy).Scan(ctx, u)
		if errors.Is(err, sql.ErrNoRows) {
			// A user of the company already: a removed one comes back,
			// to join again through the new link (the person's password
			// alone no longer lets them in here); a member stays.
			err = tx.NewRaw(`UPDATE cabinet_users SET role = ?, invited_by = ?, joined_at = NULL, disabled_at = NULL,
					session_version = session_version + 1, updated_at = ?
				WHERE email = ? AND company_id = ? AND disabled_at IS NOT NULL RETURNING *`,
				role, invitedBy, now, email, companyID).Scan(ctx, u)
			if errors.Is(err, sql.ErrNoRows) {
				return ErrAlreadyMember
			}
		}
		if err != nil {
			return err
		}
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, u.ID).Exec(ctx); err != nil {
			return err
		}
		if err := CreateSignInLink(ctx, tx, u.ID, tokenHash, expires); err != nil {
			return err
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditTeamInvite, Subject: email,
			Detail: map[string]any{"user_id": u.ID, "role": role}})
	})
	if err != nil {
		return nil, fmt.Errorf("invite %s to company %d: %w", email, companyID, err)
	}
	return u, nil
}

// ReinviteCabinetUser stores a new one-time link for a user of the company
// who has not accepted the invitation yet, spending the older ones.
func ReinviteCabinetUser(ctx context.Context, db *bun.DB, companyID, userID int64, tokenHash []byte, expires, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw("SELECT * FROM cabinet_users WHERE id = ? AND company_id = ? FOR NO KEY UPDATE", userID, companyID).Scan(ctx, u); err != nil {
			return notFound(err, fmt.Sprintf("cabinet user %d", userID))
		}
		if u.JoinedAt != nil || u.DisabledAt != nil {
			return ErrNotInvited
		}
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return err
		}
		if err := CreateSignInLink(ctx, tx, userID, tokenHash, expires); err != nil {
			return err
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditTeamReinvite, Subject: u.Email,
			Detail: map[string]any{"user_id": u.ID, "role": u.Role}})
	})
	if err != nil {
		return nil, fmt.Errorf("invite user %d again: %w", userID, err)
	}
	return u, nil
}

// teamChange runs change on a user of the company in a transaction that
// holds the company's row: team changes of one company run one at a time,
// so two owners demoting each other at once cannot both see the other as
// the owner who stays. If the user is an active owner (joined, not
// removed) and would no longer be one (keepsOwner false), another active
// owner must remain (ErrLastOwner). A user of another company is
// errs.NotFound.
func teamChange(ctx context.Context, db *bun.DB, companyID, userID int64, keepsOwner func(u *CabinetUser) bool,
	change func(ctx context.Context, tx bun.Tx, u *CabinetUser) error) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// NO KEY UPDATE: conflicts with itself, not with the key-share
		// locks of rows inserted referencing the company (orders, keys).
		var id int64
		if err := tx.NewRaw("SELECT id FROM companies WHERE id = ? FOR NO KEY UPDATE", companyID).Scan(ctx, &id); err != nil {
			return notFound(err, fmt.Sprintf("company %d", companyID))
		}
		if err := tx.NewRaw("SELECT * FROM cabinet_users WHERE id = ? AND company_id = ?", userID, companyID).Scan(ctx, u); err != nil {
			return notFound(err, fmt.Sprintf("cabinet user %d", userID))
		}
		activeOwner := u.Role == "owner" && u.DisabledAt == nil && u.JoinedAt != nil
		if activeOwner && !keepsOwner(u) {
			var others int
			if err := tx.NewRaw(`SELECT count(*) FROM cabinet_users WHERE company_id = ? AND id <> ? AND role = 'owner'
				AND disabled_at IS NULL AND joined_at IS NOT NULL`, companyID, userID).Scan(ctx, &others); err != nil {
				return err
			}
			if others == 0 {
				return ErrLastOwner
			}
		}
		return change(ctx, tx, u)
	})
	if err != nil {
		return nil, fmt.Errorf("change the team of company %d: %w", companyID, err)
	}
	return u, nil
}

// ChangeCabinetRole gives a member of the company another role; the
// company's last active owner keeps being one (ErrLastOwner). The role
// counts from the user's next request.
func ChangeCabinetRole(ctx context.Context, db *bun.DB, companyID, userID int64, role string, now time.Time) (*CabinetUser, error) {
	return teamChange(ctx, db, companyID, userID, func(*CabinetUser) bool { return role == "owner" },
		func(ctx context.Context, tx bun.Tx, u *CabinetUser) error {
			if u.DisabledAt != nil {
				return ErrRemoved
			}
			from := u.Role
			if err := tx.NewRaw("UPDATE cabinet_users SET role = ?, updated_at = ? WHERE id = ? RETURNING *", role, now, u.ID).Scan(ctx, u); err != nil {
				return err
			}
			return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditTeamRole, Subject: u.Email,
				Detail: map[string]any{"user_id": u.ID, "from": from, "to": role}})
		})
}

// RemoveCabinetUser takes a user out of the company's team: the user is
// disabled, the user's sessions end (a new session version) and links are
// spent; the company's last active owner stays (ErrLastOwner). Removing a
// removed user changes nothing.
func RemoveCabinetUser(ctx context.Context, db *bun.DB, companyID, userID int64, now time.Time) (*CabinetUser, error) {
	return teamChange(ctx, db, companyID, userID, func(*CabinetUser) bool { return false },
		func(ctx context.Context, tx bun.Tx, u *CabinetUser) error {
			if u.DisabledAt != nil {
				return nil
			}
			if err := tx.NewRaw(`UPDATE cabinet_users SET disabled_at = ?, session_version = session_version + 1, updated_at = ?
				WHERE id = ? RETURNING *`, now, now, u.ID).Scan(ctx, u); err != nil {
				return err
			}
			if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL", now, u.ID).Exec(ctx); err != nil {
				return err
			}
			return auditRemoval(ctx, tx, u)
		})
}

// ChangeCabinetPassword stores the person's new password hash if the
// membership userID's session version is still sessionVersion (the
// password did not change and the user was not removed meanwhile), ends
// the person's sessions in every company (newPassword) and spends the
// person's lost-password links (spendPersonLinks). The membership
// returned holds the session version the current session takes to stay.
// Locks as UseSignInLink does (lockPerson): person, membership, links.
func ChangeCabinetPassword(ctx context.Context, db *bun.DB, userID int64, sessionVersion int, passwordHash string, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var email string
		if err := tx.NewRaw("SELECT email FROM cabinet_users WHERE id = ?", userID).Scan(ctx, &email); err != nil {
			return notFound(err, fmt.Sprintf("cabinet user %d", userID))
		}
		if _, _, err := lockPerson(ctx, tx, email, userID); err != nil {
			return err
		}
		// Checked once locked: a password set meanwhile moved it.
		var current int
		if err := tx.NewRaw("SELECT session_version FROM cabinet_users WHERE id = ?", userID).Scan(ctx, &current); err != nil {
			return err
		}
		if current != sessionVersion {
			return fmt.Errorf("cabinet user %d of session version %d: %w", userID, sessionVersion, errs.NotFound)
		}
		if err := newPassword(ctx, tx, email, passwordHash, now); err != nil {
			return err
		}
		if err := spendPersonLinks(ctx, tx, email, userID, now); err != nil {
			return err
		}
		return tx.NewRaw("SELECT * FROM cabinet_users WHERE id = ?", userID).Scan(ctx, u)
	})
	if err != nil {
		return nil, fmt.Errorf("change the password of user %d: %w", userID, err)
	}
	return u, nil
}

// GetCompanyName returns a company's name.
func GetCompanyName(ctx context.Context, db bun.IDB, companyID int64) (string, error) {
	var name string
	if err := db.NewRaw("SELECT name FROM companies WHERE id = ?", companyID).Scan(ctx, &name); err != nil {
		return "", notFound(err, fmt.Sprintf("company %d", companyID))
	}
	return name, nil
}

// auditRemoval records a member's removal: leaving, when the actor is the
// member.
func auditRemoval(ctx context.Context, tx bun.IDB, u *CabinetUser) error {
	action := AuditTeamRemove
	if a := ActorOf(ctx); a.Kind == ActorUser && a.UserID == u.ID {
		action = AuditTeamLeave
	}
	return Audit(ctx, tx, AuditEntry{CompanyID: u.CompanyID, Action: action, Subject: u.Email,
		Detail: map[string]any{"user_id": u.ID, "role": u.Role}})
}

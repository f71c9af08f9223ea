package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// CabinetUser is an organizer's person who signs in to the cabinet.
type CabinetUser struct {
	bun.BaseModel `bun:"table:cabinet_users"`
	ID            int64  `bun:"id,pk,autoincrement" json:"id"`
	CompanyID     int64  `bun:"company_id" json:"company_id"`
	Email         string `bun:"email" json:"email"`
	// Role decides what the user may see and do (organizer.Role).
	Role         string  `bun:"role" json:"role"`
	PasswordHash *string `bun:"password_hash" json:"-"`
	// SessionVersion is what a session must hold to stay signed in.
	SessionVersion int        `bun:"session_version,nullzero,default:1" json:"-"`
	DisabledAt     *time.Time `bun:"disabled_at" json:"disabled_at,omitempty"`
	// InvitedBy is the user who invited this one from the cabinet.
	InvitedBy *int64    `bun:"invited_by" json:"invited_by,omitempty"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt time.Time `bun:"updated_at,nullzero,default:now()" json:"-"`
}

// ErrEmailTaken: another cabinet user has that e-mail.
var ErrEmailTaken = errors.New("e-mail already has a cabinet user")

// CreateCabinetUser stores a user without a password, of an existing company.
func CreateCabinetUser(ctx context.Context, db bun.IDB, companyID int64, email, role string) (*CabinetUser, error) {
	var exists bool
	if err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM companies WHERE id = ?)", companyID).Scan(ctx, &exists); err != nil {
		return nil, fmt.Errorf("create cabinet user: %w", err)
	}
	if !exists {
		return nil, fmt.Errorf("create cabinet user: company %d: %w", companyID, errs.NotFound)
	}
	u := &CabinetUser{CompanyID: companyID, Email: email, Role: role}
	if _, err := db.NewInsert().Model(u).Returning("*").Exec(ctx); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return nil, fmt.Errorf("create cabinet user %s: %w", email, ErrEmailTaken)
		}
		return nil, fmt.Errorf("create cabinet user %s: %w", email, err)
	}
	return u, nil
}

// GetCabinetUserByEmail finds a user by (lowercased) e-mail.
func GetCabinetUserByEmail(ctx context.Context, db bun.IDB, email string) (*CabinetUser, error) {
	u := new(CabinetUser)
	if err := db.NewSelect().Model(u).Where("email = ?", email).Scan(ctx); err != nil {
		return nil, notFound(err, "cabinet user")
	}
	return u, nil
}

// GetCabinetUser finds a user by id.
func GetCabinetUser(ctx context.Context, db bun.IDB, id int64) (*CabinetUser, error) {
	u := new(CabinetUser)
	if err := db.NewSelect().Model(u).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("cabinet user %d", id))
	}
	return u, nil
}

// CreateSignInLink stores the hash of a one-time sign-in token.
func CreateSignInLink(ctx context.Context, db bun.IDB, userID int64, tokenHash []byte, expires time.Time) error {
	_, err := db.NewRaw("INSERT INTO cabinet_signin_links (token_hash, user_id, expires_at) VALUES (?, ?, ?)",
		tokenHash, userID, expires).Exec(ctx)
	if err != nil {
		return fmt.Errorf("create sign-in link for user %d: %w", userID, err)
	}
	return nil
}

// NewSignInLink spends every unused link of the user and stores the hash
// of a new one, in one transaction: only the newest link works.
func NewSignInLink(ctx context.Context, db *bun.DB, userID int64, tokenHash []byte, expires, now time.Time) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return fmt.Errorf("spend the sign-in links of user %d: %w", userID, err)
		}
		return CreateSignInLink(ctx, tx, userID, tokenHash, expires)
	})
}

// SignInLinkUser returns the user of an unused, unexpired link without
// using it up (the page that sets the password shows first).
func SignInLinkUser(ctx context.Context, db bun.IDB, tokenHash []byte, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.NewRaw(`SELECT u.* FROM cabinet_signin_links l JOIN cabinet_users u ON u.id = l.user_id
		WHERE l.token_hash = ? AND l.used_at IS NULL AND l.expires_at > ? AND u.disabled_at IS NULL`, tokenHash, now).Scan(ctx, u)
	if err != nil {
		return nil, notFound(err, "sign-in link")
	}
	return u, nil
}

// UseSignInLink sets the user's password hash and spends the link and
// every other unused link of the user, in one transaction: of two submits
// of the same link only one succeeds, and no older link works after. The
// address the link was used from becomes the user's only known address.
func UseSignInLink(ctx context.Context, db *bun.DB, tokenHash []byte, passwordHash, address string, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var userID int64
		err := tx.NewRaw(`UPDATE cabinet_signin_links l SET used_at = ? FROM cabinet_users u
			WHERE l.token_hash = ? AND l.used_at IS NULL AND l.expires_at > ? AND u.id = l.user_id AND u.disabled_at IS NULL
			RETURNING l.user_id`, now, tokenHash, now).Scan(ctx, &userID)
		if err != nil {
			return notFound(err, "sign-in link")
		}
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return err
		}
		// A new password ends every session opened before it.
		if err := tx.NewRaw(`UPDATE cabinet_users SET password_hash = ?, session_version = session_version + 1, updated_at = ?
			WHERE id = ? RETURNING *`,
			passwordHash, now, userID).Scan(ctx, u); err != nil {
			return err
		}
		if _, err := tx.NewRaw("DELETE FROM cabinet_known_addresses WHERE user_id = ? AND address <> ?", userID, address).Exec(ctx); err != nil {
			return err
		}
		return RememberCabinetAddress(ctx, tx, userID, address, now)
	})
	if err != nil {
		return nil, fmt.Errorf("use sign-in link: %w", err)
	}
	return u, nil
}

// ReplacePasswordHash stores another hash of the user's same password
// (made with other costs), unless the password changed since oldHash was
// read.
func ReplacePasswordHash(ctx context.Context, db bun.IDB, userID int64, oldHash, newHash string) error {
	if _, err := db.NewRaw("UPDATE cabinet_users SET password_hash = ? WHERE id = ? AND password_hash = ?",
		newHash, userID, oldHash).Exec(ctx); err != nil {
		return fmt.Errorf("replace the password hash of user %d: %w", userID, err)
	}
	return nil
}

// RememberCabinetAddress records that the user signed in from address
// (a client address group) at now.
func RememberCabinetAddress(ctx context.Context, db bun.IDB, userID int64, address string, now time.Time) error {
	_, err := db.NewRaw(`INSERT INTO cabinet_known_addresses (user_id, address, signed_in_at) VALUES (?, ?, ?)
		ON CONFLICT (user_id, address) DO UPDATE SET signed_in_at = greatest(cabinet_known_addresses.signed_in_at, excluded.signed_in_at)`,
		userID, address, now).Exec(ctx)
	if err != nil {
		return fmt.Errorf("remember the sign-in address of user %d: %w", userID, err)
	}
	return nil
}

// KnownCabinetAddress reports whether the user with the e-mail signed in
// from address after since.
func KnownCabinetAddress(ctx context.Context, db bun.IDB, email, address string, since time.Time) (bool, error) {
	var known bool
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM cabinet_known_addresses k JOIN cabinet_users u ON u.id = k.user_id
		WHERE u.email = ? AND k.address = ? AND k.signed_in_at > ?)`, email, address, since).Scan(ctx, &known)
	if err != nil {
		return false, fmt.Errorf("known sign-in address: %w", err)
	}
	return known, nil
}

// DeleteCabinetAddressesBefore forgets the addresses no user signed in
// from since t.
func DeleteCabinetAddressesBefore(ctx context.Context, db bun.IDB, t time.Time) (int64, error) {
	res, err := db.NewRaw("DELETE FROM cabinet_known_addresses WHERE signed_in_at < ?", t).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete old sign-in addresses: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// DisableCabinetUser ends the user's sessions (a new session version),
// spends the user's links and keeps the user from signing in; the
// company's last active owner stays (ErrLastOwner), as in the cabinet.
func DisableCabinetUser(ctx context.Context, db *bun.DB, id int64, now time.Time) (*CabinetUser, error) {
	var companyID int64
	if err := db.NewRaw("SELECT company_id FROM cabinet_users WHERE id = ?", id).Scan(ctx, &companyID); err != nil {
		return nil, fmt.Errorf("disable cabinet user: %w", notFound(err, fmt.Sprintf("cabinet user %d", id)))
	}
	// The cabinet's guard (teamChange): the company keeps an active owner.
	u, err := teamChange(ctx, db, companyID, id, func(*CabinetUser) bool { return false },
		func(ctx context.Context, tx bun.Tx, u *CabinetUser) error {
			err := tx.NewRaw(`UPDATE cabinet_users SET session_version = session_version + 1, disabled_at = coalesce(disabled_at, ?),
				updated_at = ? WHERE id = ? RETURNING *`, now, now, id).Scan(ctx, u)
			if err != nil {
				return err
			}
			_, err = tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL", now, id).Exec(ctx)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("disable cabinet user: %w", err)
	}
	return u, nil
}

// DeleteExpiredCabinetSessions removes sessions past their expiry and
// spent or expired sign-in links older than a day.
func DeleteExpiredCabinetSessions(ctx context.Context, db bun.IDB, now time.Time) (int64, error) {
	res, err := db.NewRaw("DELETE FROM cabinet_sessions WHERE expiry < ?", now).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete expired cabinet sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := db.NewRaw("DELETE FROM cabinet_signin_links WHERE expires_at < ?", now.Add(-24*time.Hour)).Exec(ctx); err != nil {
		return n, fmt.Errorf("delete old sign-in links: %w", err)
	}
	return n, nil
}

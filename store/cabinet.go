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

// CabinetUser is a person's membership of one company's team: the user
// the cabinet signs in, with a role. One person (an e-mail address,
// CabinetPerson) may be a user of several companies, each its own row.
type CabinetUser struct {
	bun.BaseModel `bun:"table:cabinet_users"`
	ID            int64  `bun:"id,pk,autoincrement" json:"id"`
	CompanyID     int64  `bun:"company_id" json:"company_id"`
	Email         string `bun:"email" json:"email"`
	// Role decides what the user may see and do (organizer.Role).
	Role string `bun:"role" json:"role"`
	// SessionVersion is what a session must hold to stay signed in.
	SessionVersion int        `bun:"session_version,nullzero,default:1" json:"-"`
	DisabledAt     *time.Time `bun:"disabled_at" json:"disabled_at,omitempty"`
	// JoinedAt is when the membership's link was first used: nil, it is
	// an invitation (it neither signs in nor counts as an active owner).
	JoinedAt *time.Time `bun:"joined_at" json:"joined_at,omitempty"`
	// LastSignInAt is the latest session begun as this membership.
	LastSignInAt *time.Time `bun:"last_sign_in_at" json:"last_sign_in_at,omitempty"`
	// InvitedBy is the user who invited this one from the cabinet.
	InvitedBy *int64    `bun:"invited_by" json:"invited_by,omitempty"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
	UpdatedAt time.Time `bun:"updated_at,nullzero,default:now()" json:"-"`
}

// CabinetPerson is an e-mail address that signs in to the cabinet, with
// its one password (nil until a link of one of its memberships set it).
type CabinetPerson struct {
	bun.BaseModel `bun:"table:cabinet_people"`
	Email         string  `bun:"email,pk"`
	PasswordHash  *string `bun:"password_hash"`
}

// addPerson makes sure the address is a person; a person already there is
// left as it is, by the same statement, so the caller's path does not
// depend on whether the address is known.
func addPerson(ctx context.Context, tx bun.IDB, email string) error {
	_, err := tx.NewRaw("INSERT INTO cabinet_people (email) VALUES (?) ON CONFLICT (email) DO NOTHING", email).Exec(ctx)
	return err
}

// CreateCabinetUser makes the address a user of an existing company, not
// joined yet (its link joins). A user of the company already is
// ErrAlreadyMember; whether the address is a user elsewhere changes
// nothing.
func CreateCabinetUser(ctx context.Context, db *bun.DB, companyID int64, email, role string) (*CabinetUser, error) {
	u := &CabinetUser{CompanyID: companyID, Email: email, Role: role}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var exists bool
		if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM companies WHERE id = ?)", companyID).Scan(ctx, &exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("company %d: %w", companyID, errs.NotFound)
		}
		if err := addPerson(ctx, tx, email); err != nil {
			return err
		}
		_, err := tx.NewInsert().Model(u).Returning("*").Exec(ctx)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			return ErrAlreadyMember
		}
		if err != nil {
			return err
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditTeamInvite, Subject: email,
			Detail: map[string]any{"user_id": u.ID, "role": role}})
	})
	if err != nil {
		return nil, fmt.Errorf("create cabinet user %s: %w", email, err)
	}
	return u, nil
}

// CabinetUsersByEmail returns the address's memberships, of every
// company, oldest first (the operator's ticketctl picks one).
func CabinetUsersByEmail(ctx context.Context, db bun.IDB, email string) ([]CabinetUser, error) {
	var out []CabinetUser
	if err := db.NewSelect().Model(&out).Where("email = ?", email).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("cabinet users of an e-mail: %w", err)
	}
	return out, nil
}

// GetCabinetPerson returns the person of a (lowercased) e-mail.
func GetCabinetPerson(ctx context.Context, db bun.IDB, email string) (*CabinetPerson, error) {
	p := new(CabinetPerson)
	if err := db.NewSelect().Model(p).Where("email = ?", email).Scan(ctx); err != nil {
		return nil, notFound(err, "cabinet person")
	}
	return p, nil
}

// CabinetMembership is a membership a person may sign in as, with its
// company's name.
type CabinetMembership struct {
	CabinetUser `bun:",extend"`
	CompanyName string `bun:"company_name"`
}

// ActiveCabinetMemberships returns the memberships the person may sign in
// as (joined, not removed), the latest signed into first.
func ActiveCabinetMemberships(ctx context.Context, db bun.IDB, email string) ([]CabinetMembership, error) {
	var out []CabinetMembership
	err := db.NewRaw(`SELECT u.*, c.name AS company_name FROM cabinet_users u JOIN companies c ON c.id = u.company_id
		WHERE u.email = ? AND u.joined_at IS NOT NULL AND u.disabled_at IS NULL
		ORDER BY u.last_sign_in_at DESC NULLS LAST, u.id`, email).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("memberships of a cabinet person: %w", err)
	}
	return out, nil
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
	return newSignInLink(ctx, db, userID, tokenHash, expires, now, false)
}

// NewResetLink is NewSignInLink for a link that sets the person's password
// even if the membership has not joined yet (see UseSignInLink).
func NewResetLink(ctx context.Context, db *bun.DB, userID int64, tokenHash []byte, expires, now time.Time) error {
	return newSignInLink(ctx, db, userID, tokenHash, expires, now, true)
}

func newSignInLink(ctx context.Context, db *bun.DB, userID int64, tokenHash []byte, expires, now time.Time, resets bool) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return fmt.Errorf("spend the sign-in links of user %d: %w", userID, err)
		}
		if _, err := tx.NewRaw("INSERT INTO cabinet_signin_links (token_hash, user_id, expires_at, resets_password) VALUES (?, ?, ?, ?)",
			tokenHash, userID, expires, resets).Exec(ctx); err != nil {
			return fmt.Errorf("create sign-in link for user %d: %w", userID, err)
		}
		return nil
	})
}

// ResetInvitationLink spends an unused, unexpired link of a membership
// that has not joined (an invitation) and stores a reset link for the same
// membership instead (as NewResetLink; its other unused links are spent
// too), in one transaction: of two requests with the same link only one
// gets a reset link. Anything else is errs.NotFound. Locks the membership,
// then links, as lockPerson's order says.
func ResetInvitationLink(ctx context.Context, db *bun.DB, tokenHash, resetHash []byte, expires, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		_, userID, err := linkHolder(ctx, tx, tokenHash, now)
		if err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT * FROM cabinet_users WHERE id = ? AND disabled_at IS NULL AND joined_at IS NULL FOR NO KEY UPDATE",
			userID).Scan(ctx, u); err != nil {
			return notFound(err, fmt.Sprintf("invited cabinet user %d", userID))
		}
		if _, err := spendLink(ctx, tx, tokenHash, userID, now); err != nil {
			return err
		}
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return err
		}
		_, err = tx.NewRaw("INSERT INTO cabinet_signin_links (token_hash, user_id, expires_at, resets_password) VALUES (?, ?, ?, true)",
			resetHash, userID, expires).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("exchange an invitation's link for a reset link: %w", err)
	}
	return u, nil
}

// LinkedUser is the membership of an unused link, and whether the link
// resets the password (NewResetLink).
type LinkedUser struct {
	CabinetUser    `bun:",extend"`
	ResetsPassword bool `bun:"resets_password"`
}

// SignInLinkUser returns the user of an unused, unexpired link without
// using it up (the page that sets the password shows first).
func SignInLinkUser(ctx context.Context, db bun.IDB, tokenHash []byte, now time.Time) (*LinkedUser, error) {
	u := new(LinkedUser)
	err := db.NewRaw(`SELECT u.*, l.resets_password FROM cabinet_signin_links l JOIN cabinet_users u ON u.id = l.user_id
		WHERE l.token_hash = ? AND l.used_at IS NULL AND l.expires_at > ? AND u.disabled_at IS NULL`, tokenHash, now).Scan(ctx, u)
	if err != nil {
		return nil, notFound(err, "sign-in link")
	}
	return u, nil
}

// spendPersonLinks spends the unused links of the membership userID and
// of the person's other joined memberships (links the operator issued
// for a lost password); another company's pending invitation keeps its
// link, so its owner sees nothing of what the person did elsewhere, but a
// reset that link carried is taken back: it becomes an invitation that
// asks for the password just set, not one that sets another.
func spendPersonLinks(ctx context.Context, tx bun.IDB, email string, userID int64, now time.Time) error {
	if _, err := tx.NewRaw(`UPDATE cabinet_signin_links l SET used_at = ? FROM cabinet_users u
		WHERE l.user_id = u.id AND l.used_at IS NULL AND u.email = ? AND (u.id = ? OR u.joined_at IS NOT NULL)`,
		now, email, userID).Exec(ctx); err != nil {
		return fmt.Errorf("spend the links of %s: %w", email, err)
	}
	if _, err := tx.NewRaw(`UPDATE cabinet_signin_links l SET resets_password = false FROM cabinet_users u
		WHERE l.user_id = u.id AND l.used_at IS NULL AND l.resets_password AND u.email = ?`, email).Exec(ctx); err != nil {
		return fmt.Errorf("take back the resets of %s: %w", email, err)
	}
	return nil
}

// newPassword stores the person's password hash and ends every session of
// the person, in every company (a new session version for each of its
// memberships): a new password ends what the old one opened.
func newPassword(ctx context.Context, tx bun.IDB, email, passwordHash string, now time.Time) error {
	if _, err := tx.NewRaw("UPDATE cabinet_people SET password_hash = ?, updated_at = ? WHERE email = ?",
		passwordHash, now, email).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewRaw("UPDATE cabinet_users SET session_version = session_version + 1, updated_at = ? WHERE email = ?",
		now, email).Exec(ctx)
	return err
}

// Errors of using a sign-in link.
var (
	// ErrPasswordSet: the link is an invitation of a person who has a
	// password; it joins with that password (JoinWithSignInLink) and sets
	// none.
	ErrPasswordSet = errors.New("the person has a password: the invitation does not set one")
	// ErrPasswordChanged: the person's password is no longer the one
	// checked.
	ErrPasswordChanged = errors.New("the person's password changed since it was checked")
)

// UseSignInLink spends the link, sets the person's password hash, joins
// the link's membership and signs it in, in one transaction: of two
// submits of the same link only one succeeds. It spends the membership's
// other links (and the person's lost-password links: spendPersonLinks)
// and ends the person's sessions (newPassword); the address the link was
// used from becomes the person's only known address. An invitation (a
// membership not joined) of a person who has a password sets none:
// ErrPasswordSet, nothing changed; unless the link resets the password
// (NewResetLink, for a person who forgot it). Locks are taken in the
// order every change of a person takes them (lockPerson): so of two
// invitations of a new person accepted at once one sets the password and
// the other is refused, and a password changed meanwhile waits instead of
// deadlocking.
func UseSignInLink(ctx context.Context, db *bun.DB, tokenHash []byte, passwordHash, address string, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		email, userID, err := linkHolder(ctx, tx, tokenHash, now)
		if err != nil {
			return err
		}
		hash, joined, err := lockPerson(ctx, tx, email, userID)
		if err != nil {
			return err
		}
		resets, err := spendLink(ctx, tx, tokenHash, userID, now)
		if err != nil {
			return err
		}
		if !joined && hash != nil && !resets {
			return ErrPasswordSet
		}
		if err := newPassword(ctx, tx, email, passwordHash, now); err != nil {
			return err
		}
		if err := spendPersonLinks(ctx, tx, email, userID, now); err != nil {
			return err
		}
		if err := tx.NewRaw(`UPDATE cabinet_users SET joined_at = coalesce(joined_at, ?), last_sign_in_at = ? WHERE id = ? RETURNING *`,
			now, now, userID).Scan(ctx, u); err != nil {
			return err
		}
		if err := auditLinkSignIn(ctx, tx, u, map[string]any{"via": "link", "client": address, "password_set": true}); err != nil {
			return err
		}
		if _, err := tx.NewRaw("DELETE FROM cabinet_known_addresses WHERE email = ? AND address <> ?", email, address).Exec(ctx); err != nil {
			return err
		}
		return RememberCabinetAddress(ctx, tx, email, address, now)
	})
	if err != nil {
		return nil, fmt.Errorf("use sign-in link: %w", err)
	}
	return u, nil
}

// linkHolder reads, without locking anything, the person and membership
// of an unused, unexpired link of a user not removed (else errs.NotFound):
// which rows to lock first.
func linkHolder(ctx context.Context, tx bun.IDB, tokenHash []byte, now time.Time) (string, int64, error) {
	var email string
	var userID int64
	err := tx.NewRaw(`SELECT u.email, u.id FROM cabinet_signin_links l JOIN cabinet_users u ON u.id = l.user_id
		WHERE l.token_hash = ? AND l.used_at IS NULL AND l.expires_at > ? AND u.disabled_at IS NULL`, tokenHash, now).Scan(ctx, &email, &userID)
	if err != nil {
		return "", 0, notFound(err, "sign-in link")
	}
	return email, userID, nil
}

// lockPerson locks the person's row, then the membership userID's (if
// still the person's and not removed, else errs.NotFound), and returns
// the person's password hash and whether the membership joined. Every
// transaction that changes a person's password, sessions or links locks
// in this order, person, membership, links (team changes lock a
// membership, then its links): taken the other way round, a link used
// while the password changed deadlocked. NO KEY UPDATE, not UPDATE: rows
// that reference these (a new link, a known address) take a key-share
// lock on them, which UPDATE would block and deadlock with.
func lockPerson(ctx context.Context, tx bun.IDB, email string, userID int64) (hash *string, joined bool, err error) {
	if err := tx.NewRaw("SELECT password_hash FROM cabinet_people WHERE email = ? FOR NO KEY UPDATE", email).Scan(ctx, &hash); err != nil {
		return nil, false, notFound(err, "cabinet person")
	}
	if err := tx.NewRaw("SELECT joined_at IS NOT NULL FROM cabinet_users WHERE id = ? AND email = ? AND disabled_at IS NULL FOR NO KEY UPDATE",
		userID, email).Scan(ctx, &joined); err != nil {
		return nil, false, notFound(err, fmt.Sprintf("cabinet user %d", userID))
	}
	return hash, joined, nil
}

// spendLink spends the membership's link if it is still unused and
// unexpired (else errs.NotFound) and says whether it resets the password:
// read before its rows were locked, it may have been used meanwhile.
func spendLink(ctx context.Context, tx bun.IDB, tokenHash []byte, userID int64, now time.Time) (resets bool, err error) {
	if err := tx.NewRaw(`UPDATE cabinet_signin_links SET used_at = ? WHERE token_hash = ? AND user_id = ? AND used_at IS NULL AND expires_at > ?
		RETURNING resets_password`, now, tokenHash, userID, now).Scan(ctx, &resets); err != nil {
		return false, notFound(err, "sign-in link")
	}
	return resets, nil
}

// JoinWithSignInLink spends an invitation's link of the person email and
// joins and signs in its membership, in one transaction, if the person's
// password hash is still checkedHash (the password just checked; else
// ErrPasswordChanged, nothing changed): the password stays, so no session
// ends and no other link is spent but the membership's own. The address
// it was used from is remembered as a sign-in's is. A link that is not
// the person's, used, expired or of a removed user is errs.NotFound.
// Locks as UseSignInLink does (lockPerson).
func JoinWithSignInLink(ctx context.Context, db *bun.DB, tokenHash []byte, email, checkedHash, address string, now time.Time) (*CabinetUser, error) {
	u := new(CabinetUser)
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		holder, userID, err := linkHolder(ctx, tx, tokenHash, now)
		if err != nil {
			return err
		}
		if holder != email {
			return fmt.Errorf("sign-in link of another person: %w", errs.NotFound)
		}
		current, _, err := lockPerson(ctx, tx, email, userID)
		if err != nil {
			return err
		}
		if current == nil || *current != checkedHash {
			return ErrPasswordChanged
		}
		if _, err := spendLink(ctx, tx, tokenHash, userID, now); err != nil {
			return err
		}
		if _, err := tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL",
			now, userID).Exec(ctx); err != nil {
			return err
		}
		if err := tx.NewRaw(`UPDATE cabinet_users SET joined_at = coalesce(joined_at, ?), last_sign_in_at = ? WHERE id = ? RETURNING *`,
			now, now, userID).Scan(ctx, u); err != nil {
			return err
		}
		if err := auditLinkSignIn(ctx, tx, u, map[string]any{"via": "invitation", "client": address}); err != nil {
			return err
		}
		return RememberCabinetAddress(ctx, tx, email, address, now)
	})
	if err != nil {
		return nil, fmt.Errorf("join with a sign-in link: %w", err)
	}
	return u, nil
}

// ReplacePasswordHash stores another hash of the person's same password
// (made with other costs), unless the password changed since oldHash was
// read.
func ReplacePasswordHash(ctx context.Context, db bun.IDB, email, oldHash, newHash string) error {
	if _, err := db.NewRaw("UPDATE cabinet_people SET password_hash = ? WHERE email = ? AND password_hash = ?",
		newHash, email, oldHash).Exec(ctx); err != nil {
		return fmt.Errorf("replace a person's password hash: %w", err)
	}
	return nil
}

// RememberCabinetAddress records that the person signed in from address
// (a client address group) at now.
func RememberCabinetAddress(ctx context.Context, db bun.IDB, email, address string, now time.Time) error {
	_, err := db.NewRaw(`INSERT INTO cabinet_known_addresses (email, address, signed_in_at) VALUES (?, ?, ?)
		ON CONFLICT (email, address) DO UPDATE SET signed_in_at = greatest(cabinet_known_addresses.signed_in_at, excluded.signed_in_at)`,
		email, address, now).Exec(ctx)
	if err != nil {
		return fmt.Errorf("remember a sign-in address: %w", err)
	}
	return nil
}

// RecordCabinetSignIn records a session begun as the membership userID
// from address at now: the membership's last sign-in and the person's
// known address, in one statement.
func RecordCabinetSignIn(ctx context.Context, db bun.IDB, userID int64, address string, now time.Time) error {
	return RecordCabinetSignInVia(ctx, db, userID, address, now, "password")
}

// RecordCabinetSignInVia is RecordCabinetSignIn with how the session began
// ("password", "switch", "two_factor", "recovery_code") for the audit
// log's row, written in the same transaction.
func RecordCabinetSignInVia(ctx context.Context, db bun.IDB, userID int64, address string, now time.Time, via string) error {
	err := audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		u := new(CabinetUser)
		if err := tx.NewRaw(`UPDATE cabinet_users SET last_sign_in_at = greatest(last_sign_in_at, ?) WHERE id = ? RETURNING *`,
			now, userID).Scan(ctx, u); err != nil {
			return AuditEntry{}, notFound(err, fmt.Sprintf("cabinet user %d", userID))
		}
		if err := RememberCabinetAddress(ctx, tx, u.Email, address, now); err != nil {
			return AuditEntry{}, err
		}
		return SignInEntry(u, AuditSignIn, map[string]any{"via": via, "client": address}), nil
	})
	if err != nil {
		return fmt.Errorf("record the sign-in of user %d: %w", userID, err)
	}
	return nil
}

// auditLinkSignIn records a sign-in through a link, unless the person
// has an authenticator: then the link was the first factor, and the
// sign-in is recorded when its code is given (RecordCabinetSignInVia).
func auditLinkSignIn(ctx context.Context, tx bun.IDB, u *CabinetUser, detail map[string]any) error {
	var second bool
	if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM cabinet_two_factor WHERE email = ? AND confirmed_at IS NOT NULL)", u.Email).
		Scan(ctx, &second); err != nil {
		return err
	}
	if second {
		return nil
	}
	return Audit(ctx, tx, SignInEntry(u, AuditSignIn, detail))
}

// SignInEntry is an audit row of the membership u's own: its sign-in, a
// failed one, a second factor's step. The actor is u whatever the
// context says (no one is signed in yet).
func SignInEntry(u *CabinetUser, action string, detail map[string]any) AuditEntry {
	id := u.ID
	return AuditEntry{CompanyID: u.CompanyID, ActorKind: ActorUser, ActorUserID: &id, Actor: u.Email, Action: action,
		Subject: u.Email, Detail: detail}
}

// AuditFailedSignIn records a failed sign-in of the person email from
// address (a wrong password, or a wrong second factor: action) in the
// audit log of each company the person may sign in to, as that
// membership's: one statement. An unknown address records nothing.
func AuditFailedSignIn(ctx context.Context, db bun.IDB, email, address, action, reason string) error {
	_, err := db.NewRaw(`INSERT INTO audit_log (company_id, actor_kind, actor_user_id, actor, action, subject, detail)
		SELECT company_id, 'user', id, email, ?, email, jsonb_build_object('client', ?::text, 'reason', ?::text) FROM cabinet_users
		WHERE email = ? AND joined_at IS NOT NULL AND disabled_at IS NULL`, action, address, reason, email).Exec(ctx)
	if err != nil {
		return fmt.Errorf("audit a failed sign-in: %w", err)
	}
	return nil
}

// KnownCabinetAddress reports whether the person with the e-mail signed
// in from address after since.
func KnownCabinetAddress(ctx context.Context, db bun.IDB, email, address string, since time.Time) (bool, error) {
	var known bool
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM cabinet_known_addresses WHERE email = ? AND address = ? AND signed_in_at > ?)`,
		email, address, since).Scan(ctx, &known)
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
			if _, err = tx.NewRaw("UPDATE cabinet_signin_links SET used_at = ? WHERE user_id = ? AND used_at IS NULL", now, id).Exec(ctx); err != nil {
				return err
			}
			return auditRemoval(ctx, tx, u)
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

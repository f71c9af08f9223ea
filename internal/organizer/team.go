package organizer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/alexedwards/argon2id"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/store"
)

// Errors of managing the team.
var (
	ErrLastOwner     = store.ErrLastOwner
	ErrAlreadyMember = store.ErrAlreadyMember
	ErrNotInvited    = store.ErrNotInvited
	ErrRemoved       = store.ErrRemoved
	// ErrSessionEnded: the password changed or the user was removed while
	// this session was open; it is over.
	ErrSessionEnded = errors.New("the session ended")
)

// Status is where a member stands in the team.
type Status string

// A member is invited until the invitation's link is used, then active
// (a person's password set for another company changes nothing here); a
// removed member (or one disabled with ticketctl) is disabled.
const (
	StatusActive   Status = "active"
	StatusInvited  Status = "invited"
	StatusDisabled Status = "disabled"
)

// Member is a user of the company as the team page lists one.
type Member struct {
	ID           int64      `json:"id"`
	Email        string     `json:"email"`
	Role         Role       `json:"role"`
	Status       Status     `json:"status"`
	CreatedAt    time.Time  `json:"created_at"`
	LastSignInAt *time.Time `json:"last_sign_in_at,omitempty"`
	// InvitationExpiresAt is when an invited member's link stops working;
	// nil for an invited member: the link expired or was spent, invite
	// again.
	InvitationExpiresAt *time.Time `json:"invitation_expires_at,omitempty"`
	InvitedBy           string     `json:"invited_by,omitempty"`
	// TwoFactor: the member signs in with a second factor.
	TwoFactor bool `json:"two_factor"`
}

// Team lists the company's users, members first, then removed ones.
func (s *Service) Team(ctx context.Context, companyID int64) ([]Member, error) {
	rows, err := store.ListTeam(ctx, s.db, companyID, s.now())
	if err != nil {
		return nil, err
	}
	out := make([]Member, len(rows))
	for i, r := range rows {
		m := Member{ID: r.ID, Email: r.Email, Role: Role(r.Role), Status: StatusActive, CreatedAt: r.CreatedAt, LastSignInAt: r.LastSignInAt,
			TwoFactor: r.TwoFactor}
		if r.InvitedBy != nil {
			m.InvitedBy = *r.InvitedBy
		}
		switch {
		case r.DisabledAt != nil:
			m.Status = StatusDisabled
		case !r.Joined:
			m.Status, m.InvitationExpiresAt = StatusInvited, r.LinkExpiresAt
		}
		out[i] = m
	}
	return out, nil
}

// Invitation is what Invite and Reinvite made: the invited user and the
// one-time link path (LinkPath + token) that accepts the invitation.
type Invitation struct {
	User      *User
	Path      string
	ExpiresAt time.Time
}

// Invite adds a user with the role to the inviter's company, or takes back
// one the company removed, with a one-time link (LinkLifetime) to set the
// person's password and join. A member's e-mail is ErrAlreadyMember;
// whether the address is a user of another company changes nothing: the
// same answer, by the same statements, and that company's membership
// stays as it was.
func (s *Service) Invite(ctx context.Context, by *User, email string, role Role) (*Invitation, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, errs.Invalid("email", "not an e-mail address", email)
	}
	if !role.Valid() {
		return nil, errs.Invalid("role", "not a cabinet role", role)
	}
	token, hash := newToken()
	now := s.now()
	u, err := store.InviteCabinetUser(ctx, s.db, by.CompanyID, email, string(role), by.ID, hash, now.Add(LinkLifetime), now)
	if err != nil {
		return nil, err
	}
	return &Invitation{User: view(u), Path: LinkPath + token, ExpiresAt: now.Add(LinkLifetime)}, nil
}

// Reinvite issues a new link for a member of the company who has not
// accepted yet; the older link stops working.
func (s *Service) Reinvite(ctx context.Context, companyID, userID int64) (*Invitation, error) {
	token, hash := newToken()
	now := s.now()
	u, err := store.ReinviteCabinetUser(ctx, s.db, companyID, userID, hash, now.Add(LinkLifetime), now)
	if err != nil {
		return nil, err
	}
	return &Invitation{User: view(u), Path: LinkPath + token, ExpiresAt: now.Add(LinkLifetime)}, nil
}

// ChangeRole gives a member of the company another role, from the
// member's next request; the company's last active owner stays an owner
// (ErrLastOwner).
func (s *Service) ChangeRole(ctx context.Context, companyID, userID int64, role Role) (*User, error) {
	if !role.Valid() {
		return nil, errs.Invalid("role", "not a cabinet role", role)
	}
	return userOf(store.ChangeCabinetRole(ctx, s.db, companyID, userID, string(role), s.now()))
}

// Remove takes a member out of the company's team (a member leaving too):
// the member's sessions end at their next request and the member cannot
// sign in; the company's last active owner stays (ErrLastOwner).
func (s *Service) Remove(ctx context.Context, companyID, userID int64) (*User, error) {
	return userOf(store.RemoveCabinetUser(ctx, s.db, companyID, userID, s.now()))
}

// ChangePassword checks the signed-in user's current password (as a
// sign-in from addr does, with its budgets: ErrBadCredentials,
// ErrTooManyTries with the wait, ErrBusy) and sets the new one: the
// person's, in every company. The person's other sessions end; the
// returned user holds the session version the current session must take
// to stay signed in.
func (s *Service) ChangePassword(ctx context.Context, addr string, u *User, current, next string) (*User, time.Duration, error) {
	if err := CheckPassword(next); err != nil {
		return nil, 0, err
	}
	client := ratelimit.AddressGroup(addr)
	_, wait, err := s.checkPassword(ctx, client, u.Email, current, func(p *store.CabinetPerson) (*User, error) {
		// The person's address, not a sign-in of any membership: the
		// team pages' last sign-in stays as it was.
		return u, store.RememberCabinetAddress(ctx, s.db, p.Email, client, s.now())
	})
	if err != nil {
		return nil, wait, err
	}
	release, err := s.enter(ctx, client)
	if err != nil {
		return nil, BusyRetry, err
	}
	hash, err := argon2id.CreateHash(next, params)
	release()
	if err != nil {
		return nil, 0, fmt.Errorf("hash password: %w", err)
	}
	changed, err := store.ChangeCabinetPassword(ctx, s.db, u.ID, u.SessionVersion, hash, s.now())
	if errors.Is(err, errs.NotFound) {
		return nil, 0, ErrSessionEnded
	}
	if err != nil {
		return nil, 0, err
	}
	return view(changed), 0, nil
}

// InvitationMail is the e-mail that invites a person to the company's
// cabinet; link is the absolute link to accept it, expires when it ends,
// in the company's time zone (the mail says it so).
func InvitationMail(to, inviter, company string, role Role, link string, expires time.Time, id string) mail.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\n%s invited you to the organizer's cabinet of %s, as %s.\n\n", inviter, company, role)
	// One text for every invitee: the mail tells nothing of the address's
	// other companies; the link's page asks for the password it has, or a
	// new one.
	fmt.Fprintf(&b, "To accept, open this link and sign in with your cabinet password, or choose one if you have none yet:\n\n%s\n\n", link)
	fmt.Fprintf(&b, "The link works once, until %s. If you did not expect this invitation, ignore this e-mail.\n",
		expires.Format("2006-01-02 15:04 MST"))
	return mail.Message{To: to, Subject: "You are invited to the organizer's cabinet of " + company, Text: b.String(), MessageID: id}
}

// ResetMail is the e-mail with a link that sets a new password and
// accepts the invitation to the company (ForgotPassword); link is absolute,
// expires in the company's time zone.
func ResetMail(to, company string, link string, expires time.Time, id string) mail.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\nOn the page of your invitation to the organizer's cabinet of %s, someone asked for a link to set a new password.\n\n", company)
	fmt.Fprintf(&b, "To choose a new password and accept the invitation, open this link (the invitation's own link no longer works):\n\n%s\n\n", link)
	fmt.Fprintf(&b, "The new password replaces the one you had, for every organizer whose team you are in, and signs out your other sessions. ")
	fmt.Fprintf(&b, "The link works once, until %s. If you did not ask for it, ignore this e-mail: your password stays as it is.\n",
		expires.Format("2006-01-02 15:04 MST"))
	return mail.Message{To: to, Subject: "Set a new password for the organizer's cabinet of " + company, Text: b.String(), MessageID: id}
}

// RoleSummary says in a few words what a role may see and do (Can
// decides).
func RoleSummary(r Role) string {
	switch r {
	case RoleOwner:
		return "everything: report, orders and refunds, check-in, catalog, keys, request log, webhooks, the team, and the audit log"
	case RoleFinance:
		return "sales report, orders, refunds"
	case RoleSupport:
		return "find orders, resend tickets, cancel unpaid orders; no refunds"
	case RoleDoor:
		return "check-in only"
	case RoleDeveloper:
		return "API keys (production: catalog and webhook reading only), request log, webhooks"
	}
	return ""
}

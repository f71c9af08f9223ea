// Package organizer is the organizer's side of the service, the domain
// behind the cabinet (api/cabinet, its pages): the cabinet's users, their
// one-time sign-in links, passwords (argon2id) and the limits on signing
// in, the roles and what each may do; and the company's orders as the
// cabinet shows and acts on them (orders.go, actions.go). Cabinet users
// are people of a company, not API keys. A person is an e-mail
// address with one password, who may be a user (a membership, with a role)
// of several companies; one company's team sees only its own.
package organizer

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
	"github.com/ticketsales/ticketsales/store"
)

// LinkLifetime is how long a sign-in link works (once).
const LinkLifetime = 72 * time.Hour

// Password length bounds: long enough to resist guessing, short enough
// that hashing an attacker's megabyte costs nothing extra.
const (
	MinPasswordLength = 10
	MaxPasswordLength = 200
)

// LinkPath is the cabinet path a sign-in token is appended to.
const LinkPath = "/cabinet/link/"

// LogPath is a request path fit for a log line: whatever follows LinkPath
// (a live sign-in token) is replaced by "…".
func LogPath(path string) string {
	if i := strings.Index(path, LinkPath); i >= 0 && len(path) > i+len(LinkPath) {
		return path[:i+len(LinkPath)] + "…"
	}
	return path
}

// Errors of signing in; the cabinet shows them without telling which of
// e-mail or password was wrong.
var (
	ErrBadCredentials = errors.New("wrong e-mail or password")
	ErrLinkInvalid    = errors.New("the sign-in link is unknown, used or expired")
	ErrTooManyTries   = errors.New("too many sign-in attempts")
	ErrUserDisabled   = errors.New("the cabinet user is disabled")
	// ErrExistingPassword: the link is an invitation of a person who has a
	// password (set since its page was shown): it asks for that password.
	ErrExistingPassword = errors.New("the address has a password: the invitation asks for it")
)

// User is a person's membership of one company's team, as the cabinet and
// ticketctl see it: never the password's hash.
type User struct {
	ID        int64  `json:"id"`
	CompanyID int64  `json:"company_id"`
	Email     string `json:"email"`
	Role      Role   `json:"role"`
	// SessionVersion is what a session must hold to stay signed in.
	SessionVersion int        `json:"-"`
	DisabledAt     *time.Time `json:"disabled_at,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	// Joined: the user accepted through a link (an invited user has not
	// yet, whatever the person's password elsewhere).
	Joined bool `json:"-"`
	// SecondFactor: the first factor (password or link) passed, and the
	// person has an authenticator: the sign-in is complete only with its
	// code (Service.SecondFactor), and is recorded then.
	SecondFactor bool `json:"-"`
}

func view(u *store.CabinetUser) *User {
	return &User{ID: u.ID, CompanyID: u.CompanyID, Email: u.Email, Role: Role(u.Role), SessionVersion: u.SessionVersion, DisabledAt: u.DisabledAt,
		CreatedAt: u.CreatedAt, Joined: u.JoinedAt != nil}
}

func userOf(u *store.CabinetUser, err error) (*User, error) {
	if err != nil {
		return nil, err
	}
	return view(u), nil
}

// PasswordError says why a new password is refused.
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string { return "password " + e.Reason }

// params are the argon2id costs: the RFC 9106 second recommendation's
// memory (64 MiB) with three passes, about 200 ms on one core. Parallelism
// 1: argon2 runs each lane's segments as fresh goroutines, which run ahead
// of waiting ones and are hardly preemptible (the work is in assembly), so
// a check with two lanes on two CPUs left /v1 requests waiting seconds
// while sign-ins went on; a check with one lane takes one CPU, and
// Limits.PasswordChecks bounds how many run at once. Hashes made with two
// lanes before are made again with one at the user's next sign-in.
var params = &argon2id.Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// dummyHash is compared against when the e-mail is unknown, so a wrong
// e-mail takes as long as a wrong password.
var dummyHash = func() string {
	h, err := argon2id.CreateHash("not a password of anyone", params)
	if err != nil {
		panic(err)
	}
	return h
}()

// Service manages cabinet users.
type Service struct {
	db  *bun.DB
	now func() time.Time
	// Sign-in budgets (see SignIn): failures per client and e-mail
	// (guessing one account's password), password checks per client
	// (trying many accounts, or signing in over and over: every check
	// counts, a successful one too) and failures per e-mail from all
	// clients together (guessing one account's password from many). A
	// client is an IPv4 address or an IPv6 /64 (ratelimit.AddressGroup).
	perAccount ratelimit.Budget
	perClient  ratelimit.Budget
	perEmail   ratelimit.Budget
	// checks bounds the argon2id password checks (and hashes) running at
	// once in this process; turns lets one client have one check running
	// or waiting for a slot at a time, so a client queues behind its own
	// attempts and never holds more than one slot.
	checks slots
	turns  turns
	// The second factor: its budgets (two_factor.go) and the sealers of
	// authenticators' secrets.
	tfPerson       ratelimit.Budget
	tfAccount      ratelimit.Budget
	tfClient       ratelimit.Budget
	seals          []sealer
	passwordChecks atomic.Int64
	inFlight       atomic.Int64
	peak           atomic.Int64
}

// The sign-in budgets: a burst, then one more per interval.
var (
	PerAccountLimit = ratelimit.Limit{Rate: 1.0 / 60, Burst: 5}  // failures per client and e-mail
	PerClientLimit  = ratelimit.Limit{Rate: 1.0 / 10, Burst: 30} // password checks per client
	PerEmailLimit   = ratelimit.Limit{Rate: 1.0 / 60, Burst: 20} // failures per e-mail
)

// KnownAddressLifetime is how long after the last sign-in from a client
// address the user's attempts from it skip the per-e-mail budget.
const KnownAddressLifetime = 90 * 24 * time.Hour

// Limits shape the limits on signing in; the zero value is the defaults,
// every budget in this process's memory.
type Limits struct {
	// Budgets keeps the sign-in budgets: nil, this process's memory (one
	// budget per api instance); over Redis, one for every instance.
	Budgets *ratelimit.Shared
	// PasswordChecks bounds the password checks running at once in this
	// process (0: DefaultPasswordChecks).
	PasswordChecks int
	// SealSecrets seal the authenticators' secrets of two-factor sign-in
	// (the order token secret, then its previous ones); none: two-factor
	// enrolment is refused (ErrTwoFactorUnavailable).
	SealSecrets []string
}

// DefaultPasswordChecks is half the CPUs Go schedules on, at least one: a
// check keeps one of them busy, so password checks leave selling at least
// half of the CPUs (with a single CPU they share it).
func DefaultPasswordChecks() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// New builds the service; now may be nil (time.Now).
func New(db *bun.DB, now func() time.Time, l Limits) *Service {
	if now == nil {
		now = time.Now
	}
	if l.PasswordChecks <= 0 {
		l.PasswordChecks = DefaultPasswordChecks()
	}
	s := &Service{db: db, now: now,
		perAccount: l.Budgets.Budget("signin-account", PerAccountLimit),
		perClient:  l.Budgets.Budget("signin-client", PerClientLimit),
		perEmail:   l.Budgets.Budget("signin-email", PerEmailLimit),
		checks:     make(slots, l.PasswordChecks),
		turns:      turns{m: map[string]*turn{}},
		tfPerson:   l.Budgets.Budget("twofactor-person", TwoFactorPersonLimit),
		tfAccount:  l.Budgets.Budget("twofactor-account", TwoFactorPersonLimit),
		tfClient:   l.Budgets.Budget("twofactor-client", TwoFactorClientLimit)}
	// A key from a SHA-256 always makes a cipher: nothing to fail.
	s.seals, _ = newSealers(l.SealSecrets)
	return s
}

// NormalizeEmail checks an address and lowercases it.
func NormalizeEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || a.Name != "" {
		return "", fmt.Errorf("not an e-mail address: %q", email)
	}
	return email, nil
}

// CreateUser adds a user to the company and returns a one-time link path
// (LinkPath + token) to set the password and join. An address that is a
// user of another company is made a user of this one as well; one of this
// company is ErrAlreadyMember.
func (s *Service) CreateUser(ctx context.Context, companyID int64, email string, role Role) (*User, string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, "", err
	}
	if !role.Valid() {
		return nil, "", fmt.Errorf("create user %s: %w", email, errs.Invalid("role", "not a cabinet role", role))
	}
	u, err := store.CreateCabinetUser(ctx, s.db, companyID, email, string(role))
	if err != nil {
		return nil, "", err
	}
	path, err := s.NewLink(ctx, u.ID)
	return view(u), path, err
}

// NewLink issues another one-time link for a user (a lost password, or the
// demo organizer of every `make run`); the user's older unused links stop
// working. A user who has not joined yet gets an invitation's link: it
// asks for the password the person has, if any (see Link).
func (s *Service) NewLink(ctx context.Context, userID int64) (string, error) {
	return s.newLink(ctx, userID, store.NewSignInLink)
}

// NewResetLink is NewLink for a link that sets a new password whether the
// user has joined or not (ticketctl user link --reset): the way in for a
// person who forgot the password and whose only membership is an
// invitation, whose link would ask for it. Using it is a lost password's
// link: the person's sessions end and their lost-password links are spent.
func (s *Service) NewResetLink(ctx context.Context, userID int64) (string, error) {
	return s.newLink(ctx, userID, store.NewResetLink)
}

func (s *Service) newLink(ctx context.Context, userID int64,
	issue func(ctx context.Context, db *bun.DB, userID int64, tokenHash []byte, expires, now time.Time) error) (string, error) {
	u, err := store.GetCabinetUser(ctx, s.db, userID)
	if err != nil {
		return "", err
	}
	if u.DisabledAt != nil {
		return "", ErrUserDisabled
	}
	token, hash := newToken()
	now := s.now()
	if err := issue(ctx, s.db, userID, hash, now.Add(LinkLifetime), now); err != nil {
		return "", err
	}
	return LinkPath + token, nil
}

// ErrNoPasswordToForget: the link sets a password; there is none it asks
// for.
var ErrNoPasswordToForget = errors.New("the link sets a password: it asks for none")

// ForgotPassword exchanges an invitation's link that asks for the person's
// existing password (see Link) for a reset link of the same membership
// (NewResetLink), to be e-mailed to the address only: whoever holds the
// invitation's link (a forwarded e-mail) gets nothing, the mailbox's owner
// a way in. The invitation's link stops working, so each link sends one
// e-mail at most. A link that sets a password is ErrNoPasswordToForget.
func (s *Service) ForgotPassword(ctx context.Context, token string) (*Invitation, error) {
	l, err := s.Link(ctx, token)
	if err != nil {
		return nil, err
	}
	if !l.ExistingPassword {
		return nil, ErrNoPasswordToForget
	}
	reset, hash := newToken()
	now := s.now()
	u, err := store.ResetInvitationLink(ctx, s.db, hashToken(token), hash, now.Add(LinkLifetime), now)
	if errors.Is(err, errs.NotFound) {
		return nil, ErrLinkInvalid
	}
	if err != nil {
		return nil, err
	}
	return &Invitation{User: view(u), Path: LinkPath + reset, ExpiresAt: now.Add(LinkLifetime)}, nil
}

// ManyCompanies: the address is a user of several companies; the
// operator must say which (ticketctl's --company).
type ManyCompanies struct {
	Email     string
	Companies []int64
}

func (e *ManyCompanies) Error() string {
	ids := make([]string, len(e.Companies))
	for i, id := range e.Companies {
		ids[i] = fmt.Sprint(id)
	}
	return fmt.Sprintf("%s is a user of companies %s: give --company", e.Email, strings.Join(ids, ", "))
}

// UserByEmail finds the address's user of the company, or (companyID 0)
// its only one: an address of several companies is ManyCompanies. For the
// operator's ticketctl, which may name any company.
func (s *Service) UserByEmail(ctx context.Context, email string, companyID int64) (*User, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	all, err := store.CabinetUsersByEmail(ctx, s.db, email)
	if err != nil {
		return nil, err
	}
	var found []store.CabinetUser
	for _, u := range all {
		if companyID == 0 || u.CompanyID == companyID {
			found = append(found, u)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("cabinet user %s: %w", email, errs.NotFound)
	case 1:
		return view(&found[0]), nil
	}
	many := &ManyCompanies{Email: email}
	for _, u := range found {
		many.Companies = append(many.Companies, u.CompanyID)
	}
	return nil, many
}

// newToken makes a link's token, 32 random bytes, and the hash that is
// all the database keeps of it.
func newToken() (string, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails on supported platforms
	token := base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token)
}

// CompanyName is the name of the user's company.
func (s *Service) CompanyName(ctx context.Context, companyID int64) (string, error) {
	return store.GetCompanyName(ctx, s.db, companyID)
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Link is what a one-time link does, as its page shows it.
type Link struct {
	// User is the membership the link signs in.
	User *User
	// ExistingPassword: the link is an invitation (its membership has
	// not joined) of a person who has a password already, for another
	// company or from before a removal. It asks for that password and
	// sets none: an invitation, which an owner of any company can send,
	// never changes how the person signs in elsewhere. Every other link
	// sets the password: a new person's first, a lost password's, or a
	// reset link's (Resets).
	ExistingPassword bool
	// Resets: the link sets a new password even though its membership
	// has not joined (NewResetLink).
	Resets bool
}

// Link returns what a link does, without spending it.
func (s *Service) Link(ctx context.Context, token string) (*Link, error) {
	cu, err := store.SignInLinkUser(ctx, s.db, hashToken(token), s.now())
	if errors.Is(err, errs.NotFound) {
		return nil, ErrLinkInvalid
	}
	if err != nil {
		return nil, err
	}
	l := &Link{User: view(&cu.CabinetUser), Resets: cu.ResetsPassword}
	if !l.User.Joined && !l.Resets {
		p, err := store.GetCabinetPerson(ctx, s.db, cu.Email)
		if err != nil {
			return nil, err
		}
		l.ExistingPassword = p.PasswordHash != nil
	}
	return l, nil
}

// CheckPassword refuses passwords too short or too long.
func CheckPassword(pw string) error {
	switch n := utf8.RuneCountInString(pw); {
	case n < MinPasswordLength:
		return &PasswordError{fmt.Sprintf("must have at least %d characters", MinPasswordLength)}
	case len(pw) > MaxPasswordLength:
		return &PasswordError{fmt.Sprintf("must have at most %d bytes", MaxPasswordLength)}
	}
	return nil
}

// UseLink joins and signs in the link's membership and spends the link.
// A link that sets the password (see Link) sets it to password: every
// session of the person ends (the password changed), the person's
// lost-password links are spent, and the client address it was used from
// (addr) becomes the person's only known address. Setting a password
// through a link costs none of the sign-in budgets (it is no password
// check: only the link's holder can use it, once), so nobody failing
// passwords for the user's e-mail keeps the user from it; hashing the new
// password waits for a slot as a check does (ErrBusy). An invitation of a
// person with a password takes that password instead, checked as a
// sign-in's (the same budgets and slots: ErrBadCredentials,
// ErrTooManyTries with the wait, ErrBusy), and changes nothing else of the
// person; a wrong one joins nothing.
func (s *Service) UseLink(ctx context.Context, addr, token, password string) (*User, time.Duration, error) {
	u, wait, err := s.useLink(ctx, addr, token, password)
	return s.askSecond(ctx, u, wait, err)
}

// askSecond marks a user signed in through a link whose person has an
// authenticator: the cabinet asks for its code before the session begins.
func (s *Service) askSecond(ctx context.Context, u *User, wait time.Duration, err error) (*User, time.Duration, error) {
	if err != nil {
		return u, wait, err
	}
	second, err := s.HasTwoFactor(ctx, u.Email)
	if err != nil {
		return nil, 0, err
	}
	u.SecondFactor = second
	return u, wait, nil
}

func (s *Service) useLink(ctx context.Context, addr, token, password string) (*User, time.Duration, error) {
	l, err := s.Link(ctx, token)
	if err != nil {
		return nil, 0, err
	}
	client := ratelimit.AddressGroup(addr)
	if l.ExistingPassword {
		return s.checkPassword(ctx, client, l.User.Email, password, func(p *store.CabinetPerson) (*User, error) {
			u, err := store.JoinWithSignInLink(ctx, s.db, hashToken(token), p.Email, *p.PasswordHash, client, s.now())
			switch {
			case errors.Is(err, errs.NotFound):
				return nil, ErrLinkInvalid
			case errors.Is(err, store.ErrPasswordChanged):
				// Changed while this one was checked: it is not the
				// person's password now.
				return nil, ErrBadCredentials
			}
			return userOf(u, err)
		})
	}
	return s.setPassword(ctx, client, token, password)
}

// ChoosePassword is UseLink for a new password chosen on a link's page
// (the cabinet's form that asks for it twice): a link that asks for the
// person's existing password instead (one was set since the page was
// shown) is ErrExistingPassword, with no password checked and no sign-in
// budget spent. The typed password was chosen as a new one: checked as
// the existing one, it would be a failed sign-in of the person's own.
func (s *Service) ChoosePassword(ctx context.Context, addr, token, password string) (*User, time.Duration, error) {
	l, err := s.Link(ctx, token)
	if err != nil {
		return nil, 0, err
	}
	if l.ExistingPassword {
		return nil, 0, ErrExistingPassword
	}
	u, wait, err := s.setPassword(ctx, ratelimit.AddressGroup(addr), token, password)
	return s.askSecond(ctx, u, wait, err)
}

// setPassword sets the person's password through a link that sets one
// (see UseLink); one that asks for the existing password by the time it
// is used is ErrExistingPassword, nothing changed.
func (s *Service) setPassword(ctx context.Context, client, token, password string) (*User, time.Duration, error) {
	if err := CheckPassword(password); err != nil {
		return nil, 0, err
	}
	release, err := s.enter(ctx, client)
	if err != nil {
		return nil, BusyRetry, err
	}
	hash, err := argon2id.CreateHash(password, params)
	release()
	if err != nil {
		return nil, 0, fmt.Errorf("hash password: %w", err)
	}
	u, err := store.UseSignInLink(ctx, s.db, hashToken(token), hash, client, s.now())
	switch {
	case errors.Is(err, errs.NotFound):
		return nil, 0, ErrLinkInvalid
	case errors.Is(err, store.ErrPasswordSet):
		return nil, 0, ErrExistingPassword
	}
	v, err := userOf(u, err)
	return v, 0, err
}

// SignIn checks e-mail and password from a client address (IPv6: its
// /64) and signs in the person's membership signed into last (the cabinet
// offers the others: Switch). Every attempt spends, before the password
// is looked at, one failure of the client's budget for this e-mail, one
// password check of the client's budget, and one failure of the e-mail's
// budget from all clients; a sign-in that succeeds gives back the two
// failures (not the check). Past any of them the attempt is refused at
// once (ErrTooManyTries with the wait): parallel attempts get no more
// password checks than the budgets allow. The e-mail's budget does not
// apply from an address the person signed in from within
// KnownAddressLifetime, so a stranger failing passwords for the e-mail
// does not keep its owner out. The password check itself (argon2id, 64
// MiB) runs in one of a few slots, one at a time per client; an attempt
// that cannot have one within busyWait is refused with ErrBusy and costs
// nothing. A person with no membership to sign in as (every one removed,
// or only invitations) is refused as a wrong password is.
func (s *Service) SignIn(ctx context.Context, addr, email, password string) (*User, time.Duration, error) {
	client := ratelimit.AddressGroup(addr)
	return s.checkPassword(ctx, client, email, password, func(p *store.CabinetPerson) (*User, error) {
		ms, err := store.ActiveCabinetMemberships(ctx, s.db, p.Email)
		if err != nil {
			return nil, err
		}
		if len(ms) == 0 {
			return nil, ErrBadCredentials
		}
		u := view(&ms[0].CabinetUser)
		second, err := s.HasTwoFactor(ctx, p.Email)
		if err != nil {
			return nil, err
		}
		if second {
			u.SecondFactor = true
			return u, nil
		}
		if err := store.RecordCabinetSignIn(ctx, s.db, ms[0].ID, client, s.now()); err != nil {
			return nil, err
		}
		return u, nil
	})
}

// checkPassword takes the sign-in budgets (see SignIn), checks the
// password of the e-mail's person in a slot and, if it is right, runs
// accepted in that slot: an ErrBadCredentials from it counts as a failure,
// any other answer gives the failures back. The number of companies an
// address belongs to changes nothing before accepted: one person, one
// password check, as for an unknown address.
func (s *Service) checkPassword(ctx context.Context, client, email, password string,
	accepted func(p *store.CabinetPerson) (*User, error)) (*User, time.Duration, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	type spent struct {
		b   ratelimit.Budget
		key string
	}
	var taken []spent
	giveBack := func(checkToo bool) {
		for _, t := range taken {
			if t.b != s.perClient || checkToo {
				t.b.Return(ctx, t.key)
			}
		}
	}
	for _, b := range []spent{{s.perAccount, client + "|" + email}, {s.perClient, client}, {s.perEmail, email}} {
		wait, ok := b.b.Take(ctx, b.key)
		if !ok && b.b == s.perEmail {
			// Only when it matters: one query, no password check.
			known, err := store.KnownCabinetAddress(ctx, s.db, email, client, s.now().Add(-KnownAddressLifetime))
			if err != nil {
				giveBack(true)
				return nil, 0, err
			}
			if known {
				continue
			}
		}
		if !ok {
			giveBack(true)
			return nil, wait, ErrTooManyTries
		}
		taken = append(taken, b)
	}
	if len(password) > MaxPasswordLength {
		return nil, 0, ErrBadCredentials
	}
	release, err := s.enter(ctx, client)
	if err != nil {
		giveBack(true)
		return nil, BusyRetry, err
	}
	defer release()
	p, err := store.GetCabinetPerson(ctx, s.db, email)
	switch {
	case errors.Is(err, errs.NotFound):
		s.compare(password, dummyHash)
		return nil, 0, ErrBadCredentials
	case err != nil:
		giveBack(true)
		return nil, 0, err
	case p.PasswordHash == nil:
		s.compare(password, dummyHash)
		return nil, 0, ErrBadCredentials
	}
	ok, hashParams, err := s.compare(password, *p.PasswordHash)
	if err != nil {
		giveBack(true)
		return nil, 0, fmt.Errorf("check a person's password: %w", err)
	}
	if !ok {
		// The person's companies see it in their audit logs; a failure
		// to record it is the log's, not the answer's.
		_ = store.AuditFailedSignIn(ctx, s.db, p.Email, client, store.AuditSignInFailed, "password")
		return nil, 0, ErrBadCredentials
	}
	u, err := accepted(p)
	if errors.Is(err, ErrBadCredentials) {
		// A removed user's attempts count as failures: whether a
		// membership is disabled is not told apart from a wrong password.
		return nil, 0, err
	}
	if err != nil {
		giveBack(true)
		return nil, 0, err
	}
	giveBack(false)
	if *hashParams != *params {
		// Made with older costs (two lanes): made again, in the slot
		// still held, unless the password changed meanwhile.
		hash, err := argon2id.CreateHash(password, params)
		if err != nil {
			return nil, 0, fmt.Errorf("hash a person's password again: %w", err)
		}
		if err := store.ReplacePasswordHash(ctx, s.db, p.Email, *p.PasswordHash, hash); err != nil {
			return nil, 0, err
		}
	}
	return u, 0, nil
}

// compare is the argon2id password check, counted (PasswordChecks); it
// also returns the costs the hash was made with.
func (s *Service) compare(password, hash string) (bool, *argon2id.Params, error) {
	s.passwordChecks.Add(1)
	return argon2id.CheckHash(password, hash)
}

// PasswordChecks is how many argon2id password checks sign-ins have run.
func (s *Service) PasswordChecks() int64 { return s.passwordChecks.Load() }

// ChecksRunning is how many password checks and hashes run right now.
func (s *Service) ChecksRunning() int64 { return s.inFlight.Load() }

// MostChecksAtOnce is the most password checks and hashes that ran at
// once in this process (never more than its PasswordChecks limit).
func (s *Service) MostChecksAtOnce() int64 { return s.peak.Load() }

// ErrBusy: every slot of the password check stayed taken; the client is
// asked to retry in BusyRetry (the cabinet answers 503 with Retry-After).
var ErrBusy = errors.New("too many sign-ins at once")

// busyWait is how long a sign-in waits for a slot of the password check;
// BusyRetry is the wait the client is told after that.
const (
	busyWait  = 2 * time.Second
	BusyRetry = 2 * time.Second
)

// enter waits, at most busyWait, for the client's turn and then for a slot
// of the password check; release gives both back.
func (s *Service) enter(ctx context.Context, client string) (release func(), err error) {
	t := time.NewTimer(busyWait)
	defer t.Stop()
	tn := s.turns.get(client)
	if err := wait(ctx, tn.ch, t.C); err != nil {
		s.turns.put(client, tn)
		return nil, err
	}
	if err := wait(ctx, s.checks, t.C); err != nil {
		<-tn.ch
		s.turns.put(client, tn)
		return nil, err
	}
	n := s.inFlight.Add(1)
	for p := s.peak.Load(); n > p; p = s.peak.Load() {
		if s.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return func() {
		s.inFlight.Add(-1)
		<-s.checks
		<-tn.ch
		s.turns.put(client, tn)
	}, nil
}

// wait puts a token into a semaphore (a buffered channel), giving up when
// expired fires (ErrBusy) or ctx ends.
func wait(ctx context.Context, sem chan struct{}, expired <-chan time.Time) error {
	select {
	case sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case sem <- struct{}{}:
		return nil
	case <-expired:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slots bounds concurrent password checks: each holds 64 MiB and a CPU
// for about 200 ms, so more of them at once only takes the CPUs from
// selling.
type slots = chan struct{}

// turns are the clients with a password check running or waiting: one at
// a time each, so a client's other attempts queue behind it (senders
// blocked on a channel are served in order).
type turns struct {
	mu sync.Mutex
	m  map[string]*turn
}

type turn struct {
	ch    chan struct{}
	users int
}

func (ts *turns) get(client string) *turn {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := ts.m[client]
	if t == nil {
		t = &turn{ch: make(chan struct{}, 1)}
		ts.m[client] = t
	}
	t.users++
	return t
}

func (ts *turns) put(client string, t *turn) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.users--; t.users == 0 {
		delete(ts.m, client)
	}
}

// Disable ends the user's sessions, spends the user's links and keeps the
// user from signing in (ticketctl user disable).
func (s *Service) Disable(ctx context.Context, userID int64) (*User, error) {
	return userOf(store.DisableCabinetUser(ctx, s.db, userID, s.now()))
}

// User returns a signed-in user by id (the session holds the id).
func (s *Service) User(ctx context.Context, id int64) (*User, error) {
	return userOf(store.GetCabinetUser(ctx, s.db, id))
}

// Membership is a company the signed-in person may switch to.
type Membership struct {
	UserID  int64
	Company string
	Role    Role
}

// Memberships lists the companies the user's person may sign in to (its
// joined memberships not removed), the user's own first.
func (s *Service) Memberships(ctx context.Context, u *User) ([]Membership, error) {
	ms, err := store.ActiveCabinetMemberships(ctx, s.db, u.Email)
	if err != nil {
		return nil, err
	}
	out := []Membership{}
	for _, m := range ms {
		v := Membership{UserID: m.ID, Company: m.CompanyName, Role: Role(m.Role)}
		if m.ID == u.ID {
			out = append([]Membership{v}, out...)
		} else {
			out = append(out, v)
		}
	}
	return out, nil
}

// Switch signs the signed-in user's person in as its membership of
// another company (targetID) from addr: the session proved the person,
// and the target must be the same person's, joined and not removed (else
// errs.NotFound, as for an unknown id).
func (s *Service) Switch(ctx context.Context, addr string, u *User, targetID int64) (*User, error) {
	t, err := store.GetCabinetUser(ctx, s.db, targetID)
	if err != nil {
		return nil, err
	}
	if t.Email != u.Email || t.JoinedAt == nil || t.DisabledAt != nil {
		return nil, fmt.Errorf("switch to user %d: %w", targetID, errs.NotFound)
	}
	if err := store.RecordCabinetSignInVia(ctx, s.db, t.ID, ratelimit.AddressGroup(addr), s.now(), "switch"); err != nil {
		return nil, err
	}
	return view(t), nil
}

// Package organizer holds the organizer's cabinet users: their one-time
// sign-in links, passwords (argon2id) and the limits on signing in. Cabinet
// users are people of a company, not API keys.
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
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
	"github.com/uptrace/bun"

	"ticketsales/internal/ratelimit"
	"ticketsales/store"
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
)

// PasswordError says why a new password is refused.
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string { return "password " + e.Reason }

// params are the argon2id costs: the RFC 9106 second recommendation's
// memory (64 MiB) with three passes, about 100 ms on one core.
var params = &argon2id.Params{Memory: 64 * 1024, Iterations: 3, Parallelism: 2, SaltLength: 16, KeyLength: 32}

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
	// Failed sign-ins per address and e-mail (guessing one account's
	// password), per address (trying many accounts; IPv6 addresses count
	// per /64, what one client usually has) and per e-mail from all
	// addresses together (guessing one account's password from many).
	perAccount ratelimit.Budget
	perAddress ratelimit.Budget
	perEmail   ratelimit.Budget
	// checks bounds the argon2id password checks running at once.
	checks         slots
	passwordChecks atomic.Int64
}

// Limits shape the limits on signing in; the zero value is the defaults,
// every budget in this process's memory.
type Limits struct {
	// Budgets keeps the sign-in budgets: nil, this process's memory (one
	// budget per api instance); over Redis, one for every instance.
	Budgets *ratelimit.Shared
}

// New builds the service; now may be nil (time.Now).
func New(db *bun.DB, now func() time.Time, l Limits) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{db: db, now: now,
		perAccount: l.Budgets.Budget("signin-account", ratelimit.Limit{Rate: 1.0 / 60, Burst: 5}),
		perAddress: l.Budgets.Budget("signin-address", ratelimit.Limit{Rate: 1.0 / 10, Burst: 30}),
		perEmail:   l.Budgets.Budget("signin-email", ratelimit.Limit{Rate: 1.0 / 60, Burst: 20}),
		checks:     make(slots, max(1, runtime.NumCPU()))}
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
// (LinkPath + token) to set the password.
func (s *Service) CreateUser(ctx context.Context, companyID int64, email string) (*store.CabinetUser, string, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, "", err
	}
	u, err := store.CreateCabinetUser(ctx, s.db, companyID, email)
	if err != nil {
		return nil, "", err
	}
	path, err := s.NewLink(ctx, u.ID)
	return u, path, err
}

// NewLink issues another one-time link for a user (a lost password, or the
// demo organizer of every `make run`); the user's older unused links stop
// working.
func (s *Service) NewLink(ctx context.Context, userID int64) (string, error) {
	u, err := store.CabinetUserByID(ctx, s.db, userID)
	if err != nil {
		return "", err
	}
	if u.DisabledAt != nil {
		return "", ErrUserDisabled
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails on supported platforms
	token := base64.RawURLEncoding.EncodeToString(b)
	now := s.now()
	if err := store.NewSignInLink(ctx, s.db, userID, hashToken(token), now.Add(LinkLifetime), now); err != nil {
		return "", err
	}
	return LinkPath + token, nil
}

// UserByEmail finds a user by e-mail.
func (s *Service) UserByEmail(ctx context.Context, email string) (*store.CabinetUser, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	return store.CabinetUserByEmail(ctx, s.db, email)
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// LinkUser returns the user a link signs in, without spending it.
func (s *Service) LinkUser(ctx context.Context, token string) (*store.CabinetUser, error) {
	u, err := store.SignInLinkUser(ctx, s.db, hashToken(token), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrLinkInvalid
	}
	return u, err
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

// UseLink sets the user's password and spends the link.
func (s *Service) UseLink(ctx context.Context, token, password string) (*store.CabinetUser, error) {
	if err := CheckPassword(password); err != nil {
		return nil, err
	}
	hash, err := argon2id.CreateHash(password, params)
	if err != nil {
		return nil, fmt.Errorf("hash password: %w", err)
	}
	u, err := store.UseSignInLink(ctx, s.db, hashToken(token), hash, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrLinkInvalid
	}
	return u, err
}

// SignIn checks e-mail and password from a client address. Failures are
// counted per address and e-mail, per address (IPv6: per /64) and per
// e-mail from any address. Every attempt spends a
// failure of each budget before the password is looked at, and a sign-in
// that succeeds gives them back: parallel attempts get no more password
// checks than the budgets allow, the rest are refused at once
// (ErrTooManyTries with the wait). The password check itself (argon2id,
// 64 MiB) runs in one of a few slots; when they stay taken for
// busyWait the attempt is refused with ErrBusy and costs no failure.
func (s *Service) SignIn(ctx context.Context, addr, email, password string) (*store.CabinetUser, time.Duration, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	addr = ratelimit.AddressGroup(addr)
	budgets := []struct {
		f   ratelimit.Budget
		key string
	}{{s.perAccount, addr + "|" + email}, {s.perAddress, addr}, {s.perEmail, email}}
	giveBack := func(n int) {
		for _, b := range budgets[:n] {
			b.f.Return(ctx, b.key)
		}
	}
	for i, b := range budgets {
		if wait, ok := b.f.Take(ctx, b.key); !ok {
			giveBack(i)
			return nil, wait, ErrTooManyTries
		}
	}
	if len(password) > MaxPasswordLength {
		return nil, 0, ErrBadCredentials
	}
	if err := s.checks.acquire(ctx); err != nil {
		giveBack(len(budgets))
		return nil, busyRetry, err
	}
	defer s.checks.release()
	u, err := store.CabinetUserByEmail(ctx, s.db, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.compare(password, dummyHash)
		return nil, 0, ErrBadCredentials
	case err != nil:
		giveBack(len(budgets))
		return nil, 0, err
	case u.PasswordHash == nil:
		s.compare(password, dummyHash)
		return nil, 0, ErrBadCredentials
	}
	ok, err := s.compare(password, *u.PasswordHash)
	if err != nil {
		giveBack(len(budgets))
		return nil, 0, fmt.Errorf("check password of user %d: %w", u.ID, err)
	}
	if !ok || u.DisabledAt != nil {
		// A disabled user's attempts count as failures: whether an
		// account is disabled is not told apart from a wrong password.
		return nil, 0, ErrBadCredentials
	}
	giveBack(len(budgets))
	return u, 0, nil
}

// compare is the argon2id password check, counted (PasswordChecks).
func (s *Service) compare(password, hash string) (bool, error) {
	s.passwordChecks.Add(1)
	return argon2id.ComparePasswordAndHash(password, hash)
}

// PasswordChecks is how many argon2id password checks sign-ins have run.
func (s *Service) PasswordChecks() int64 { return s.passwordChecks.Load() }

// ErrBusy: every slot of the password check stayed taken; the client is
// asked to retry in busyRetry (the cabinet answers 503 with Retry-After).
var ErrBusy = errors.New("too many sign-ins at once")

// busyWait is how long a sign-in waits for a slot of the password check;
// busyRetry is the wait the client is told after that.
const (
	busyWait  = 2 * time.Second
	busyRetry = 2 * time.Second
)

// slots bounds concurrent password checks: each holds 64 MiB and a core
// for about 100 ms, so more of them at once than cores only costs memory.
type slots chan struct{}

func (sl slots) acquire(ctx context.Context) error {
	select {
	case sl <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(busyWait)
	defer t.Stop()
	select {
	case sl <- struct{}{}:
		return nil
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (sl slots) release() { <-sl }

// Disable ends the user's sessions, spends the user's links and keeps the
// user from signing in (ticketctl user disable).
func (s *Service) Disable(ctx context.Context, userID int64) (*store.CabinetUser, error) {
	return store.DisableCabinetUser(ctx, s.db, userID, s.now())
}

// User returns a signed-in user by id (the session holds the id).
func (s *Service) User(ctx context.Context, id int64) (*store.CabinetUser, error) {
	return store.CabinetUserByID(ctx, s.db, id)
}

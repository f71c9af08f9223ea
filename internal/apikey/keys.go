package apikey

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

// Keys manage a company's keys, as the cabinet and ticketctl do: list
// them with their applications, make one (shown once, stored as its hash)
// and revoke one.
type Keys struct {
	DB *bun.DB
	// Auth, when set, drops a key revoked here from its cache at once
	// (the api's authenticator); nil: other processes' caches let it lapse.
	Auth *Authenticator
}

// Key is a stored key as its company sees it: never the key, nor its hash.
type Key struct {
	ID             int64      `json:"id"`
	ApplicationID  int64      `json:"application_id"`
	Name           string     `json:"name"`
	KeyPrefix      string     `json:"prefix"`
	Scopes         []string   `json:"scopes"`
	CreatedAt      time.Time  `json:"created_at"`
	RevokedAt      *time.Time `json:"revoked_at,omitempty"`
	RateLimitRPS   *float64   `json:"rate_limit_rps,omitempty"`
	RateLimitBurst *int       `json:"rate_limit_burst,omitempty"`
	LastUsedAt     *time.Time `json:"last_used_at,omitempty"`
	// A door key's limits: the one event and gate it scans at.
	CheckinEventID *int64  `json:"checkin_event_id,omitempty"`
	CheckinGate    *string `json:"checkin_gate,omitempty"`
}

// IsDoorKey tells whether the key is a door key (scope checkin).
func (k *Key) IsDoorKey() bool { return slices.Contains(k.Scopes, ScopeCheckin) }

func keyOf(k *store.APIKey) *Key {
	return &Key{ID: k.ID, ApplicationID: k.ApplicationID, Name: k.Name, KeyPrefix: k.KeyPrefix, Scopes: k.Scopes,
		CreatedAt: k.CreatedAt, RevokedAt: k.RevokedAt, RateLimitRPS: k.RateLimitRPS, RateLimitBurst: k.RateLimitBurst,
		LastUsedAt: k.LastUsedAt, CheckinEventID: k.CheckinEventID, CheckinGate: k.CheckinGate}
}

// CompanyKey is a key with its application, as the cabinet lists them.
type CompanyKey struct {
	Key
	ApplicationName string `json:"application"`
	Environment     string `json:"environment"`
	// CheckinEventTitle is a door key's event's title.
	CheckinEventTitle *string `json:"checkin_event_title,omitempty"`
}

// DoorLimits limit a door key (scope checkin) to one event of the company
// and one gate: 0 and "" mean any.
type DoorLimits struct {
	EventID int64
	Gate    string
}

// MaxGate is the longest gate name, as a scan may send it.
const MaxGate = 64

// Application is one of the company's applications (one per environment)
// with its count of usable and revoked keys.
type Application struct {
	ID          int64
	Name        string
	Environment string
	CreatedAt   time.Time
	ActiveKeys  int
	RevokedKeys int
}

// List returns the company's keys, by environment, newest first.
func (s *Keys) List(ctx context.Context, companyID int64) ([]CompanyKey, error) {
	rows, err := store.ListCompanyKeys(ctx, s.DB, companyID)
	if err != nil {
		return nil, err
	}
	out := make([]CompanyKey, len(rows))
	for i := range rows {
		out[i] = CompanyKey{Key: *keyOf(&rows[i].APIKey), ApplicationName: rows[i].ApplicationName, Environment: rows[i].Environment,
			CheckinEventTitle: rows[i].CheckinEventTitle}
	}
	return out, nil
}

// Applications returns the company's applications, sandbox first.
func (s *Keys) Applications(ctx context.Context, companyID int64) ([]Application, error) {
	rows, err := store.ListCompanyApplications(ctx, s.DB, companyID)
	if err != nil {
		return nil, err
	}
	out := make([]Application, len(rows))
	for i, a := range rows {
		out[i] = Application(a)
	}
	return out, nil
}

// Grantor is who makes a key: it decides which scopes the key may carry.
// A cabinet user's role (organizer.Role) gives at most its own rights; the
// service's operator (Operator) gives any.
type Grantor interface {
	// GrantScopes returns an error saying why, if the maker may not put
	// every one of scopes on a key of the environment env.
	GrantScopes(env string, scopes []string) error
}

type operator struct{}

func (operator) GrantScopes(string, []string) error { return nil }

// Operator is the service's operator (ticketctl), bound by no role.
var Operator Grantor = operator{}

// Create makes a key of the environment under the company's application
// for it (made on first use) and returns the key itself, this once. The
// scopes are checked (ValidateScopes: the error as it says), then offered
// to the maker (by.GrantScopes: its refusal as it says), and stored
// sorted. Door limits go with the checkin scope only, and the event must
// be the company's (errs.Invalid: nothing is made).
//
// A non-empty token is the cabinet form's one-time token: a second
// submission of the form makes nothing and answers a KeyMadeBefore naming
// the key the first made, and the key waits, sealed under the token, for
// TakeReveal.
func (s *Keys) Create(ctx context.Context, by Grantor, companyID int64, env, name string, scopes []string, door DoorLimits, token string) (string, *Key, error) {
	return s.CreateIn(ctx, by, companyID, env, "", name, scopes, door, token)
}

// MaxApplicationName bounds an application's name.
const MaxApplicationName = 200

// CreateIn is Create under the company's application of that name in env
// (made on first use): a partner's own application, which a sales channel
// may group. An empty application is the environment's default one, as
// Create makes keys.
func (s *Keys) CreateIn(ctx context.Context, by Grantor, companyID int64, env, application, name string, scopes []string, door DoorLimits, token string) (string, *Key, error) {
	if application != "" && (strings.TrimSpace(application) != application || len(application) > MaxApplicationName) {
		return "", nil, fmt.Errorf("application name %q: at most %d characters, without surrounding spaces", application, MaxApplicationName)
	}
	if env != Sandbox && env != Production {
		return "", nil, fmt.Errorf("environment must be %s or %s, not %q", Sandbox, Production, env)
	}
	scopes, err := ValidateScopes(scopes)
	if err != nil {
		return "", nil, err
	}
	if by == nil {
		return "", nil, errors.New("a key needs its maker to grant its scopes")
	}
	if err := by.GrantScopes(env, scopes); err != nil {
		return "", nil, fmt.Errorf("create a %s key: %w", env, err)
	}
	limits, err := door.check(scopes)
	if err != nil {
		return "", nil, err
	}
	key, hash, prefix := Generate(env)
	var claim store.KeyClaim
	if token != "" {
		if claim, err = sealForForm(token, key); err != nil {
			return "", nil, err
		}
	}
	if application == "" {
		application = env // the environment's default application
	}
	k, err := store.CreateAPIKeyIn(ctx, s.DB, companyID, env, application, name, hash, prefix, scopes, limits, claim)
	if err != nil {
		return "", nil, err
	}
	return key, keyOf(k), nil
}

// RevealMaxAge is how long a key made from the cabinet's form can be
// taken by its created page (TakeReveal).
const RevealMaxAge = 10 * time.Minute

// TakeReveal returns, once, the key the company's form with this token
// made (Create with a token), and its id: the page that shows a new key
// calls it. errs.NotFound: nothing waits (shown already, older than
// RevealMaxAge, another company's token).
func (s *Keys) TakeReveal(ctx context.Context, companyID int64, token string) (string, int64, error) {
	id, sealed, err := store.TakeAPIKeyReveal(ctx, s.DB, companyID, tokenHash(token), RevealMaxAge)
	if err != nil {
		return "", 0, err
	}
	key, err := openForForm(token, sealed)
	if err != nil {
		return "", 0, fmt.Errorf("open new key %d: %w", id, err)
	}
	return key, id, nil
}

// KeyMadeBefore: the form's token made key ID already; nothing was made.
type KeyMadeBefore = store.KeyMadeBefore

// Revoke revokes a key of the company; another company's key is
// errs.NotFound, as if it did not exist. Revoking twice is harmless.
func (s *Keys) Revoke(ctx context.Context, companyID, keyID int64) (*Key, error) {
	k, err := store.RevokeCompanyAPIKey(ctx, s.DB, companyID, keyID)
	if err != nil {
		return nil, err
	}
	s.forget(k)
	return keyOf(k), nil
}

// Errors of ReplaceDoorKey, nothing made: the key is revoked already
// (ErrKeyNotLive), or the form's token made another key's replacement
// (ErrFormUsed).
var (
	ErrKeyNotLive = store.ErrKeyNotLive
	ErrFormUsed   = store.ErrFormUsed
)

// ReplaceDoorKey revokes the company's door key keyID and makes its
// replacement in one transaction (store.ReplaceDoorKey): the same
// environment, name, event, gate and scope checkin, nothing more, so it
// needs no grantor: whoever may replace a lost scanner's key (the cabinet's
// door desk) gives the new key exactly what the old one had. The new key
// waits, sealed under the form's token, for TakeReveal, as Create's does;
// the form sent again answers KeyMadeBefore. The old key leaves the
// authenticator's cache at once.
func (s *Keys) ReplaceDoorKey(ctx context.Context, companyID, keyID int64, token string) (old, made *Key, err error) {
	env, err := store.KeyEnvironment(ctx, s.DB, companyID, keyID)
	if err != nil {
		return nil, nil, err
	}
	key, hash, prefix := Generate(env)
	claim, err := sealForForm(token, key)
	if err != nil {
		return nil, nil, err
	}
	o, m, err := store.ReplaceDoorKey(ctx, s.DB, companyID, keyID, hash, prefix, claim)
	if err != nil {
		return nil, nil, err
	}
	s.forget(o)
	return keyOf(o), keyOf(m), nil
}

// RevokeAny revokes a key of any company (the operator's ticketctl).
func (s *Keys) RevokeAny(ctx context.Context, keyID int64) (*Key, error) {
	k, err := store.RevokeAPIKey(ctx, s.DB, keyID)
	if err != nil {
		return nil, err
	}
	s.forget(k)
	return keyOf(k), nil
}

func (s *Keys) forget(k *store.APIKey) {
	if s.Auth != nil {
		s.Auth.Forget(k.ID, k.KeyHash)
	}
}

// check validates the limits against the key's (validated) scopes.
func (d DoorLimits) check(scopes []string) (store.DoorLimits, error) {
	var out store.DoorLimits
	gate := strings.TrimSpace(d.Gate)
	switch {
	case d.EventID == 0 && gate == "":
		return out, nil
	case !slices.Contains(scopes, ScopeCheckin):
		return out, errs.Invalid("scopes", "an event or a gate limits a door key: give the key the checkin scope (alone)", scopes)
	case d.EventID < 0:
		return out, errs.Invalid("event", "the event must be an event id", d.EventID)
	case !utf8.ValidString(gate) || strings.ContainsFunc(gate, unicode.IsControl):
		return out, errs.Invalid("gate", "the gate's name is text without control characters", gate)
	case utf8.RuneCountInString(gate) > MaxGate:
		// Characters, as the scan's gate field counts them.
		return out, errs.Invalid("gate", fmt.Sprintf("the gate's name has at most %d characters", MaxGate), gate)
	}
	if d.EventID != 0 {
		out.EventID = &d.EventID
	}
	if gate != "" {
		out.Gate = &gate
	}
	return out, nil
}

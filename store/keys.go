package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// Company is an organizer: it owns a catalog and API keys.
type Company struct {
	bun.BaseModel `bun:"table:companies"`
	ID            int64  `bun:"id,pk,autoincrement" json:"id"`
	Name          string `bun:"name" json:"name"`
	// Timezone is the IANA zone the company's report days are in.
	Timezone string `bun:"timezone,nullzero,default:'UTC'" json:"timezone"`
	// TwoFactorRequired: owners and finance sign in with a second factor.
	TwoFactorRequired bool      `bun:"two_factor_required" json:"two_factor_required"`
	CreatedAt         time.Time `bun:"created_at,nullzero,default:now()" json:"created_at"`
}

// CreateCompany stores a new company (its report days in UTC).
func CreateCompany(ctx context.Context, db bun.IDB, name string) (*Company, error) {
	return InsertCompany(ctx, db, &Company{Name: name})
}

// InsertCompany stores a new company as c says (an empty Timezone: UTC).
func InsertCompany(ctx context.Context, db bun.IDB, c *Company) (*Company, error) {
	if _, err := db.NewInsert().Model(c).Returning("*").Exec(ctx); err != nil {
		return nil, fmt.Errorf("create company %q: %w", c.Name, err)
	}
	return c, nil
}

// GetCompanyTimezone is the IANA zone of the company's report days.
func GetCompanyTimezone(ctx context.Context, db bun.IDB, companyID int64) (string, error) {
	var tz string
	if err := db.NewRaw("SELECT timezone FROM companies WHERE id = ?", companyID).Scan(ctx, &tz); err != nil {
		return "", notFound(err, fmt.Sprintf("company %d", companyID))
	}
	return tz, nil
}

// UnknownTimezoneError: Postgres does not know the time zone name, though
// Go may (their zone databases differ: Go also reads the system's files,
// so it accepts "Europe//Moscow"). Nothing was changed.
type UnknownTimezoneError struct{ Name string }

func (e *UnknownTimezoneError) Error() string {
	return fmt.Sprintf("%q is not a time zone name the database knows (such as Europe/Moscow or UTC)", e.Name)
}

// SetCompanyTimezone sets the zone of the company's report days (a name
// Postgres does not know is refused by the column's check:
// *UnknownTimezoneError).
func SetCompanyTimezone(ctx context.Context, db bun.IDB, companyID int64, tz string) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		var from string
		err := tx.NewRaw(`WITH old AS (SELECT timezone FROM companies WHERE id = ? FOR UPDATE)
			UPDATE companies c SET timezone = ? FROM old WHERE c.id = ? RETURNING old.timezone`, companyID, tz, companyID).Scan(ctx, &from)
		if err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "22023" { // invalid_parameter_value: time zone not recognized
				return AuditEntry{}, &UnknownTimezoneError{Name: tz}
			}
			if errors.Is(err, sql.ErrNoRows) {
				return AuditEntry{}, fmt.Errorf("company %d: %w", companyID, errs.NotFound)
			}
			return AuditEntry{}, fmt.Errorf("set time zone of company %d: %w", companyID, err)
		}
		return AuditEntry{CompanyID: companyID, Action: AuditCompanyZone, Subject: "time zone " + tz,
			Detail: map[string]any{"from": from, "to": tz}}, nil
	})
}

// GetCompanyByName returns the oldest company of that name (errs.NotFound: none).
func GetCompanyByName(ctx context.Context, db bun.IDB, name string) (*Company, error) {
	c := new(Company)
	if err := db.NewSelect().Model(c).Where("name = ?", name).OrderExpr("id").Limit(1).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("company %q", name))
	}
	return c, nil
}

// APIKey is a stored key: its hash, never the key.
type APIKey struct {
	bun.BaseModel  `bun:"table:api_keys"`
	ID             int64      `bun:"id,pk,autoincrement" json:"id"`
	ApplicationID  int64      `bun:"application_id" json:"application_id"`
	Name           string     `bun:"name" json:"name"`
	KeyHash        []byte     `bun:"key_hash" json:"-"`
	KeyPrefix      string     `bun:"key_prefix" json:"prefix"`
	Scopes         []string   `bun:"scopes,array" json:"scopes"`
	CreatedAt      time.Time  `bun:"created_at,nullzero,default:now()" json:"created_at"`
	RevokedAt      *time.Time `bun:"revoked_at" json:"revoked_at,omitempty"`
	RateLimitRPS   *float64   `bun:"rate_limit_rps" json:"rate_limit_rps,omitempty"`
	RateLimitBurst *int       `bun:"rate_limit_burst" json:"rate_limit_burst,omitempty"`
	LastUsedAt     *time.Time `bun:"last_used_at" json:"last_used_at,omitempty"`
	// A door key may be limited to one event and one gate.
	CheckinEventID *int64  `bun:"checkin_event_id" json:"checkin_event_id,omitempty"`
	CheckinGate    *string `bun:"checkin_gate" json:"checkin_gate,omitempty"`
	// CreationToken is the SHA-256 of the cabinet form's one-time token
	// that made the key: a form sent twice makes one key (KeyMadeBefore).
	CreationToken []byte `bun:"creation_token" json:"-"`
	// Reveal is the key's plaintext sealed under the form's token, until
	// the created page takes it (TakeAPIKeyReveal); the token itself is
	// never stored, so this alone opens nothing.
	Reveal []byte `bun:"reveal" json:"-"`
}

// KeyClaim is what a key made from the cabinet's form carries: the hash
// of the form's token and the sealed plaintext. The zero value: none.
type KeyClaim struct {
	TokenHash []byte
	Reveal    []byte
}

// DoorLimits limit a door key (scope checkin) to one event and one gate;
// nil: any of the company's events, any gate.
type DoorLimits struct {
	EventID *int64
	Gate    *string
}

// CreateAPIKey stores a key's hash under the company's application for the
// environment, creating that application on first use. A door key's event
// must be the company's (errs.Invalid at "event" otherwise, nothing made).
//
// A claim claims the form that asked for the key: if its token made a
// key already, nothing is made and the error is a *KeyMadeBefore naming
// that key.
func CreateAPIKey(ctx context.Context, db *bun.DB, companyID int64, env, name string, hash []byte, prefix string, scopes []string, door DoorLimits, claim KeyClaim) (*APIKey, error) {
	return CreateAPIKeyIn(ctx, db, companyID, env, env, name, hash, prefix, scopes, door, claim)
}

// CreateAPIKeyIn is CreateAPIKey under the company's application of that
// name in env (created on first use): a partner's own application, which
// a sales channel may group (the default one is named after env).
func CreateAPIKeyIn(ctx context.Context, db *bun.DB, companyID int64, env, application, name string, hash []byte, prefix string, scopes []string, door DoorLimits, claim KeyClaim) (*APIKey, error) {
	key := &APIKey{Name: name, KeyHash: hash, KeyPrefix: prefix, Scopes: scopes, CheckinEventID: door.EventID, CheckinGate: door.Gate,
		CreationToken: claim.TokenHash, Reveal: claim.Reveal}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var exists bool
		if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM companies WHERE id = ?)", companyID).Scan(ctx, &exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("company %d: %w", companyID, errs.NotFound)
		}
		if door.EventID != nil {
			var own bool
			if err := tx.NewRaw("SELECT EXISTS (SELECT 1 FROM events WHERE id = ? AND company_id = ?)",
				*door.EventID, companyID).Scan(ctx, &own); err != nil {
				return err
			}
			if !own {
				return errs.Invalid("event", fmt.Sprintf("event %d is not one of the company's events", *door.EventID), *door.EventID)
			}
		}
		// The application, made on first use (the environment's default
		// one is named after it). Two first keys at once: the second insert waits for the first
		// and does nothing, and its statement's snapshot cannot see the
		// row the first committed; the statement run again does.
		var err error
		for range 2 {
			err = tx.NewRaw(`
				WITH ins AS (
					INSERT INTO applications (company_id, name, environment) VALUES (?, ?, ?)
					ON CONFLICT (company_id, environment, name) DO NOTHING RETURNING id)
				SELECT id FROM ins UNION ALL
				SELECT id FROM applications WHERE company_id = ? AND environment = ? AND name = ?`,
				companyID, application, env, companyID, env, application).Scan(ctx, &key.ApplicationID)
			if !errors.Is(err, sql.ErrNoRows) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("the %s application: %w", env, err)
		}
		made := func() error {
			return Audit(ctx, tx, AuditEntry{CompanyID: companyID, Action: AuditKeyCreate, Subject: keySubject(key),
				Detail: map[string]any{"key_id": key.ID, "environment": env, "application": application, "scopes": scopes}})
		}
		if claim.TokenHash == nil {
			if _, err = tx.NewInsert().Model(key).Returning("*").Exec(ctx); err != nil {
				return err
			}
			return made()
		}
		// The unique index on creation_token is the claim: a second
		// submission of the form waits for the first and then inserts
		// nothing.
		res, err := tx.NewInsert().Model(key).On("CONFLICT (creation_token) DO NOTHING").Returning("*").Exec(ctx)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 1 {
				return made()
			}
		}
		var before KeyMadeBefore
		err = tx.NewRaw(`SELECT k.id FROM api_keys k JOIN applications a ON a.id = k.application_id
			WHERE k.creation_token = ? AND a.company_id = ?`, claim.TokenHash, companyID).Scan(ctx, &before.ID)
		if errors.Is(err, sql.ErrNoRows) {
			// Another company's form token: never made here, and
			// nothing to say about it.
			return errs.Invalid("token", "the form's token is not this page's: open the page again", nil)
		}
		if err != nil {
			return fmt.Errorf("key made with form token: %w", err)
		}
		return &before
	})
	if err != nil {
		return nil, fmt.Errorf("create %s key for company %d: %w", env, companyID, err)
	}
	return key, nil
}

// TakeAPIKeyReveal takes the sealed plaintext of the company's key made
// with the form token of this hash, younger than maxAge: one statement
// returns it and clears it, so it is taken once however many pages ask at
// once. errs.NotFound: nothing waits (taken, too old, not the company's).
func TakeAPIKeyReveal(ctx context.Context, db bun.IDB, companyID int64, tokenHash []byte, maxAge time.Duration) (int64, []byte, error) {
	var out struct {
		ID     int64  `bun:"id"`
		Reveal []byte `bun:"reveal"`
	}
	err := db.NewRaw(`
		WITH k AS (
			SELECT k.id, k.reveal FROM api_keys k JOIN applications a ON a.id = k.application_id
			WHERE a.company_id = ? AND k.creation_token = ? AND k.reveal IS NOT NULL
			  AND k.created_at > now() - make_interval(secs => ?)
			FOR UPDATE OF k)
		UPDATE api_keys SET reveal = NULL FROM k WHERE api_keys.id = k.id
		RETURNING k.id, k.reveal`, companyID, tokenHash, maxAge.Seconds()).Scan(ctx, &out)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, fmt.Errorf("new key to show: %w", errs.NotFound)
	}
	if err != nil {
		return 0, nil, fmt.Errorf("take the new key to show: %w", err)
	}
	return out.ID, out.Reveal, nil
}

// ClearStaleAPIKeyReveals drops sealed plaintexts older than maxAge that
// no page took (housekeeping).
func ClearStaleAPIKeyReveals(ctx context.Context, db bun.IDB, maxAge time.Duration) error {
	_, err := db.NewRaw(`UPDATE api_keys SET reveal = NULL WHERE reveal IS NOT NULL AND created_at <= now() - make_interval(secs => ?)`,
		maxAge.Seconds()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("clear stale new-key reveals: %w", err)
	}
	return nil
}

// KeyMadeBefore: the form's token made key ID already (a form sent
// twice); nothing new was made.
type KeyMadeBefore struct{ ID int64 }

func (e *KeyMadeBefore) Error() string {
	return fmt.Sprintf("api key %d made with this form already", e.ID)
}

// RevokeAPIKey marks a key revoked; revoking twice is harmless.
func RevokeAPIKey(ctx context.Context, db bun.IDB, keyID int64) (*APIKey, error) {
	key := &APIKey{}
	err := audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		err := tx.NewRaw(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ? RETURNING *`, keyID).Scan(ctx, key)
		if err != nil {
			return AuditEntry{}, notFound(err, fmt.Sprintf("revoke key %d", keyID))
		}
		var companyID int64
		if err := tx.NewRaw("SELECT company_id FROM applications WHERE id = ?", key.ApplicationID).Scan(ctx, &companyID); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: companyID, Action: AuditKeyRevoke, Subject: keySubject(key), Detail: map[string]any{"key_id": key.ID}}, nil
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}

// keySubject names a key in the audit log: its prefix and name.
func keySubject(k *APIKey) string {
	return auditSubject("key", k.KeyPrefix, "("+k.Name+")")
}

// KeyOwner is what authentication needs to know about a key.
type KeyOwner struct {
	KeyID          int64
	ApplicationID  int64
	CompanyID      int64
	Environment    string
	Scopes         []string
	Revoked        bool
	RateLimitRPS   *float64
	RateLimitBurst *int
	// A door key (scope checkin) may be limited to one event and gate.
	CheckinEventID *int64
	CheckinGate    *string
	// ChannelID is the sales channel of the key's application (0: none,
	// it sells in general sale only).
	ChannelID int64
}

// GetAPIKeyByHash finds a key by its SHA-256 hash.
func GetAPIKeyByHash(ctx context.Context, db bun.IDB, hash []byte) (*KeyOwner, error) {
	return getKeyOwner(ctx, db, "k.key_hash = ?", hash)
}

// GetAPIKeyByID finds a key's owner by the key's id (revoked keys too):
// a seat map token names its key by id.
func GetAPIKeyByID(ctx context.Context, db bun.IDB, keyID int64) (*KeyOwner, error) {
	return getKeyOwner(ctx, db, "k.id = ?", keyID)
}

func getKeyOwner(ctx context.Context, db bun.IDB, where string, arg any) (*KeyOwner, error) {
	var k struct {
		KeyID          int64
		ApplicationID  int64
		CompanyID      int64
		Environment    string
		Scopes         []string `bun:",array"`
		Revoked        bool
		RateLimitRPS   *float64
		RateLimitBurst *int
		CheckinEventID *int64
		CheckinGate    *string
		ChannelID      int64
	}
	err := db.NewRaw(`
		SELECT k.id AS key_id, a.id AS application_id, a.company_id, a.environment, k.scopes,
			k.revoked_at IS NOT NULL AS revoked, k.rate_limit_rps, k.rate_limit_burst, k.checkin_event_id, k.checkin_gate,
			coalesce(ca.channel_id, 0) AS channel_id
		FROM api_keys k JOIN applications a ON a.id = k.application_id
		LEFT JOIN channel_applications ca ON ca.application_id = a.id
		WHERE `+where, arg).Scan(ctx, &k)
	if err != nil {
		return nil, notFound(err, "find key")
	}
	o := KeyOwner(k)
	return &o, nil
}

// CompanyKey is a key as the cabinet lists it, with its application (and
// a door key's event's title).
type CompanyKey struct {
	APIKey
	ApplicationName   string  `bun:"application_name"`
	Environment       string  `bun:"environment"`
	CheckinEventTitle *string `bun:"checkin_event_title"`
}

// ListCompanyKeys lists the company's keys, newest first.
func ListCompanyKeys(ctx context.Context, db bun.IDB, companyID int64) ([]CompanyKey, error) {
	var out []CompanyKey
	err := db.NewRaw(`
		SELECT k.*, a.name AS application_name, a.environment, e.title AS checkin_event_title
		FROM api_keys k JOIN applications a ON a.id = k.application_id
		LEFT JOIN events e ON e.id = k.checkin_event_id
		WHERE a.company_id = ? ORDER BY a.environment, k.id DESC`, companyID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list keys of company %d: %w", companyID, err)
	}
	return out, nil
}

// RevokeCompanyAPIKey revokes a key of the company; another company's key
// is errs.NotFound, as if it did not exist.
func RevokeCompanyAPIKey(ctx context.Context, db bun.IDB, companyID, keyID int64) (*APIKey, error) {
	key := &APIKey{}
	err := audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		err := tx.NewRaw(`UPDATE api_keys k SET revoked_at = COALESCE(k.revoked_at, now())
			FROM applications a WHERE a.id = k.application_id AND a.company_id = ? AND k.id = ? RETURNING k.*`,
			companyID, keyID).Scan(ctx, key)
		if err != nil {
			return AuditEntry{}, notFound(err, fmt.Sprintf("revoke key %d of company %d", keyID, companyID))
		}
		return AuditEntry{CompanyID: companyID, Action: AuditKeyRevoke, Subject: keySubject(key), Detail: map[string]any{"key_id": key.ID}}, nil
	})
	if err != nil {
		return nil, err
	}
	return key, nil
}

// TouchKeysUsed records when keys last authenticated a request: one
// statement for a batch of the request log, never moving a time backwards.
func TouchKeysUsed(ctx context.Context, db bun.IDB, lastUsed map[int64]time.Time) error {
	if len(lastUsed) == 0 {
		return nil
	}
	ids := make([]int64, 0, len(lastUsed))
	times := make([]time.Time, 0, len(lastUsed))
	for id, t := range lastUsed {
		ids = append(ids, id)
		times = append(times, t)
	}
	_, err := db.NewRaw(`UPDATE api_keys k SET last_used_at = u.t
		FROM unnest(?::bigint[], ?::timestamptz[]) AS u(id, t)
		WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.t)`,
		pgdialect.Array(ids), pgdialect.Array(times)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("record last use of %d keys: %w", len(ids), err)
	}
	return nil
}

// CompanyApplication is an application with its count of usable keys.
type CompanyApplication struct {
	ID          int64     `bun:"id"`
	Name        string    `bun:"name"`
	Environment string    `bun:"environment"`
	CreatedAt   time.Time `bun:"created_at"`
	ActiveKeys  int       `bun:"active_keys"`
	RevokedKeys int       `bun:"revoked_keys"`
}

// ListCompanyApplications lists the company's applications, sandbox first.
func ListCompanyApplications(ctx context.Context, db bun.IDB, companyID int64) ([]CompanyApplication, error) {
	var out []CompanyApplication
	err := db.NewRaw(`
		SELECT a.id, a.name, a.environment, a.created_at,
			count(k.id) FILTER (WHERE k.revoked_at IS NULL) AS active_keys,
			count(k.id) FILTER (WHERE k.revoked_at IS NOT NULL) AS revoked_keys
		FROM applications a LEFT JOIN api_keys k ON k.application_id = a.id
		WHERE a.company_id = ? GROUP BY a.id ORDER BY a.environment DESC, a.id`, companyID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list applications of company %d: %w", companyID, err)
	}
	return out, nil
}

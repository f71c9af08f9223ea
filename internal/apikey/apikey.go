// Package apikey makes API keys and authenticates requests by them. A key is
// shown once; the store keeps only its SHA-256 hash.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/uptrace/bun"
	"golang.org/x/sync/singleflight"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

// Scopes a key may carry.
const (
	ScopeCatalogRead = "catalog:read"
	ScopeOrdersRead  = "orders:read"
	ScopeOrdersWrite = "orders:write"
	// Partner webhook endpoints: read them and their deliveries; create,
	// change, delete, rotate, test and redeliver.
	ScopeWebhooksRead  = "webhooks:read"
	ScopeWebhooksWrite = "webhooks:write"
	// ScopeCheckin is a door key's: scanning tickets at the door, nothing
	// of orders or buyers beyond what a door needs.
	ScopeCheckin = "checkin"
)

// AllScopes lists every scope in a stable order: the scopes a key may be
// given, not the ones it gets by default (PartnerScopes).
var AllScopes = []string{ScopeCatalogRead, ScopeOrdersRead, ScopeOrdersWrite, ScopeWebhooksRead, ScopeWebhooksWrite, ScopeCheckin}

// PartnerScopes are a partner's: every scope but checkin. A key made
// without naming its scopes gets these, so no storefront's key admits
// tickets at the door; a door key is asked for by name.
var PartnerScopes = []string{ScopeCatalogRead, ScopeOrdersRead, ScopeOrdersWrite, ScopeWebhooksRead, ScopeWebhooksWrite}

// Environments of an application.
const (
	Sandbox    = "sandbox"
	Production = "production"
)

// Generate makes a new key "tk_{env}_{48 hex}" and returns it with its hash
// and a short prefix that identifies it in listings.
func Generate(env string) (key string, hash []byte, prefix string) {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	key = "tk_" + env + "_" + hex.EncodeToString(b)
	return key, Hash(key), key[:len("tk_"+env+"_")+6]
}

// WellFormed tells whether key has the shape Generate gives every key:
// "tk_sandbox_" or "tk_production_" and 48 lowercase hex digits. Anything
// else cannot be a key, so it is refused without a query or a cache entry.
func WellFormed(key string) bool {
	rest, ok := strings.CutPrefix(key, "tk_"+Sandbox+"_")
	if !ok {
		rest, ok = strings.CutPrefix(key, "tk_"+Production+"_")
	}
	if !ok || len(rest) != 48 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hash is the SHA-256 of a key, as stored.
func Hash(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// ErrDoorKeyMixed refuses a key with the checkin scope and any other: a
// door key reads nothing of orders or buyers.
var ErrDoorKeyMixed = errors.New("a door key carries only the checkin scope: it cannot also have partner scopes (orders, buyers, catalog, webhooks)")

// ValidateScopes checks a scope list and returns it sorted and
// deduplicated; checkin goes alone (ErrDoorKeyMixed).
func ValidateScopes(scopes []string) ([]string, error) {
	var out []string
	for _, s := range scopes {
		s = strings.TrimSpace(s)
		if !slices.Contains(AllScopes, s) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(AllScopes, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("a key needs at least one scope")
	}
	if slices.Contains(out, ScopeCheckin) && len(out) > 1 {
		return nil, ErrDoorKeyMixed
	}
	slices.Sort(out)
	return out, nil
}

// Principal is the caller behind a valid key.
type Principal struct {
	KeyID         int64
	ApplicationID int64
	CompanyID     int64
	Environment   string
	Scopes        []string
	// RateLimitRPS and RateLimitBurst override the service default when set.
	RateLimitRPS   *float64
	RateLimitBurst *int
	// CheckinEventID and CheckinGate limit a door key to one event and one
	// gate (nil: any of the company's).
	CheckinEventID *int64
	CheckinGate    *string
	// ChannelID is the sales channel the key's application sells in (0:
	// none, general sale only); a change reaches a cached key within the
	// cache's TTL.
	ChannelID int64
}

// Has tells whether the key carries the scope.
func (p *Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// IsTest tells whether the key is a sandbox key: its orders are test orders.
func (p *Principal) IsTest() bool { return p.Environment == Sandbox }

// ErrInvalidKey means the key is missing, malformed, unknown or revoked.
var ErrInvalidKey = errors.New("invalid API key")

// Authenticator resolves keys to principals, caching answers briefly so a
// request does not cost a query; a revoked key stops working within the TTL.
type Authenticator struct {
	db    bun.IDB
	cache *expirable.LRU[string, *Principal] // nil principal: unknown or revoked
	// byID caches keys looked up by id (seat map tokens name their key so),
	// for the same TTL.
	byID *expirable.LRU[int64, *Principal]
	// recent holds keys that authenticated within RecentlyValidFor, much
	// longer than the cache's life: a partner idle for a while still
	// passes the failed-auth block of an address it shares with an
	// attacker. Kept only beside a cache.
	recent *expirable.LRU[string, struct{}]
	// An on-sale rush sends hundreds of requests with one key at once;
	// when its cache entry has lapsed, one query answers them all.
	loads singleflight.Group
	// forgets counts Forget calls: a lookup that began before one does
	// not put its answer in the cache. mu makes that check and the cache
	// write one step against a Forget.
	mu      sync.Mutex
	forgets uint64
}

// RecentlyValidFor is how long a key that authenticated counts as known
// valid for the failed-authentication block.
const RecentlyValidFor = 24 * time.Hour

// NewAuthenticator caches up to 10,000 keys for ttl; ttl <= 0 disables the cache.
func NewAuthenticator(db bun.IDB, ttl time.Duration) *Authenticator {
	a := &Authenticator{db: db}
	if ttl > 0 {
		a.cache = expirable.NewLRU[string, *Principal](10_000, nil, ttl)
		a.byID = expirable.NewLRU[int64, *Principal](10_000, nil, ttl)
		a.recent = expirable.NewLRU[string, struct{}](10_000, nil, RecentlyValidFor)
	}
	return a
}

// KnownValid tells, from memory alone, whether key authenticated within
// RecentlyValidFor (and was not found revoked since); it never queries.
func (a *Authenticator) KnownValid(key string) bool {
	if a.recent == nil || !WellFormed(key) {
		return false
	}
	return a.recent.Contains(string(Hash(key)))
}

// Authenticate returns the principal of a key, or ErrInvalidKey.
func (a *Authenticator) Authenticate(ctx context.Context, key string) (*Principal, error) {
	if !WellFormed(key) {
		return nil, ErrInvalidKey
	}
	hash := Hash(key)
	cacheKey := string(hash)
	if a.cache != nil {
		if p, ok := a.cache.Get(cacheKey); ok {
			if p == nil {
				return nil, ErrInvalidKey
			}
			a.stillValid(cacheKey)
			return p, nil
		}
	}
	if a.cache == nil {
		return a.lookup(ctx, hash)
	}
	ch := a.loads.DoChan(cacheKey, func() (any, error) {
		// Shared by every caller waiting: no one caller's cancel ends it.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		a.mu.Lock()
		gen := a.forgets
		// A caller that missed the cache just before an earlier flight
		// landed finds that flight's answer here instead of reading again.
		if p, ok := a.cache.Peek(cacheKey); ok {
			a.mu.Unlock()
			return p, nil
		}
		a.mu.Unlock()
		p, err := a.lookup(lctx, hash)
		if err != nil && !errors.Is(err, ErrInvalidKey) {
			return nil, err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.forgets == gen {
			a.cache.Add(cacheKey, p)
			if p != nil {
				a.recent.Add(cacheKey, struct{}{})
			} else {
				a.recent.Remove(cacheKey) // revoked: no longer passes
			}
		}
		return p, nil
	})
	return awaitLookup(ctx, ch, "authenticate key")
}

// ByID returns the principal of the key with this id, or ErrInvalidKey
// for a key unknown or revoked: a seat map token names its key by id, so
// a revoked key's tokens stop working as the key does (within the TTL).
// Answers are cached like Authenticate's, and concurrent lookups of one
// key share one query (every buyer's browser of a shop polls with it).
func (a *Authenticator) ByID(ctx context.Context, keyID int64) (*Principal, error) {
	if a.byID == nil {
		return a.lookupOwner(store.GetAPIKeyByID(ctx, a.db, keyID))
	}
	if p, ok := a.byID.Get(keyID); ok {
		if p == nil {
			return nil, ErrInvalidKey
		}
		return p, nil
	}
	ch := a.loads.DoChan("id:"+strconv.FormatInt(keyID, 10), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		a.mu.Lock()
		gen := a.forgets
		a.mu.Unlock()
		p, err := a.lookupOwner(store.GetAPIKeyByID(lctx, a.db, keyID))
		if err != nil && !errors.Is(err, ErrInvalidKey) {
			return nil, err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.forgets == gen {
			a.byID.Add(keyID, p)
		}
		return p, nil
	})
	return awaitLookup(ctx, ch, "authenticate key "+strconv.FormatInt(keyID, 10))
}

// awaitLookup waits for a shared lookup's principal, or for ctx: a caller
// that gives up does not cancel the lookup the others wait for. A nil
// principal is a key unknown or revoked.
func awaitLookup(ctx context.Context, ch <-chan singleflight.Result, what string) (*Principal, error) {
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", what, ctx.Err())
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		p := r.Val.(*Principal)
		if p == nil {
			return nil, ErrInvalidKey
		}
		return p, nil
	}
}

// lookup reads a key's principal: ErrInvalidKey (and a nil principal) for
// a key unknown or revoked.
func (a *Authenticator) lookup(ctx context.Context, hash []byte) (*Principal, error) {
	return a.lookupOwner(store.GetAPIKeyByHash(ctx, a.db, hash))
}

func (a *Authenticator) lookupOwner(owner *store.KeyOwner, err error) (*Principal, error) {
	switch {
	case errors.Is(err, errs.NotFound):
		return nil, ErrInvalidKey
	case err != nil:
		return nil, fmt.Errorf("authenticate key: %w", err)
	case owner.Revoked:
		return nil, ErrInvalidKey
	}
	return &Principal{KeyID: owner.KeyID, ApplicationID: owner.ApplicationID, CompanyID: owner.CompanyID,
		Environment: owner.Environment, Scopes: owner.Scopes, RateLimitRPS: owner.RateLimitRPS, RateLimitBurst: owner.RateLimitBurst,
		CheckinEventID: owner.CheckinEventID, CheckinGate: owner.CheckinGate, ChannelID: owner.ChannelID}, nil
}

// stillValid marks a key answered from the cache recently valid, unless a
// Forget came between that answer and now: the check and the mark are one
// step against Forget, or a revoked key would pass the failed-auth block
// for a day.
func (a *Authenticator) stillValid(cacheKey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.cache.Peek(cacheKey); ok && p != nil {
		a.recent.Add(cacheKey, struct{}{})
	}
}

// Forget drops a key (by its id and stored hash) from this process's
// cache, so a key revoked here stops working at once rather than within
// the TTL, and its seat map tokens with it: their by-id entry may be
// cached when the hash is not. Other api instances still answer from
// their caches until the TTL passes, as after a revocation with ticketctl.
func (a *Authenticator) Forget(keyID int64, hash []byte) {
	if a.cache == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.forgets++
	a.loads.Forget(string(hash)) // a request from now on reads afresh
	a.loads.Forget("id:" + strconv.FormatInt(keyID, 10))
	a.byID.Remove(keyID)
	a.cache.Remove(string(hash))
	a.recent.Remove(string(hash))
}

// Package seatmap makes and checks seat map tokens: what a buyer's browser
// shows to read one event's scheme and availability for a partner, without
// the partner's API key.
//
// A token is stateless: "smt_" and the base64url (unpadded) of a small
// versioned payload and its HMAC-SHA256. The MAC key is derived from
// ORDER_TOKEN_SECRET under a label of its own (delivery.DeriveKey), so a
// seat map token never opens an order page nor the other way round; the
// payload names the secret that signed it, and the previous secrets still
// verify tokens signed before a rotation. Nothing is stored: a token lives
// until its expiry (at most MaxTTL).
package seatmap

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/delivery"
)

// Prefix starts every seat map token: a partner's API key (tk_…) is
// never one, nor the other way round.
const Prefix = "smt_"

// Bounds of a token's life, and the default.
const (
	MinTTL     = time.Minute
	MaxTTL     = 4 * time.Hour
	DefaultTTL = time.Hour
)

// MaxLength bounds a token: a longer string is refused before it is
// decoded. A token of the largest ids and the furthest expiry is 114
// characters.
const MaxLength = 128

// version of the payload's layout.
const version byte = 1

// The payload's fixed head: version, secret id (4), environment, nonce.
const (
	nonceLen  = 8
	headerLen = 1 + 4 + 1 + nonceLen
)

// label derives the MAC key from a secret for this use alone.
const label = "seat-map-token:"

// Errors of Open: a token that is not one of ours (malformed, forged,
// tampered with, signed with a secret no longer configured) and one that
// was ours but has expired.
var (
	ErrInvalid = errors.New("invalid seat map token")
	ErrExpired = errors.New("seat map token expired")
)

// Claims are what a token says: whose key made it, in which environment,
// for which event, until when. The key's current channel and whether it
// is still valid are read at each use (by KeyID), not carried.
type Claims struct {
	CompanyID int64
	KeyID     int64
	EventID   int64
	Sandbox   bool
	ExpiresAt time.Time // whole seconds
}

// Signer makes tokens with the current secret and checks them with it or
// any previous one.
type Signer struct {
	keys []signKey // keys[0] signs
}

type signKey struct {
	id  [4]byte
	key [32]byte
}

// NewSigner builds a signer from the current secret and previous ones.
func NewSigner(current string, previous ...string) (*Signer, error) {
	if current == "" {
		return nil, errors.New("seat map tokens: the secret is empty")
	}
	s := &Signer{}
	for _, sec := range append([]string{current}, previous...) {
		if sec == "" {
			continue
		}
		key, id := delivery.DeriveKey(label, sec)
		s.keys = append(s.keys, signKey{id: id, key: key})
	}
	return s, nil
}

// Make signs a token of c.
func (s *Signer) Make(c Claims) string {
	k := s.keys[0]
	// version, secret id, environment, a nonce, then the numbers as
	// uvarints. The nonce makes each token its own: two made for one key
	// and event in one second would otherwise be one token, sharing one
	// rate budget across every page that holds it.
	p := make([]byte, 0, headerLen+4*binary.MaxVarintLen64+sha256.Size)
	p = append(p, version)
	p = append(p, k.id[:]...)
	env := byte(0)
	if c.Sandbox {
		env = 1
	}
	p = append(p, env)
	p = append(p, make([]byte, nonceLen)...)
	_, _ = rand.Read(p[len(p)-nonceLen:]) // never fails (crypto/rand)
	for _, n := range []int64{c.CompanyID, c.KeyID, c.EventID, c.ExpiresAt.Unix()} {
		p = binary.AppendUvarint(p, uint64(n))
	}
	p = append(p, mac(k.key, p)...)
	return Prefix + base64.RawURLEncoding.EncodeToString(p)
}

func mac(key [32]byte, payload []byte) []byte {
	m := hmac.New(sha256.New, key[:])
	m.Write(payload)
	return m.Sum(nil)
}

// Open checks a token and returns its claims: ErrInvalid unless a
// configured secret signed exactly this payload, ErrExpired (with the
// claims) once now has reached its expiry.
func (s *Signer) Open(token string, now time.Time) (Claims, error) {
	if len(token) > MaxLength {
		return Claims{}, fmt.Errorf("%w: longer than %d characters", ErrInvalid, MaxLength)
	}
	rest, ok := strings.CutPrefix(token, Prefix)
	if !ok {
		return Claims{}, fmt.Errorf("%w: not %s…", ErrInvalid, Prefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < headerLen+sha256.Size {
		return Claims{}, fmt.Errorf("%w: not base64url of a token", ErrInvalid)
	}
	payload, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	if payload[0] != version {
		return Claims{}, fmt.Errorf("%w: version %d", ErrInvalid, payload[0])
	}
	signed := false
	for _, k := range s.keys {
		if [4]byte(payload[1:5]) == k.id {
			signed = hmac.Equal(sum, mac(k.key, payload))
			break
		}
	}
	if !signed {
		return Claims{}, fmt.Errorf("%w: signature", ErrInvalid)
	}
	// Signed by us: the layout is ours, but read it defensively all the same.
	c := Claims{Sandbox: payload[5] == 1}
	nums := payload[headerLen:]
	var vals [4]int64
	for i := range vals {
		v, n := binary.Uvarint(nums)
		if n <= 0 || v > 1<<62 {
			return Claims{}, fmt.Errorf("%w: payload", ErrInvalid)
		}
		vals[i], nums = int64(v), nums[n:]
	}
	if len(nums) != 0 {
		return Claims{}, fmt.Errorf("%w: payload", ErrInvalid)
	}
	c.CompanyID, c.KeyID, c.EventID, c.ExpiresAt = vals[0], vals[1], vals[2], time.Unix(vals[3], 0).UTC()
	if !now.Before(c.ExpiresAt) {
		return c, ErrExpired
	}
	return c, nil
}

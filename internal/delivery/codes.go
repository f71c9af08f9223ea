package delivery

import (
	"context"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/store"
)

// CodeSigner signs tickets' codes (package ticketcode, format 2) with
// their events' Ed25519 keys. An event's key is made the first time it is
// needed and stored with its private half sealed (AES-256-GCM) under the
// order token secret (a key derived from it for this use alone); the
// previous secrets still open keys sealed before a rotation. Opened keys
// are kept in memory: they never change.
type CodeSigner struct {
	seals []seal // seals[0] seals
	open  sync.Map
}

type seal struct {
	id   [4]byte
	aead cipher.AEAD
}

// NewCodeSigner builds a signer from the current secret and previous ones.
func NewCodeSigner(current string, previous ...string) (*CodeSigner, error) {
	if current == "" {
		return nil, errors.New("ticket code signer: the secret is empty")
	}
	c := &CodeSigner{}
	for _, s := range append([]string{current}, previous...) {
		if s == "" {
			continue
		}
		id, aead, err := SealWith("event-signing-key-seal:", s)
		if err != nil {
			return nil, err
		}
		c.seals = append(c.seals, seal{id: id, aead: aead})
	}
	return c, nil
}

// PublicKey is the event's public key of the environment (isTest: the
// sandbox's), made now if the event has none.
func (c *CodeSigner) PublicKey(ctx context.Context, db bun.IDB, eventID int64, isTest bool) (ed25519.PublicKey, error) {
	k, err := c.key(ctx, db, eventID, isTest)
	if err != nil {
		return nil, err
	}
	return ed25519.PublicKey(k.PublicKey), nil
}

// Sign returns the codes of tickets of one event, in their order. An event
// whose key was sealed with a secret no longer configured signs nothing
// (ErrUnknownSeal): its tickets show their bare barcodes until the old
// secret is listed again.
func (c *CodeSigner) Sign(ctx context.Context, db bun.IDB, eventID int64, isTest bool, tickets []ticketcode.Code) ([]string, error) {
	if len(tickets) == 0 {
		return nil, nil
	}
	k, err := c.privateKey(ctx, db, eventID, isTest)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(tickets))
	for i, t := range tickets {
		t.EventID = eventID
		if out[i], err = ticketcode.Sign(k, t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// key is the event's stored key, made now if it has none: of two made at
// once, the one stored first is kept.
func (c *CodeSigner) key(ctx context.Context, db bun.IDB, eventID int64, isTest bool) (*store.EventSigningKey, error) {
	stored, err := store.GetEventSigningKey(ctx, db, eventID, isTest)
	if !errors.Is(err, errs.NotFound) {
		return stored, err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing key of event %d: %w", eventID, err)
	}
	sealed, err := c.seal(eventID, isTest, priv.Seed())
	if err != nil {
		return nil, err
	}
	return store.CreateEventSigningKey(ctx, db, &store.EventSigningKey{EventID: eventID, IsTest: isTest, PublicKey: pub,
		SealedPrivateKey: sealed})
}

func (c *CodeSigner) privateKey(ctx context.Context, db bun.IDB, eventID int64, isTest bool) (ed25519.PrivateKey, error) {
	name := keyName{eventID, isTest}
	if k, ok := c.open.Load(name); ok {
		return k.(ed25519.PrivateKey), nil
	}
	stored, err := c.key(ctx, db, eventID, isTest)
	if err != nil {
		return nil, err
	}
	k, err := c.unseal(eventID, isTest, stored.SealedPrivateKey)
	if err != nil {
		return nil, err
	}
	if !k.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(stored.PublicKey)) {
		return nil, fmt.Errorf("signing key of event %d: the sealed key is not the published one: %w", eventID, ErrBrokenSeal)
	}
	c.open.Store(name, k)
	return k, nil
}

// keyName names an event's key of one environment.
type keyName struct {
	eventID int64
	isTest  bool
}

// seal: id, nonce, then the seed sealed with the id and the event bound
// in (a sealed key copied to another event's row opens nothing).
func (c *CodeSigner) seal(eventID int64, isTest bool, seed []byte) ([]byte, error) {
	cur := c.seals[0]
	nonce := make([]byte, cur.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal signing key of event %d: %w", eventID, err)
	}
	return append(append(cur.id[:], nonce...), cur.aead.Seal(nil, nonce, seed, sealAD(cur.id, eventID, isTest))...), nil
}

// ErrUnknownSeal: the event's key was sealed with a secret the signer does
// not hold (rotated without listing the old one in
// ORDER_TOKEN_PREVIOUS_SECRETS).
var ErrUnknownSeal = errors.New("signing key sealed with an unknown secret")

// ErrBrokenSeal: the event's stored key does not open with the secret
// that names it, or is not the published key (a row damaged or copied).
var ErrBrokenSeal = errors.New("signing key seal does not open")

// CannotSign tells whether err is a key that will not open however often
// it is tried: its tickets are shown with bare barcodes, and the error is
// logged, rather than failing the page.
func CannotSign(err error) bool {
	return errors.Is(err, ErrUnknownSeal) || errors.Is(err, ErrBrokenSeal)
}

func (c *CodeSigner) unseal(eventID int64, isTest bool, sealed []byte) (ed25519.PrivateKey, error) {
	for _, s := range c.seals {
		if len(sealed) < 4+s.aead.NonceSize() || [4]byte(sealed[:4]) != s.id {
			continue
		}
		rest := sealed[4:]
		seed, err := s.aead.Open(nil, rest[:s.aead.NonceSize()], rest[s.aead.NonceSize():], sealAD(s.id, eventID, isTest))
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("open signing key of event %d: %w (%w)", eventID, ErrBrokenSeal, cmpErr(err))
		}
		return ed25519.NewKeyFromSeed(seed), nil
	}
	return nil, fmt.Errorf("event %d: %w", eventID, ErrUnknownSeal)
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("not a seed")
	}
	return err
}

func sealAD(id [4]byte, eventID int64, isTest bool) []byte {
	env := byte('p')
	if isTest {
		env = 's'
	}
	return append(binary.BigEndian.AppendUint64(append([]byte("event-signing-key:"), id[:]...), uint64(eventID)), env)
}

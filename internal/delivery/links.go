// The public order page links: /o/{id}?access_token=…
//
// A token is 32 random bytes per order. The store keeps its SHA-256, which
// is all a link is checked against (in constant time), and a copy sealed
// with AES-256-GCM under ORDER_TOKEN_SECRET so the service can show the link
// again (tickets' order_url, the e-mail). Checking never needs the secret:
// rotating it breaks no link already sent. Listing the previous secrets
// keeps links of older orders showable.
package delivery

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// Keyring seals tokens with the current secret and opens them with it or
// any previous one.
type Keyring struct {
	keys    []key    // keys[0] seals
	refused [][]byte // public secrets: tokens derived from them are forgeable
}

type key struct {
	id     [4]byte // which secret sealed a token
	aead   cipher.AEAD
	secret []byte // for tokens made before sealing (derived from the order id)
}

// DeriveKey derives a 256-bit key for one use from a service secret
// (ORDER_TOKEN_SECRET or a previous one) under that use's label, and names
// it by 4 bytes of a hash of the derived key, so what it sealed or signed
// says which secret made it. Each use has its own label (order tokens,
// event keys, seat map tokens), so nothing made for one opens another.
func DeriveKey(label, secret string) (key [32]byte, id [4]byte) {
	key = sha256.Sum256([]byte(label + secret))
	h := sha256.Sum256(key[:])
	return key, [4]byte(h[:4])
}

// SealWith derives an AES-256-GCM sealer from a secret under its own
// label (DeriveKey): order tokens, and the cabinet's authenticator secrets.
func SealWith(label, secret string) (id [4]byte, aead cipher.AEAD, err error) {
	key, id := DeriveKey(label, secret)
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return id, nil, err
	}
	if aead, err = cipher.NewGCM(block); err != nil {
		return id, nil, err
	}
	return id, aead, nil
}

// NewKeyring builds a keyring from the current secret and previous ones.
func NewKeyring(current string, previous ...string) (*Keyring, error) {
	if current == "" {
		return nil, errors.New("order token secret is empty")
	}
	k := &Keyring{}
	for _, s := range append([]string{current}, previous...) {
		if s == "" {
			continue
		}
		id, aead, err := SealWith("order-token-seal:", s)
		if err != nil {
			return nil, err
		}
		k.keys = append(k.keys, key{id: id, aead: aead, secret: []byte(s)})
	}
	return k, nil
}

// NewToken makes an order's access token: the token itself, its hash to
// store and check, and its sealed copy to store.
func (k *Keyring) NewToken() (token string, hash, sealed []byte, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, nil, fmt.Errorf("order token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	cur := k.keys[0]
	nonce := make([]byte, cur.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, nil, fmt.Errorf("order token: %w", err)
	}
	sealed = append(append(cur.id[:], nonce...), cur.aead.Seal(nil, nonce, []byte(token), cur.id[:])...)
	return token, TokenHash(token), sealed, nil
}

// ErrUnknownKey: the token was sealed with a secret the keyring does not
// hold (rotated without listing the old one).
var ErrUnknownKey = errors.New("order token sealed with an unknown secret")

// Refuse marks secrets that are public (the development defaults): a token
// of an order made before tokens were random, derived from one of them, is
// forgeable, so Forgeable reports it and it is never shown again.
func (k *Keyring) Refuse(secrets ...string) *Keyring {
	for _, s := range secrets {
		k.refused = append(k.refused, []byte(s))
	}
	return k
}

// Forgeable tells whether the order's stored token was derived from a
// public secret: anyone could compute its link.
func (k *Keyring) Forgeable(orderID int64, storedHash []byte) bool {
	for _, s := range k.refused {
		if CheckToken(storedHash, legacyToken(s, orderID)) {
			return true
		}
	}
	return false
}

// Token returns the order's token from what the store holds: the sealed
// copy, or for orders made before tokens were sealed, the token derived
// from the order id, if it matches the stored hash.
func (k *Keyring) Token(orderID int64, sealed, storedHash []byte) (string, error) {
	if len(sealed) == 0 {
		for _, key := range k.keys {
			if t := legacyToken(key.secret, orderID); CheckToken(storedHash, t) {
				return t, nil
			}
		}
		return "", fmt.Errorf("order %d: %w", orderID, ErrUnknownKey)
	}
	for _, key := range k.keys {
		if len(sealed) < 4 || [4]byte(sealed[:4]) != key.id {
			continue
		}
		rest := sealed[4:]
		if len(rest) < key.aead.NonceSize() {
			break
		}
		t, err := key.aead.Open(nil, rest[:key.aead.NonceSize()], rest[key.aead.NonceSize():], key.id[:])
		if err != nil {
			return "", fmt.Errorf("open token of order %d: %w", orderID, err)
		}
		if !CheckToken(storedHash, string(t)) {
			// Another order's sealed copy: never show a link that opens
			// nothing, or someone else's page.
			return "", fmt.Errorf("order %d: the sealed token is not the order's: %w", orderID, ErrUnknownKey)
		}
		return string(t), nil
	}
	return "", fmt.Errorf("order %d: %w", orderID, ErrUnknownKey)
}

// legacyToken is how tokens were made before they were random.
func legacyToken(secret []byte, orderID int64) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("order-page:" + strconv.FormatInt(orderID, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TokenHash is what the store keeps of a token.
func TokenHash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// CheckToken compares a presented token with the stored hash in constant time.
func CheckToken(storedHash []byte, token string) bool {
	return subtle.ConstantTimeCompare(TokenHash(token), storedHash) == 1
}

// Links builds the public links of orders.
type Links struct {
	BaseURL string
	Keys    *Keyring
	// Codes signs the tickets' codes their QR codes carry (nil: the QR
	// codes carry the bare barcode, format 1).
	Codes *CodeSigner
}

// PageURL is the public page of the order's tickets.
func (l Links) PageURL(orderID int64, token string) string {
	return fmt.Sprintf("%s/o/%d?access_token=%s", l.BaseURL, orderID, token)
}

// PDFURL is the PDF of the order's tickets.
func (l Links) PDFURL(orderID int64, token string) string {
	return fmt.Sprintf("%s/o/%d/tickets.pdf?access_token=%s", l.BaseURL, orderID, token)
}

// OrderPage is the order's page link. A token that is forgeable (derived
// from a public secret), and one sealed with a secret no longer configured
// when replace allows it (an order whose link was never sent), is replaced
// by a fresh one, stored in place of the old: the old link opens nothing
// from then on. Otherwise a token that cannot be shown is ErrUnknownKey.
func (l Links) OrderPage(ctx context.Context, db bun.IDB, o *store.Order, replace bool) (string, error) {
	t, err := l.Keys.Token(o.ID, o.AccessTokenSealed, o.AccessTokenHash)
	forgeable := l.Keys.Forgeable(o.ID, o.AccessTokenHash)
	switch {
	case err == nil && !forgeable:
		return l.PageURL(o.ID, t), nil
	case err != nil && !errors.Is(err, ErrUnknownKey):
		return "", err
	case err != nil && !forgeable && !replace:
		return "", err
	}
	t, hash, sealed, err := l.Keys.NewToken()
	if err != nil {
		return "", err
	}
	replaced, err := store.ReplaceOrderToken(ctx, db, o.ID, o.AccessTokenHash, hash, sealed)
	if err != nil {
		return "", err
	}
	if !replaced {
		// Replaced meanwhile by another request: show that one.
		if o, err = store.GetOrderByID(ctx, db, o.ID); err != nil {
			return "", err
		}
		if t, err = l.Keys.Token(o.ID, o.AccessTokenSealed, o.AccessTokenHash); err != nil {
			return "", err
		}
	}
	return l.PageURL(o.ID, t), nil
}

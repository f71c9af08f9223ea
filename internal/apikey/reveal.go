package apikey

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/ticketsales/ticketsales/store"
)

// A key made from the cabinet's form waits for the page that shows it in
// its own row, sealed (AES-256-GCM) under a key derived from the form's
// one-time token. The database keeps only the token's hash: a row, the WAL
// or a backup opens nothing; the browser that sent the form holds the
// token (a cookie for the created page alone) and opens it, once.

const revealInfo = "ticketsales cabinet new api key"

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

func revealAEAD(token string) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, []byte(token), nil, revealInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// sealForForm is the claim of a key made from the form with token.
func sealForForm(token, key string) (store.KeyClaim, error) {
	aead, err := revealAEAD(token)
	if err != nil {
		return store.KeyClaim{}, fmt.Errorf("seal the new key: %w", err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return store.KeyClaim{}, fmt.Errorf("seal the new key: %w", err)
	}
	h := tokenHash(token)
	return store.KeyClaim{TokenHash: h, Reveal: aead.Seal(nonce, nonce, []byte(key), h)}, nil
}

func openForForm(token string, sealed []byte) (string, error) {
	aead, err := revealAEAD(token)
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("sealed key too short")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], tokenHash(token))
	if err != nil {
		return "", err
	}
	return string(plain), nil
}

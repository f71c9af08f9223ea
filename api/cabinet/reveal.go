package cabinet

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
)

// A webhook signing secret, shown once, waits for the page that shows it
// after a POST's redirect. It waits sealed: the session (a Postgres row, so also its WAL and backups) holds only the
// ciphertext, and the key that opens it is in a short-lived HttpOnly
// cookie that the browser sends to that page alone. Neither half is a
// secret without the other, and both are dropped once the page is
// rendered.
type reveal struct {
	session string // the session's key of the ciphertext
	cookie  string // the cookie holding the sealing key
	path    string // the page that shows the secret: the cookie's path
}

// revealFor is where the secret of the thing with this id waits: the
// sealing binds the ciphertext to the id, so it opens for that page only.
func revealFor(kind, path string) reveal {
	return reveal{session: kind + "_sealed", cookie: "ts_reveal_" + kind, path: path}
}

// revealMaxAge bounds how long a sealed secret can be opened: the page is
// shown right after the redirect.
const revealMaxAge = 600 // seconds

// seal keeps secret for the page rv names: ciphertext in the session, the
// key in the response's cookie. bind (the key's or endpoint's id) is the
// additional data the ciphertext opens with.
func (c *cabinet) seal(w http.ResponseWriter, r *http.Request, rv reveal, bind, secret string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("seal %s: %w", rv.session, err)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return fmt.Errorf("seal %s: %w", rv.session, err)
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return fmt.Errorf("seal %s: %w", rv.session, err)
	}
	sealed := aead.Seal(nonce, nonce, []byte(secret), []byte(rv.session+"\x00"+bind))
	c.sessions.Put(r.Context(), rv.session, base64.RawStdEncoding.EncodeToString(sealed))
	http.SetCookie(w, c.revealCookie(rv, base64.RawURLEncoding.EncodeToString(key), revealMaxAge))
	return nil
}

// unseal opens the secret waiting for this page, leaving it in place (a
// failure before the page is rendered leaves it for the next view). ok is
// false when nothing waits, the cookie is gone (another browser, expired)
// or the ciphertext was sealed for another id.
func (c *cabinet) unseal(r *http.Request, rv reveal, bind string) (secret string, ok bool) {
	stored := c.sessions.GetString(r.Context(), rv.session)
	ck, err := r.Cookie(rv.cookie)
	if stored == "" || err != nil {
		return "", false
	}
	key, err1 := base64.RawURLEncoding.DecodeString(ck.Value)
	sealed, err2 := base64.RawStdEncoding.DecodeString(stored)
	if err := errors.Join(err1, err2); err != nil {
		return "", false
	}
	aead, err := newAEAD(key)
	if err != nil || len(sealed) < aead.NonceSize() {
		return "", false
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(rv.session+"\x00"+bind))
	if err != nil {
		return "", false
	}
	return string(plain), true
}

// forget drops both halves: the ciphertext from the session and the
// cookie from the browser.
func (c *cabinet) forget(w http.ResponseWriter, r *http.Request, rv reveal) {
	c.sessions.Remove(r.Context(), rv.session)
	http.SetCookie(w, c.revealCookie(rv, "", -1))
}

func (c *cabinet) revealCookie(rv reveal, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: rv.cookie, Value: value, Path: rv.path, MaxAge: maxAge, HttpOnly: true,
		Secure: c.sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode}
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Package orderlink makes the public order page links: /o/{id}?access_token=…
// The token is derived from the order id with a server secret, so the link
// can be shown again; the store keeps only its hash, compared in constant time.
package orderlink

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
)

// Links builds and checks order page links.
type Links struct {
	BaseURL string
	Secret  []byte
}

// Token is the order's access token (32 bytes, base64url).
func (l Links) Token(orderID int64) string {
	m := hmac.New(sha256.New, l.Secret)
	m.Write([]byte("order-page:" + strconv.FormatInt(orderID, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Hash is what the store keeps of a token.
func Hash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Check compares a presented token with the stored hash in constant time.
func Check(storedHash []byte, token string) bool {
	return subtle.ConstantTimeCompare(Hash(token), storedHash) == 1
}

// PageURL is the public page of the order's tickets.
func (l Links) PageURL(orderID int64) string {
	return fmt.Sprintf("%s/o/%d?access_token=%s", l.BaseURL, orderID, l.Token(orderID))
}

// PDFURL is the PDF of the order's tickets.
func (l Links) PDFURL(orderID int64) string {
	return fmt.Sprintf("%s/o/%d/tickets.pdf?access_token=%s", l.BaseURL, orderID, l.Token(orderID))
}

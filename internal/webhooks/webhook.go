// Package webhook is what partner webhooks share between the api and the
// worker: signing per the Standard Webhooks specification, the signing
// secrets, the event body, and the rule that keeps deliveries away from
// loopback, private and link-local addresses (SSRF).
package webhooks

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// Header names of the Standard Webhooks specification.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// NewSecret makes a signing secret: "whsec_" and 32 random bytes in base64,
// the form the specification's verifiers take.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// ErrBadSecret: a secret is not "whsec_" and base64.
var ErrBadSecret = errors.New("malformed webhook secret")

// secretKey is the HMAC key of a secret.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, SecretPrefix))
	if err != nil || len(key) == 0 {
		return nil, ErrBadSecret
	}
	return key, nil
}

// Sign returns the webhook-signature header of a message: "v1,<base64
// HMAC-SHA256 of id.timestamp.body>" for each secret, space-separated (two
// while a rotated secret still signs beside the new one).
func Sign(secrets []string, id string, at time.Time, body []byte) (string, error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := secretKey(s)
		if err != nil {
			return "", err
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id))
		mac.Write([]byte{'.'})
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// Headers are the signed headers of one attempt.
func Headers(secrets []string, id string, at time.Time, body []byte) (map[string]string, error) {
	sig, err := Sign(secrets, id, at, body)
	if err != nil {
		return nil, err
	}
	return map[string]string{HeaderID: id, HeaderTimestamp: strconv.FormatInt(at.Unix(), 10), HeaderSignature: sig}, nil
}

// Event is the body every delivery carries.
type Event struct {
	ID        string                  `json:"id" doc:"The event id; the webhook-id header. Deliveries of one event carry the same id: dedupe by it."`
	Type      states.WebhookEventType `json:"type"`
	CreatedAt time.Time               `json:"created_at" doc:"When the change happened."`
	Data      any                     `json:"data" doc:"The object as the API returns it: an order, a refund, a reservation."`
}

// Body encodes an event.
func Body(id string, typ states.WebhookEventType, createdAt time.Time, data any) ([]byte, error) {
	b, err := json.Marshal(Event{ID: id, Type: typ, CreatedAt: createdAt.UTC(), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", id, err)
	}
	return b, nil
}

// Package ticketcode is the signed ticket code a door checks offline: what
// a ticket's QR code carries since format 2, and how to verify it with the
// event's public key. It needs only the standard library, so a door app
// (or any client) imports it alone.
//
// A code is
//
//	T2.<payload>.<signature>
//
// both parts unpadded base64url. The payload is the byte 2 (the format),
// then the event id, the ticket id and the ticket's 13-digit barcode as a
// number, each an unsigned varint (encoding/binary). The signature is
// Ed25519 (RFC 8032) by the event's key over Context followed by the
// payload. A code is about 110 characters: a QR code of version 6-7.
//
// Format 1 is the bare 13-digit EAN-13 barcode, unsigned: still admitted
// online, and offline only by the list's barcode hash.
package ticketcode

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Prefix begins every format-2 code.
const Prefix = "T2."

// Version is the payload's first byte.
const Version = 2

// Context is signed before the payload: a signature made by the key for
// anything else never passes for a ticket code.
const Context = "ticketsales ticket code\x00"

// MaxLen bounds a format-2 code (a scan longer than this is no code).
const MaxLen = 160

// Code is what a format-2 code says.
type Code struct {
	EventID  int64
	TicketID int64
	Barcode  string // the ticket's 13-digit barcode
}

// Errors of Parse and Verify.
var (
	ErrNotSigned = errors.New("ticketcode: not a format-2 code")
	ErrMalformed = errors.New("ticketcode: malformed code")
	ErrSignature = errors.New("ticketcode: bad signature")
)

// IsSigned tells whether a scanned string claims to be a format-2 code.
func IsSigned(s string) bool { return strings.HasPrefix(s, Prefix) }

// Sign makes the code of c with the event's private key.
func Sign(key ed25519.PrivateKey, c Code) (string, error) {
	payload, err := c.payload()
	if err != nil {
		return "", err
	}
	sig := ed25519.Sign(key, signed(payload))
	return Prefix + base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Parse reads a code without checking its signature: the event it names
// tells which public key verifies it (Verify).
func Parse(s string) (Code, error) {
	c, _, _, err := parse(s)
	return c, err
}

// Verify parses s and checks its signature with the event's public key
// (and that the code is for eventID, when eventID is not 0). A code
// changed in any byte, or signed by another key, fails.
func Verify(pub ed25519.PublicKey, s string, eventID int64) (Code, error) {
	c, payload, sig, err := parse(s)
	if err != nil {
		return Code{}, err
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, signed(payload), sig) {
		return Code{}, ErrSignature
	}
	if eventID != 0 && c.EventID != eventID {
		return Code{}, fmt.Errorf("%w: the code is for event %d, not %d", ErrSignature, c.EventID, eventID)
	}
	return c, nil
}

// ParsePublicKey reads an event's public key as the API publishes it
// (unpadded base64url of the 32 bytes).
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("ticketcode: an Ed25519 public key is 32 bytes in unpadded base64url")
	}
	return ed25519.PublicKey(b), nil
}

// EncodePublicKey is how the API publishes a public key.
func EncodePublicKey(pub ed25519.PublicKey) string { return base64.RawURLEncoding.EncodeToString(pub) }

// BarcodeHash is what the door list holds of a barcode: the first 12
// bytes of its SHA-256, unpadded base64url (16 characters). A door looks a
// scanned 13-digit barcode (format 1) up by it.
func BarcodeHash(barcode string) string {
	sum := sha256.Sum256([]byte(barcode))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

func signed(payload []byte) []byte {
	return append([]byte(Context), payload...)
}

func (c Code) payload() ([]byte, error) {
	n, err := strconv.ParseUint(c.Barcode, 10, 64)
	if err != nil || len(c.Barcode) != 13 || c.EventID <= 0 || c.TicketID <= 0 {
		return nil, fmt.Errorf("%w: event %d, ticket %d, barcode %q", ErrMalformed, c.EventID, c.TicketID, c.Barcode)
	}
	b := []byte{Version}
	b = binary.AppendUvarint(b, uint64(c.EventID))
	b = binary.AppendUvarint(b, uint64(c.TicketID))
	return binary.AppendUvarint(b, n), nil
}

func parse(s string) (Code, []byte, []byte, error) {
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return Code{}, nil, nil, ErrNotSigned
	}
	if len(s) > MaxLen {
		return Code{}, nil, nil, ErrMalformed
	}
	p, sg, ok := strings.Cut(rest, ".")
	if !ok {
		return Code{}, nil, nil, ErrMalformed
	}
	payload, err1 := base64.RawURLEncoding.Strict().DecodeString(p)
	sig, err2 := base64.RawURLEncoding.Strict().DecodeString(sg)
	if err1 != nil || err2 != nil || len(sig) != ed25519.SignatureSize || len(payload) < 4 || payload[0] != Version {
		return Code{}, nil, nil, ErrMalformed
	}
	var vals [3]uint64
	b := payload[1:]
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return Code{}, nil, nil, ErrMalformed
		}
		vals[i], b = v, b[n:]
	}
	if len(b) != 0 || vals[0] == 0 || vals[1] == 0 || vals[0] > 1<<62 || vals[1] > 1<<62 || vals[2] >= 1e13 {
		return Code{}, nil, nil, ErrMalformed
	}
	c := Code{EventID: int64(vals[0]), TicketID: int64(vals[1]), Barcode: fmt.Sprintf("%013d", vals[2])}
	return c, payload, sig, nil
}

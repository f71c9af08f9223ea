package checkin

import (
	"context"
	"crypto/ed25519"
	"errors"
	"sync"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/store"
)

// A scan online (Service.Scan) and offline (Offline.Batch) looks its
// ticket up the same way: by the barcode a signed code carries, once its
// signature verifies, else by what was scanned.

// keyOf reads events' public keys once each (a key never changes once
// made; an event without one yet is asked again).
type keyOf struct {
	db   bun.IDB
	keys sync.Map // eventKey -> ed25519.PublicKey
}

// eventKey names an event's key of one environment.
type eventKey struct {
	eventID int64
	isTest  bool
}

func (k *keyOf) get(ctx context.Context, eventID int64, isTest bool) (ed25519.PublicKey, error) {
	if pub, ok := k.keys.Load(eventKey{eventID, isTest}); ok {
		return pub.(ed25519.PublicKey), nil
	}
	stored, err := store.GetEventSigningKey(ctx, k.db, eventID, isTest)
	switch {
	case errors.Is(err, errs.NotFound):
		return nil, nil // no key: no code of the event verifies
	case err != nil:
		return nil, err
	}
	k.keys.Store(eventKey{eventID, isTest}, ed25519.PublicKey(stored.PublicKey))
	return stored.PublicKey, nil
}

// lookupBarcode is the barcode to look a scan up by: a signed code's
// barcode when its signature verifies with the key of the event it names,
// of the door's environment (or, at a real door, of the sandbox: the scan
// then finds a sandbox ticket and answers so); the scan itself otherwise (a
// 13-digit barcode, or a code forged or changed, which no ticket has:
// unknown).
func lookupBarcode(ctx context.Context, keys *keyOf, scanned string, isTest bool) (string, error) {
	if !ticketcode.IsSigned(scanned) {
		return scanned, nil
	}
	c, err := ticketcode.Parse(scanned)
	if err != nil {
		return scanned, nil
	}
	envs := []bool{isTest}
	if !isTest {
		envs = append(envs, true)
	}
	for _, env := range envs {
		pub, err := keys.get(ctx, c.EventID, env)
		if err != nil {
			return "", err
		}
		if _, err := ticketcode.Verify(pub, scanned, 0); err == nil {
			return c.Barcode, nil
		}
	}
	return scanned, nil
}

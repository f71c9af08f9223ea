package mail

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Outbox writes each message as <Dir>/<sanitized MessageID or
// timestamp-random>.eml instead of sending it. The same MessageID always maps
// to the same file, so a retried send overwrites rather than duplicates.
type Outbox struct {
	Dir  string
	From string
}

// Send writes m atomically (temp file + rename), so readers never see a
// half-written .eml. A failure is an *Error, as from SMTP.
func (o *Outbox) Send(ctx context.Context, m Message) error {
	if err := o.send(ctx, m); err != nil {
		return deliveryError(err, m.To)
	}
	return nil
}

func (o *Outbox) send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := o.init(); err != nil {
		return err
	}
	msg, err := buildMsg(o.From, m)
	if err != nil {
		return fmt.Errorf("%w: %w", errCompose, err)
	}
	name := fileName(m.MessageID)

	// Temp name starts with a dot and lacks .eml so *.eml globs skip it.
	tmp, err := os.CreateTemp(o.Dir, ".outbox-*.tmp")
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := msg.WriteTo(tmp); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("outbox: write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("outbox: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("outbox: close: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(o.Dir, name)); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// init creates Dir if missing.
func (o *Outbox) init() error {
	if o.Dir == "" {
		return errors.New("outbox: directory not set")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

// fileName maps a MessageID to a safe file name; without one it is unique.
func fileName(messageID string) string {
	id := strings.Trim(strings.TrimSpace(messageID), "<>")
	if id == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return time.Now().UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(b[:]) + ".eml"
	}
	safe := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '-', r == '_', r == '.', r == '@', r == '+':
			return r
		}
		return '_'
	}, id)
	safe = strings.TrimLeft(safe, ".") // no hidden files, no ".."
	if len(safe) > 100 {
		safe = safe[:100]
	}
	// Distinct IDs that sanitize alike (a/b vs a:b) or were cut short get a
	// hash suffix so they do not overwrite each other.
	if safe != id {
		sum := sha256.Sum256([]byte(id))
		safe += "-" + hex.EncodeToString(sum[:4])
	}
	return safe + ".eml"
}

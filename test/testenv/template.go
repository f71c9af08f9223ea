package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/store/migrations"
)

// Every test gets a database of its own. Copying a migrated template is
// about twice as fast as migrating each one, and make test makes hundreds.
// The template's name carries a digest of the migrations, so a change to
// them builds a new one; test binaries running at once (go test runs
// packages in parallel) build it once, under an advisory lock.
var templates sync.Map // admin URL → template name

func template(ctx context.Context, admin *pgx.Conn, adminURL string) (string, error) {
	if name, ok := templates.Load(adminURL); ok {
		return name.(string), nil
	}
	digest, err := migrationsDigest()
	if err != nil {
		return "", err
	}
	name := "ticketsales_template_" + hex.EncodeToString(digest[:6])
	if _, err := admin.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(binary.BigEndian.Uint64(digest[:8]))); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer admin.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(binary.BigEndian.Uint64(digest[:8]))) //nolint:errcheck
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("find template %s: %w", name, err)
	}
	if !exists {
		if err := buildTemplate(ctx, admin, adminURL, name); err != nil {
			return "", err
		}
	}
	templates.Store(adminURL, name)
	return name, nil
}

// buildTemplate migrates a database under a building name and renames it
// once it is complete and closed: a template is never seen half built.
func buildTemplate(ctx context.Context, admin *pgx.Conn, adminURL, name string) error {
	building := name + "_building"
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop a half-built template: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+building); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	u.Path = "/" + building
	db, err := store.Open(ctx, u.String())
	if err != nil {
		return fmt.Errorf("open template: %w", err)
	}
	_, err = store.Migrate(ctx, db)
	_ = db.Close()
	if err != nil {
		return fmt.Errorf("migrate template: %w", err)
	}
	// Renaming (and copying) needs the database to have no sessions: the
	// pool's last ones may still be closing.
	return whenUnused(ctx, admin, "ALTER DATABASE "+building+" RENAME TO "+name)
}

// whenUnused runs stmt, which needs a database to have no other sessions, waiting
// for them to end (a closing pool's, autovacuum's) a few times first.
func whenUnused(ctx context.Context, admin *pgx.Conn, stmt string) error {
	for attempt := 0; ; attempt++ {
		_, err := admin.Exec(ctx, stmt)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55006" || attempt == 20 {
			if err != nil {
				return fmt.Errorf("%s: %w", stmt, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", stmt, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// migrationsDigest is a digest of every migration file's name and text.
func migrationsDigest() ([32]byte, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	var sum [32]byte
	if err != nil {
		return sum, fmt.Errorf("read migrations: %w", err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

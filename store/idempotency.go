package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"
)

// IdempotencyRetention is how long a creating POST's response is replayed.
const IdempotencyRetention = 24 * time.Hour

// abandonedAfter: a first request still "running" after this long died with
// its process; a retry may take the key over.
const abandonedAfter = time.Minute // longer than any request may run (confirm waits 20 s)

// IdempotencyRecord is a stored creating request and, once it finished, its
// response.
type IdempotencyRecord struct {
	bun.BaseModel `bun:"table:idempotency_keys"`
	APIKeyID      int64  `bun:"api_key_id,pk"`
	Key           string `bun:"key,pk"`
	Method        string `bun:"method"`
	Path          string `bun:"path"`
	BodyHash      []byte `bun:"body_hash"` // SHA-256 of the body's bytes
	// BodyHashCanonical is the SHA-256 of the body's canonical JSON (nil:
	// not JSON): a retry matches by either hash.
	BodyHashCanonical []byte      `bun:"body_hash_canonical"`
	Status            *int        `bun:"status"`
	Headers           http.Header `bun:"headers,type:jsonb"`
	Body              []byte      `bun:"body"`
	CreatedAt         time.Time   `bun:"created_at,nullzero,default:now()"`
}

// ClaimIdempotencyKey records a new request under the key, or returns the
// record already there. Only the caller that claimed it runs the request.
func ClaimIdempotencyKey(ctx context.Context, db bun.IDB, rec *IdempotencyRecord) (claimed bool, existing *IdemExisting, err error) {
	for attempt := 0; attempt < 2; attempt++ {
		res, err := execPrepared(ctx, db, claimKeySQL, rec.APIKeyID, rec.Key, rec.Method, rec.Path,
			rec.BodyHash, rec.BodyHashCanonical)
		if err != nil {
			return false, nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return true, nil, nil
		}
		cur := new(IdempotencyRecord)
		err = db.NewSelect().Model(cur).Where("api_key_id = ? AND key = ?", rec.APIKeyID, rec.Key).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			continue // finished and deleted meanwhile (a 5xx): claim again
		}
		if err != nil {
			return false, nil, fmt.Errorf("read idempotency key: %w", err)
		}
		age := time.Since(cur.CreatedAt)
		if age > IdempotencyRetention || (cur.Status == nil && age > abandonedAfter) {
			// Expired, or left by a crashed request: take it over once.
			if _, err := db.NewDelete().Model(cur).WherePK().Where("created_at = ?", cur.CreatedAt).Exec(ctx); err != nil {
				return false, nil, fmt.Errorf("drop stale idempotency key: %w", err)
			}
			continue
		}
		return false, &IdemExisting{IdempotencyRecord: *cur}, nil
	}
	return false, nil, fmt.Errorf("claim idempotency key %q: contended", rec.Key)
}

// claimKeySQL records a request under its key (prepared: three of every
// order's calls claim one): $1 the API key, $2 the key, $3 the method, $4
// the path, $5 and $6 the body's hashes. The response comes later
// (CompleteIdempotencyKey).
const claimKeySQL = `INSERT INTO idempotency_keys (api_key_id, key, method, path, body_hash, body_hash_canonical)
	VALUES ($1::bigint, $2::text, $3::text, $4::text, $5::bytea, $6::bytea) ON CONFLICT (api_key_id, key) DO NOTHING`

// IdemExisting is a record found under a key already in use.
type IdemExisting struct{ IdempotencyRecord }

// CompleteIdempotencyKey stores the response to replay.
func CompleteIdempotencyKey(ctx context.Context, db bun.IDB, apiKeyID int64, key string, status int, headers http.Header, body []byte) error {
	var h any // nil headers are NULL
	if headers != nil {
		b, err := json.Marshal(headers)
		if err != nil {
			return fmt.Errorf("store idempotent response: %w", err)
		}
		h = string(b)
	}
	_, err := execPrepared(ctx, db, `UPDATE idempotency_keys SET status = $1::integer, headers = $2::jsonb, body = $3::bytea
		WHERE api_key_id = $4::bigint AND key = $5::text`, status, h, body, apiKeyID, key)
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}

// ReleaseIdempotencyKey forgets a request that failed with a 5xx, so a retry
// runs it again.
func ReleaseIdempotencyKey(ctx context.Context, db bun.IDB, apiKeyID int64, key string) error {
	_, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).Where("api_key_id = ? AND key = ?", apiKeyID, key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}

// DeleteExpiredIdempotencyKeys removes records past the retention period.
func DeleteExpiredIdempotencyKeys(ctx context.Context, db bun.IDB, now time.Time) (int64, error) {
	res, err := db.NewDelete().Model((*IdempotencyRecord)(nil)).Where("created_at < ?", now.Add(-IdempotencyRetention)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete expired idempotency keys: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// UsedKeys tells requests whether their idempotency keys were seen in the
// retention period (run, running or answered), with few statements: while one read is on its way, the questions arriving
// meanwhile wait and go together in the next. An on-sale rush refuses
// hundreds of holds from memory at once, each asking whether its key was
// seen before; one statement per question was half of what such a refusal
// cost. A lone question goes at once, as before.
type UsedKeys struct {
	db    bun.IDB
	mu    sync.Mutex
	queue []usedKeyAsk
	busy  bool // a goroutine is asking Postgres
}

type usedKeyAsk struct {
	apiKeyID int64
	key      string
	reply    chan usedKeyAnswer // buffered: the asker may have gone
}

type usedKeyAnswer struct {
	used bool
	err  error
}

// maxKeysPerRead bounds one statement's questions.
const maxKeysPerRead = 500

// NewUsedKeys asks db.
func NewUsedKeys(db bun.IDB) *UsedKeys { return &UsedKeys{db: db} }

// Used tells whether a request under the key was seen in the retention
// period.
func (u *UsedKeys) Used(ctx context.Context, apiKeyID int64, key string) (bool, error) {
	ask := usedKeyAsk{apiKeyID: apiKeyID, key: key, reply: make(chan usedKeyAnswer, 1)}
	u.mu.Lock()
	u.queue = append(u.queue, ask)
	if !u.busy {
		u.busy = true
		go u.run()
	}
	u.mu.Unlock()
	select {
	case <-ctx.Done():
		return false, fmt.Errorf("look up idempotency key: %w", ctx.Err())
	case a := <-ask.reply:
		return a.used, a.err
	}
}

// run asks Postgres until no question is left.
func (u *UsedKeys) run() {
	for {
		u.mu.Lock()
		batch := u.queue
		if len(batch) > maxKeysPerRead {
			batch, u.queue = batch[:maxKeysPerRead:maxKeysPerRead], batch[maxKeysPerRead:]
		} else {
			u.queue = nil
		}
		if len(batch) == 0 {
			u.busy = false
			u.mu.Unlock()
			return
		}
		u.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		used, err := usedKeys(ctx, u.db, batch)
		cancel()
		for _, a := range batch {
			a.reply <- usedKeyAnswer{used: used[usedKey{a.apiKeyID, a.key}], err: err}
		}
	}
}

type usedKey struct {
	apiKeyID int64
	key      string
}

// usedKeys reads which of the asked keys have a record in the retention
// period, in one statement.
func usedKeys(ctx context.Context, db bun.IDB, asks []usedKeyAsk) (map[usedKey]bool, error) {
	ids := make([]int64, len(asks))
	keys := make([]string, len(asks))
	for i, a := range asks {
		ids[i], keys[i] = a.apiKeyID, a.key
	}
	var found []struct {
		APIKeyID int64  `bun:"api_key_id"`
		Key      string `bun:"key"`
	}
	err := db.NewRaw(`SELECT k.api_key_id, k.key FROM unnest(?::bigint[], ?::text[]) AS q(api_key_id, key)
		JOIN idempotency_keys k ON k.api_key_id = q.api_key_id AND k.key = q.key
		WHERE k.created_at > ?`, pgdialect.Array(ids), pgdialect.Array(keys), time.Now().Add(-IdempotencyRetention)).Scan(ctx, &found)
	if err != nil {
		return nil, fmt.Errorf("look up %d idempotency keys: %w", len(asks), err)
	}
	used := make(map[usedKey]bool, len(found))
	for _, f := range found {
		used[usedKey{f.APIKeyID, f.Key}] = true
	}
	return used, nil
}

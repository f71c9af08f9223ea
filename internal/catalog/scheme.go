package catalog

import (
	"fmt"
	"sync"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
)

// schemeCache holds the laid-out geometry of schemes stored before schemes
// were drawn (their stored geometry has no coordinates for seats the file
// did not place). Laying out on read, rather than in a migration, keeps
// the one layout in Go (catalogfile.Layout) and gives such a scheme the
// bytes and ETag an import of its file gives now, so importing it again
// changes nothing a client sees. An import of any file replaces the stored
// geometry with a laid-out one, and the entry is not read again.
type schemeCache struct {
	mu      sync.Mutex
	entries map[int64]laidOutScheme
}

type laidOutScheme struct {
	storedETag string // the stored geometry's: a new import changes it
	geometry   []byte
	etag       string
}

// maxLaidOut bounds the cache; schemes stored before drawings only grow
// fewer, so forgetting them all when full is rare and cheap.
const maxLaidOut = 256

func newSchemeCache() *schemeCache { return &schemeCache{entries: map[int64]laidOutScheme{}} }

func (c *schemeCache) laidOut(schemeID int64, storedETag string, stored []byte) ([]byte, string, error) {
	c.mu.Lock()
	e, ok := c.entries[schemeID]
	c.mu.Unlock()
	if ok && e.storedETag == storedETag {
		return e.geometry, e.etag, nil
	}
	geometry, etag, err := catalogfile.Relayout(stored)
	if err != nil {
		return nil, "", fmt.Errorf("lay out scheme %d: %w", schemeID, err)
	}
	c.mu.Lock()
	if len(c.entries) >= maxLaidOut {
		clear(c.entries)
	}
	c.entries[schemeID] = laidOutScheme{storedETag: storedETag, geometry: geometry, etag: etag}
	c.mu.Unlock()
	return geometry, etag, nil
}

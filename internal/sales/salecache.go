package sales

import (
	"context"
	"sync"
	"time"

	"ticketsales/store"
)

// saleCache keeps, for a short while, the event and its price list that
// every hold reads. The hold statement itself refuses an event that stopped
// selling, so a cached entry can only make a hold's price up to the TTL old
// after an organizer's price change.
type saleCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[saleKey]saleEntry
}

type saleKey struct{ company, event int64 }

type saleEntry struct {
	event *store.Event
	cats  []store.Category
	at    time.Time
}

// maxSaleEntries bounds the cache; past it, it starts over.
const maxSaleEntries = 10_000

func (c *saleCache) get(k saleKey, now time.Time) (saleEntry, bool) {
	if c == nil || c.ttl <= 0 {
		return saleEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || now.Sub(e.at) > c.ttl {
		return saleEntry{}, false
	}
	return e, true
}

func (c *saleCache) put(k saleKey, e saleEntry) {
	if c == nil || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxSaleEntries {
		c.m = map[saleKey]saleEntry{}
	}
	c.m[k] = e
}

func (c *saleCache) drop(k saleKey) {
	if c == nil {
		return
	}
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// loadSale reads an event and its categories, from the cache when allowed;
// onSaleCached caches only what passed its checks, so an event is on sale
// the moment it is published.
func (s *Service) loadSale(ctx context.Context, companyID, eventID int64, cached bool) (*store.Event, []store.Category, error) {
	k := saleKey{companyID, eventID}
	now := time.Now()
	if cached {
		if e, ok := s.sales.get(k, now); ok {
			return e.event, e.cats, nil
		}
	}
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, nil, err
	}
	cats, err := store.CategoriesOf(ctx, s.db, e.ID)
	if err != nil {
		return nil, nil, err
	}
	return e, cats, nil
}

package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Seek is a keyset position: the sort key of the last row a page showed.
// The next page starts right after it, so rows added or removed before it
// meanwhile shift nothing. Each list uses the fields of its order: Time
// and ID (orders, events, sessions), Text and ID (venues, cities), ID
// alone (webhook endpoints), Time and Text (deliveries).
type Seek struct {
	Time time.Time `json:"t,omitzero"`
	Text string    `json:"s,omitempty"`
	ID   int64     `json:"i,omitempty"`
}

// Paging is one page of a list: by number, or with After the rows that
// follow a position (Page is then ignored).
type Paging struct {
	Page, PerPage int
	After         *Seek
}

// scanPage reads one page of q in order into q's model and answers how
// many rows the whole list has. after is the keyset condition, with
// placeholders for args(position), that selects the rows following a
// position in that order. With a position, the count is taken before the
// condition is added: it is the list's total, not what is left of it.
func scanPage(ctx context.Context, q *bun.SelectQuery, order string, p Paging, after string, args func(*Seek) []any) (int, error) {
	q.OrderExpr(order).Limit(int64(p.PerPage))
	if p.After == nil {
		n, err := q.Offset(int64((p.Page - 1) * p.PerPage)).ScanAndCount(ctx)
		return int(n), err
	}
	n, err := q.Count(ctx)
	if err != nil {
		return 0, err
	}
	return int(n), q.Where(after, args(p.After)...).Scan(ctx)
}

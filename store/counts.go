package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// StatusCount is how many rows share a status and a label (an environment
// or a gateway).
type StatusCount struct {
	Status, Label string
	N             int64
}

const environment = "CASE WHEN o.is_test THEN 'sandbox' ELSE 'production' END"

// OrderCounts counts orders by status and environment.
func OrderCounts(ctx context.Context, db bun.IDB) ([]StatusCount, error) {
	return counts(ctx, db, "orders", "SELECT o.status, "+environment+" AS label, count(*) AS n FROM orders o GROUP BY 1, 2")
}

// RefundCounts counts refunds by status and environment.
func RefundCounts(ctx context.Context, db bun.IDB) ([]StatusCount, error) {
	return counts(ctx, db, "refunds", "SELECT r.status, "+environment+" AS label, count(*) AS n FROM refunds r JOIN orders o ON o.id = r.order_id GROUP BY 1, 2")
}

// PaymentCounts counts gateway payments by status and gateway.
func PaymentCounts(ctx context.Context, db bun.IDB) ([]StatusCount, error) {
	return counts(ctx, db, "payments", "SELECT status, gateway AS label, count(*) AS n FROM payments GROUP BY 1, 2")
}

func counts(ctx context.Context, db bun.IDB, what, query string) ([]StatusCount, error) {
	var out []StatusCount
	if err := db.NewRaw(query).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("count %s: %w", what, err)
	}
	return out, nil
}

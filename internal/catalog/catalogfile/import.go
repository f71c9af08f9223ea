package catalogfile

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"ticketsales/store"
)

// Import reads, validates and upserts a catalog file for a company. A file
// with any error is refused whole (Errors lists every one) and nothing is
// written; a valid file lands in one transaction.
func Import(ctx context.Context, db *bun.DB, companyID int64, data []byte) (store.ImportResult, error) {
	f, err := Parse(data)
	if err != nil {
		return store.ImportResult{}, err
	}
	known, err := store.LoadKnownCatalog(ctx, db, companyID)
	if err != nil {
		return store.ImportResult{}, err
	}
	plan, err := Plan(f, known)
	if err != nil {
		return store.ImportResult{}, err
	}
	res, err := store.ImportCatalog(ctx, db, companyID, plan)
	if err != nil {
		return store.ImportResult{}, fmt.Errorf("import catalog: %w", err)
	}
	return res, nil
}

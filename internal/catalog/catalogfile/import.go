package catalogfile

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// Result lists every record of an imported file with what the import did
// to it. It is the store's own: the import is one transaction there, and
// its result is all a caller shows.
type Result = store.ImportResult

// What an import did to a record (Result.Count).
const (
	Created   = store.Created
	Updated   = store.Updated
	Unchanged = store.Unchanged
)

// Import reads, validates and upserts a catalog file for a company. A file
// with any error is refused whole (Errors lists every one) and nothing is
// written; a valid file lands in one transaction.
func Import(ctx context.Context, db *bun.DB, companyID int64, data []byte) (Result, error) {
	known, err := store.LoadKnownCatalog(ctx, db, companyID)
	if err != nil {
		return Result{}, err
	}
	plan, err := Check(data, known)
	if err != nil {
		return Result{}, err
	}
	res, err := store.ImportCatalog(ctx, db, companyID, plan)
	if err != nil {
		return Result{}, fmt.Errorf("import catalog: %w", err)
	}
	return res, nil
}

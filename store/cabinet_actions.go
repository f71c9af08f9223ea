package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// CabinetAction is one thing the cabinet did to an order (a refund, a
// resend of the tickets e-mail, a cancel) and who did it.
type CabinetAction struct {
	bun.BaseModel `bun:"table:cabinet_actions"`
	ID            int64          `bun:"id,pk,autoincrement"`
	CompanyID     int64          `bun:"company_id"`
	UserID        int64          `bun:"user_id"`
	OrderID       int64          `bun:"order_id"`
	Action        string         `bun:"action"`
	Detail        map[string]any `bun:"detail,type:jsonb"`
	Token         string         `bun:"token"`
	CreatedAt     time.Time      `bun:"created_at,nullzero,default:now()"`
	// UserEmail is who did it (read by ListCabinetActions).
	UserEmail string `bun:"user_email,scanonly"`
}

// ErrActionClaimed: the company's one-time token was claimed already (its
// action was done then); nothing was written.
var ErrActionClaimed = errors.New("cabinet action's token claimed already")

// ClaimCabinetAction records an action under its one-time token unless the
// company's token was claimed already: then it is ErrActionClaimed and
// nothing is written. A claim racing another of the same token waits for
// the other's transaction, and finds the token claimed if it committed.
func ClaimCabinetAction(ctx context.Context, db bun.IDB, a *CabinetAction) error {
	if a.Detail == nil {
		a.Detail = map[string]any{}
	}
	res, err := db.NewInsert().Model(a).On("CONFLICT (company_id, token) DO NOTHING").Returning("id, created_at").Exec(ctx)
	if err != nil {
		return fmt.Errorf("claim cabinet action %s of order %d: %w", a.Action, a.OrderID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("claim cabinet action %s of order %d: %w", a.Action, a.OrderID, err)
	}
	if n != 1 {
		return fmt.Errorf("cabinet action %s of order %d: %w", a.Action, a.OrderID, ErrActionClaimed)
	}
	// A refund's row is the refund's own (CreateRefundTx: the API's
	// refunds too); the others are recorded with their claim, in the
	// action's transaction.
	action, ok := map[string]string{"resend": AuditOrderResend, "cancel": AuditOrderCancel, "email": AuditOrderEmail}[a.Action]
	if !ok {
		return nil
	}
	return Audit(ctx, db, AuditEntry{CompanyID: a.CompanyID, Action: action, Subject: fmt.Sprintf("order %d", a.OrderID), Detail: a.Detail})
}

// GetCabinetAction returns the company's action claimed with token.
func GetCabinetAction(ctx context.Context, db bun.IDB, companyID int64, token string) (*CabinetAction, error) {
	a := new(CabinetAction)
	if err := db.NewSelect().Model(a).Where("company_id = ? AND token = ?", companyID, token).Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("cabinet action: %w", errs.NotFound)
		}
		return nil, fmt.Errorf("cabinet action: %w", err)
	}
	return a, nil
}

// ListCabinetActions lists what the cabinet did to one of the company's
// orders, oldest first, with who did it.
func ListCabinetActions(ctx context.Context, db bun.IDB, companyID, orderID int64) ([]CabinetAction, error) {
	var out []CabinetAction
	err := db.NewSelect().Model(&out).ColumnExpr("cabinet_action.*, u.email AS user_email").
		Join("JOIN cabinet_users u ON u.id = cabinet_action.user_id").
		Where("cabinet_action.company_id = ? AND cabinet_action.order_id = ?", companyID, orderID).
		OrderExpr("cabinet_action.created_at, cabinet_action.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("cabinet actions of order %d: %w", orderID, err)
	}
	return out, nil
}

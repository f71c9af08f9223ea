package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// OrderNote is a note the back office wrote on an order, and who wrote it.
type OrderNote struct {
	bun.BaseModel `bun:"table:order_notes"`
	ID            int64     `bun:"id,pk,autoincrement"`
	CompanyID     int64     `bun:"company_id"`
	OrderID       int64     `bun:"order_id"`
	UserID        int64     `bun:"user_id"`
	Body          string    `bun:"body"`
	Token         string    `bun:"token"`
	CreatedAt     time.Time `bun:"created_at,nullzero,default:now()"`
	// UserEmail is who wrote it (read by ListOrderNotes).
	UserEmail string `bun:"user_email,scanonly"`
}

// AddOrderNote adds a note under its form's one-time token unless the
// company's token was claimed already: then it is ErrActionClaimed and
// nothing is written.
func AddOrderNote(ctx context.Context, db bun.IDB, n *OrderNote) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		res, err := tx.NewInsert().Model(n).On("CONFLICT (company_id, token) DO NOTHING").Returning("id, created_at").Exec(ctx)
		if err != nil {
			return AuditEntry{}, fmt.Errorf("add a note to order %d: %w", n.OrderID, err)
		}
		if k, err := res.RowsAffected(); err != nil {
			return AuditEntry{}, fmt.Errorf("add a note to order %d: %w", n.OrderID, err)
		} else if k != 1 {
			return AuditEntry{}, fmt.Errorf("note on order %d: %w", n.OrderID, ErrActionClaimed)
		}
		return AuditEntry{CompanyID: n.CompanyID, Action: AuditOrderNote, Subject: fmt.Sprintf("order %d", n.OrderID),
			Detail: map[string]any{"note_id": n.ID, "characters": utf8.RuneCountInString(n.Body)}}, nil
	})
}

// ListOrderNotes lists the notes on one of the company's orders, newest
// first, with who wrote each.
func ListOrderNotes(ctx context.Context, db bun.IDB, companyID, orderID int64) ([]OrderNote, error) {
	var out []OrderNote
	err := db.NewSelect().Model(&out).ColumnExpr("order_note.*, u.email AS user_email").
		Join("JOIN cabinet_users u ON u.id = order_note.user_id").
		Where("order_note.company_id = ? AND order_note.order_id = ?", companyID, orderID).
		OrderExpr("order_note.created_at DESC, order_note.id DESC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("notes on order %d: %w", orderID, err)
	}
	return out, nil
}

// LockOrderEmail reads the buyer's address of one of the company's orders
// and locks the order's row until tx ends (another company's order is
// errs.NotFound).
func LockOrderEmail(ctx context.Context, tx bun.Tx, companyID, orderID int64) (string, error) {
	var email string
	err := tx.NewRaw("SELECT customer_email FROM orders WHERE id = ? AND company_id = ? FOR UPDATE", orderID, companyID).Scan(ctx, &email)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("order %d: %w", orderID, errs.NotFound)
	}
	if err != nil {
		return "", fmt.Errorf("order %d's e-mail: %w", orderID, err)
	}
	return email, nil
}

// SetOrderEmail sets the buyer's address of an order (locked by
// LockOrderEmail in tx).
func SetOrderEmail(ctx context.Context, tx bun.Tx, orderID int64, email string) error {
	if _, err := tx.NewRaw("UPDATE orders SET customer_email = ?, updated_at = now() WHERE id = ?", email, orderID).Exec(ctx); err != nil {
		return fmt.Errorf("set order %d's e-mail: %w", orderID, err)
	}
	return nil
}

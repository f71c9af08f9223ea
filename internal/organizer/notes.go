package organizer

// Notes on an order, and correcting the buyer's e-mail (docs/cabinet.md,
// "Notes and the buyer's e-mail"): what support does for a buyer who
// writes in. Each is one entry point here, its bounds checked here, its
// form's one-time token claimed in its own transaction.

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/orders"
	"github.com/ticketsales/ticketsales/store"
)

// ActionEmail: the buyer's e-mail corrected (cabinet_actions' action).
const ActionEmail = "email"

// MaxNoteLength is a note's bound, in characters (not bytes: a Cyrillic
// note of 2000 letters is 2000).
const MaxNoteLength = 2000

// ErrBadInput: the form's input is out of bounds; nothing was done. Why
// says what the page tells.
type ErrBadInput struct{ Why string }

func (e *ErrBadInput) Error() string { return e.Why }

// Note is a note on an order as its page shows it.
type Note struct {
	Author string
	At     When // in the event's zone, as the page's other times
	Body   string
}

// AddNote adds a note (trimmed; 1 to MaxNoteLength characters, else
// *ErrBadInput) by the actor to one of its company's orders (another
// company's is errs.NotFound), its form's token claimed by the note's
// insert: the same form sent again is ErrRepeated, nothing added.
func (s *Orders) AddNote(ctx context.Context, a Actor, orderID int64, body, token string) error {
	body = strings.TrimSpace(body)
	switch n := utf8.RuneCountInString(body); {
	case !utf8.ValidString(body):
		return &ErrBadInput{Why: "The note could not be read as text."}
	case n == 0:
		return &ErrBadInput{Why: "Write the note first: it is empty."}
	case n > MaxNoteLength:
		return &ErrBadInput{Why: fmt.Sprintf("A note is at most %d characters; this one has %d.", MaxNoteLength, n)}
	}
	if _, err := s.GetOrder(ctx, a.CompanyID, orderID); err != nil {
		return err
	}
	return repeated(store.AddOrderNote(ctx, s.DB, &store.OrderNote{CompanyID: a.CompanyID, OrderID: orderID, UserID: a.UserID,
		Body: body, Token: token}))
}

// Notes lists the notes on one of the company's orders, newest first,
// their times in loc.
func Notes(ctx context.Context, db bun.IDB, companyID, orderID int64, loc *time.Location) ([]Note, error) {
	rows, err := store.ListOrderNotes(ctx, db, companyID, orderID)
	if err != nil {
		return nil, err
	}
	out := make([]Note, 0, len(rows))
	for _, n := range rows {
		out = append(out, Note{Author: n.UserEmail, At: At(n.CreatedAt, loc), Body: n.Body})
	}
	return out, nil
}

// CorrectEmail sets the buyer's address of one of the company's orders
// (another company's is errs.NotFound) to email, checked as the API checks
// a customer's (orders.PlainAddress; else *ErrBadInput, nothing changed).
// The order is updated in place and the old and the new address recorded
// as an 'email' action, the form's token claimed, in one transaction: the
// same form again is ErrRepeated. A later resend goes to the new address
// (the worker reads it from the order).
func (s *Orders) CorrectEmail(ctx context.Context, a Actor, orderID int64, email, token string) (from string, err error) {
	email = strings.TrimSpace(email)
	if !orders.PlainAddress(email) {
		return "", &ErrBadInput{Why: fmt.Sprintf("“%s” is not an e-mail address the tickets can be sent to: give one plain address "+
			"such as anna@example.com (no name, comment or spaces), at most %d characters.", email, orders.MaxEmailLength)}
	}
	err = s.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		if from, err = store.LockOrderEmail(ctx, tx, a.CompanyID, orderID); err != nil {
			return err
		}
		// The claim first: the same form sent again is ErrRepeated, even
		// though the address is the new one by then. A refusal below
		// rolls the claim back.
		if err := claim(ctx, tx, &store.CabinetAction{CompanyID: a.CompanyID, UserID: a.UserID, OrderID: orderID, Action: ActionEmail,
			Token: token, Detail: map[string]any{"from": from, "to": email}}); err != nil {
			return err
		}
		if from == email {
			return &ErrBadInput{Why: fmt.Sprintf("The buyer's e-mail is %s already; nothing changed.", email)}
		}
		return store.SetOrderEmail(ctx, tx, orderID, email)
	})
	if err != nil {
		return "", err
	}
	return from, nil
}

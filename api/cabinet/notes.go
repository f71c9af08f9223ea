package cabinet

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
)

// Notes on an order and correcting the buyer's e-mail (internal/organizer,
// notes.go): two forms on the order's page itself, each with a one-time
// token claimed in its own transaction, as the actions' confirm forms
// (actions.go). A refused form shows the order's page again with why
// (4xx), what was typed kept, nothing changed; a done one answers 303 to
// the order's page with a notice.

// postedOrder reads the order of the URL (one of the user's company, in
// either environment; else 404).
func (c *cabinet) postedOrder(w http.ResponseWriter, r *http.Request) (*organizer.ActionOrder, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return nil, false
	}
	o, err := c.office.GetOrder(r.Context(), user(r).CompanyID, id)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, false
	}
	return o, true
}

const badForm = "This form could not be used: reload the order's page and try again."

// addNote adds a note to the order (POST /cabinet/orders/{id}/notes).
func (c *cabinet) addNote(w http.ResponseWriter, r *http.Request) {
	o, ok := c.postedOrder(w, r)
	if !ok {
		return
	}
	view := &orderPage{NoteBody: r.PostFormValue("note"), NoteToken: r.PostFormValue("token")}
	if !validToken(view.NoteToken) {
		view.NoteToken, view.NoteWhy = "", badForm
		c.showOrder(w, r, http.StatusBadRequest, o.IsTest, o.ID, view)
		return
	}
	err := c.office.AddNote(r.Context(), c.actor(r), o.ID, view.NoteBody, view.NoteToken)
	var bad *organizer.ErrBadInput
	switch {
	case errors.Is(err, organizer.ErrRepeated):
		c.done(w, r, orderURL(o), "This note was added already; it was not added again.")
	case errors.As(err, &bad):
		view.NoteWhy = bad.Why + " The note was not added."
		c.showOrder(w, r, http.StatusUnprocessableEntity, o.IsTest, o.ID, view)
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	default:
		u := user(r)
		c.Log.InfoContext(r.Context(), "cabinet: note added", "user_id", u.ID, "company_id", u.CompanyID, "order_id", o.ID)
		c.done(w, r, orderURL(o), fmt.Sprintf("Your note is added to order %d.", o.ID))
	}
}

// correctEmail sets the buyer's e-mail of the order (POST
// /cabinet/orders/{id}/email); a resend after it goes to the new address.
func (c *cabinet) correctEmail(w http.ResponseWriter, r *http.Request) {
	o, ok := c.postedOrder(w, r)
	if !ok {
		return
	}
	view := &orderPage{NewEmail: r.PostFormValue("email"), EmailToken: r.PostFormValue("token")}
	if !validToken(view.EmailToken) {
		view.EmailToken, view.EmailWhy = "", badForm
		c.showOrder(w, r, http.StatusBadRequest, o.IsTest, o.ID, view)
		return
	}
	from, err := c.office.CorrectEmail(r.Context(), c.actor(r), o.ID, view.NewEmail, view.EmailToken)
	var bad *organizer.ErrBadInput
	switch {
	case errors.Is(err, organizer.ErrRepeated):
		c.done(w, r, orderURL(o), "This form was sent already and the e-mail was corrected then; nothing more changed.")
	case errors.As(err, &bad):
		view.EmailWhy = bad.Why
		c.showOrder(w, r, http.StatusUnprocessableEntity, o.IsTest, o.ID, view)
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	default:
		u := user(r)
		c.Log.InfoContext(r.Context(), "cabinet: buyer's e-mail corrected", "user_id", u.ID, "company_id", u.CompanyID, "order_id", o.ID)
		c.done(w, r, orderURL(o), fmt.Sprintf("The buyer's e-mail of order %d is corrected (it was %s). A resend now goes to the new address.", o.ID, from))
	}
}

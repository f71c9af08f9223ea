package cabinet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"ticketsales/internal/errs"
	"ticketsales/internal/refunds"
	"ticketsales/internal/states"
	"ticketsales/store"
	"ticketsales/workflows/contract"
)

// Acting on an order: refund tickets, send the tickets e-mail again,
// cancel an unpaid order. Each goes through the service path the API's
// own request takes (the same statements, workflows and waits). Each asks
// to confirm on a page of its own, whose form carries a one-time random
// token; the POST claims the token with one guarded INSERT into
// cabinet_actions (who, what, when), so a double click, a reload or a
// racing second tab does the action once: the second claim finds the
// token taken, does nothing and redirects to the order. Every POST answers
// 303 with a notice (c.done).

// The actions, as cabinet_actions records them.
const (
	actionRefund = "refund"
	actionResend = "resend"
	actionCancel = "cancel"
)

// errRepeated: the form's token was claimed already; nothing was done.
var errRepeated = errors.New("this form was sent already")

// actionPage is an action's confirm page (template order_action.html).
type actionPage struct {
	Kind     string // refund, resend or cancel
	Order    *store.Order
	OrderURL string
	Event    string
	Paid     int64 // what the buyer paid, refunds not taken off
	Refunded int64
	// Tickets are the order's active tickets (refund), ticked as chosen.
	Tickets  []actionTicket
	Token    string
	Reason   string
	Override bool
	// Why says why the action cannot be done to the order now (no form).
	Why string
}

// actionTicket is a ticket the refund form lists.
type actionTicket struct {
	ID          int64
	Number      string
	Seat        string
	Price       int64
	CheckedInAt *time.Time
	Chosen      bool
	Refused     bool // admitted at the door, and the override was not given
}

// orderURL is the order's page in the back office (where every action ends).
func orderURL(id int64) string { return "/cabinet/orders/" + strconv.FormatInt(id, 10) }

// newToken is a confirm page's one-time token: 128 random bits.
func newToken() string { return rand.Text() }

// validToken tells whether a posted token can be one newToken made.
func validToken(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// actionOrder reads the order of the URL: one of the user's company, in
// either environment; another company's or an unknown id is 404.
func (c *cabinet) actionOrder(w http.ResponseWriter, r *http.Request) (*store.Order, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return nil, false
	}
	o, err := store.GetOrderByID(r.Context(), c.DB, id)
	if errors.Is(err, errs.NotFound) || (err == nil && o.CompanyID != user(r).CompanyID) {
		c.notFound(w, r)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, false
	}
	return o, true
}

// actionData is the confirm page of kind for o, with a new token.
func (c *cabinet) actionData(ctx context.Context, kind string, o *store.Order) (*actionPage, error) {
	p := &actionPage{Kind: kind, Order: o, OrderURL: orderURL(o.ID), Token: newToken()}
	ev, err := store.GetEventPlace(ctx, c.DB, o.EventID)
	if err != nil {
		return nil, err
	}
	p.Event = ev.Title
	if err := c.DB.NewRaw("SELECT coalesce(sum(amount), 0) FROM refunds WHERE order_id = ?", o.ID).Scan(ctx, &p.Refunded); err != nil {
		return nil, fmt.Errorf("refunds of order %d: %w", o.ID, err)
	}
	if o.PaidAt != nil {
		p.Paid = o.Amount
	}
	switch kind {
	case actionRefund:
		if o.Status != states.OrderPaid && o.Status != states.OrderPartiallyRefunded {
			p.Why = fmt.Sprintf("Order %d is %s: only a paid order's tickets can be refunded.", o.ID, words(o.Status))
			return p, nil
		}
		rows, err := store.ListOrderTickets(ctx, c.DB, o.ID)
		if err != nil {
			return nil, err
		}
		for _, t := range rows {
			if t.Status != states.TicketActive {
				continue
			}
			seat := t.Category
			if t.Label != nil {
				seat = *t.Label
			}
			p.Tickets = append(p.Tickets, actionTicket{ID: t.ID, Number: t.Number, Seat: seat, Price: t.Price, CheckedInAt: t.CheckedInAt})
		}
	case actionResend:
		switch {
		case o.IsTest:
			p.Why = fmt.Sprintf("Order %d is a sandbox (test) order: its tickets are never e-mailed.", o.ID)
		case o.Status != states.OrderPaid && o.Status != states.OrderPartiallyRefunded:
			p.Why = fmt.Sprintf("Order %d is %s: only a paid order's tickets are e-mailed.", o.ID, words(o.Status))
		}
	case actionCancel:
		if o.Status != states.OrderPendingPayment || o.PaymentAcceptedAt != nil {
			p.Why = fmt.Sprintf("Order %d is %s: only an unpaid order can be cancelled.", o.ID, words(o.Status))
			if o.Status == states.OrderPaid || o.Status == states.OrderPartiallyRefunded || o.PaymentAcceptedAt != nil {
				p.Why += " Refund its tickets instead."
			}
		}
	}
	return p, nil
}

// StatusText is the order's status as the page says it.
func (p *actionPage) StatusText() string { return words(p.Order.Status) }

// words is an order status as the pages say it.
func words(s states.OrderStatus) string { return strings.ReplaceAll(string(s), "_", " ") }

var actionTitles = map[string]string{
	actionRefund: "Refund tickets of order %d",
	actionResend: "Send the tickets of order %d again",
	actionCancel: "Cancel order %d",
}

// confirmPage shows an action's confirm page; message (if any) says why
// the last attempt changed nothing.
func (c *cabinet) confirmPage(w http.ResponseWriter, r *http.Request, status int, p *actionPage, message string) {
	c.render(w, r, status, "order_action", pageData{Title: fmt.Sprintf(actionTitles[p.Kind], p.Order.ID), Nav: "orders",
		Message: message, Data: p})
}

// actionForm serves GET /cabinet/orders/{id}/{kind}: the confirm page.
func (c *cabinet) actionForm(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, ok := c.actionOrder(w, r)
		if !ok {
			return
		}
		p, err := c.actionData(r.Context(), kind, o)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if kind == actionRefund {
			for i := range p.Tickets {
				p.Tickets[i].Chosen = true // all of them, unless the organizer unticks some
			}
		}
		c.confirmPage(w, r, http.StatusOK, p, "")
	}
}

// claim records the action under the form's token, in tx: errRepeated when
// the token was claimed already.
func claim(ctx context.Context, tx bun.IDB, a *store.CabinetAction) error {
	ok, err := store.ClaimCabinetAction(ctx, tx, a)
	if err != nil {
		return err
	}
	if !ok {
		return errRepeated
	}
	return nil
}

// repeated ends a POST whose token was claimed already: nothing was done
// this time; the order's page shows what the first one did.
func (c *cabinet) repeated(w http.ResponseWriter, r *http.Request, o *store.Order) {
	c.done(w, r, orderURL(o.ID), "This form was sent already and its action was done then; nothing more was done.")
}

// expired answers a POST without a usable token: the confirm page again,
// with a new one, and nothing done.
func (c *cabinet) expired(w http.ResponseWriter, r *http.Request, p *actionPage) {
	c.confirmPage(w, r, http.StatusBadRequest, p, "This form could not be used: check the order and confirm again.")
}

// refundOrder refunds the chosen tickets (POST /cabinet/orders/{id}/refund)
// as the API's refund does (refunds.Service), the action recorded in the
// refund's own transaction; the refund's id derives from the token.
func (c *cabinet) refundOrder(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	o, ok := c.actionOrder(w, r)
	if !ok {
		return
	}
	p, err := c.actionData(r.Context(), actionRefund, o)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	_ = r.ParseForm()
	token := r.PostForm.Get("token")
	p.Reason = strings.TrimSpace(r.PostForm.Get("reason"))
	p.Override = r.PostForm.Get("checked_in") == "yes"
	var ticketIDs []int64
	for _, v := range r.PostForm["ticket"] {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			c.confirmPage(w, r, http.StatusBadRequest, p, "The chosen tickets could not be read: choose them again.")
			return
		}
		ticketIDs = append(ticketIDs, id)
	}
	for i := range p.Tickets {
		p.Tickets[i].Chosen = containsID(ticketIDs, p.Tickets[i].ID)
	}
	if !validToken(token) {
		c.expired(w, r, p)
		return
	}
	p.Token = token // the same form, sent again after a fix, is still one action
	switch {
	case len(ticketIDs) == 0: // never "all": the form lists what is refunded
		c.confirmPage(w, r, http.StatusUnprocessableEntity, p, "Choose at least one ticket to refund. Nothing was refunded.")
		return
	case len(p.Reason) > 500:
		c.confirmPage(w, r, http.StatusUnprocessableEntity, p, "The reason must have at most 500 characters. Nothing was refunded.")
		return
	}
	detail := map[string]any{"ticket_ids": ticketIDs, "reason": p.Reason, "checked_in_override": p.Override}
	ref, err := c.Refunds.RefundAsOrganizer(r.Context(), refunds.OrganizerRefund{CompanyID: u.CompanyID, OrderID: o.ID,
		TicketIDs: ticketIDs, Reason: p.Reason, AllowCheckedIn: p.Override, Token: token,
		Record: func(ctx context.Context, tx bun.Tx, refundID string) error {
			detail["refund_id"] = refundID
			return claim(ctx, tx, &store.CabinetAction{CompanyID: u.CompanyID, UserID: u.ID, OrderID: o.ID,
				Action: actionRefund, Detail: detail, Token: token})
		}})
	var checkedIn *errs.CheckedInError
	var state *errs.StateError
	var invalid *errs.ValidationError
	switch {
	case errors.Is(err, errRepeated):
		c.repeated(w, r, o)
	case errors.As(err, &checkedIn):
		for i := range p.Tickets {
			p.Tickets[i].Refused = containsID(checkedIn.TicketIDs, p.Tickets[i].ID)
		}
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Nothing was refunded: %s already admitted at the door. "+
			"Tick “Refund tickets already admitted at the door” to refund them too, or untick them.", ticketList(p.Tickets, checkedIn.TicketIDs)))
	case errors.As(err, &state), errors.As(err, &invalid):
		// Refunded meanwhile (another tab, the API), or not this order's.
		fresh, ferr := c.actionData(r.Context(), actionRefund, o)
		if ferr != nil {
			c.fail(w, r, ferr)
			return
		}
		fresh.Reason, fresh.Override = p.Reason, p.Override
		c.confirmPage(w, r, http.StatusConflict, fresh,
			"Nothing was refunded: some of the chosen tickets are refunded already or not tickets of this order. The list below is as it is now.")
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	default:
		c.Log.InfoContext(r.Context(), "cabinet: refund", "user_id", u.ID, "company_id", u.CompanyID, "order_id", o.ID,
			"refund_id", ref.ID, "tickets", len(ref.TicketIDs), "checked_in_override", p.Override)
		c.done(w, r, orderURL(o.ID), refundNotice(o, ref))
	}
}

// refundNotice says what a refund did and where the money is.
func refundNotice(o *store.Order, ref *store.Refund) string {
	s := fmt.Sprintf("Refund %s: %d ticket(s) of order %d voided, %s. ", ref.ID, len(ref.TicketIDs), o.ID, money(ref.Amount, o.Currency))
	switch {
	case ref.MoneyReturnedBy == states.PayExternally:
		return s + "The order was paid to the partner: the partner returns the money."
	case ref.Status == states.RefundCompleted:
		return s + "The money is returned through the gateway."
	case ref.Status == states.RefundFailed:
		return s + "The gateway has not returned the money yet: it is tried again, and operators are alerted."
	default:
		return s + "The money is on its way back through the gateway (the refund is pending)."
	}
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// ticketList names the tickets of ids by number: "ticket 12-3" or
// "tickets 12-3, 12-4".
func ticketList(tickets []actionTicket, ids []int64) string {
	var names []string
	for _, t := range tickets {
		if containsID(ids, t.ID) {
			names = append(names, t.Number)
		}
	}
	if len(names) == 1 {
		return "ticket " + names[0] + " was"
	}
	return "tickets " + strings.Join(names, ", ") + " were"
}

// resendID names one resend: derived from the form's token, so a repeat
// of the form starts the same workflow (and its e-mail carries the same
// Message-ID).
func resendID(token string) string {
	sum := sha256.Sum256([]byte("resend|" + token))
	return hex.EncodeToString(sum[:10])
}

// resendTickets sends the tickets e-mail again (POST
// /cabinet/orders/{id}/resend): the worker sends it, in a workflow whose id
// derives from the order and the token. A repeat of the form starts it
// again, which finds it started: one e-mail.
func (c *cabinet) resendTickets(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	o, ok := c.actionOrder(w, r)
	if !ok {
		return
	}
	p, err := c.actionData(r.Context(), actionResend, o)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	token := r.PostFormValue("token")
	if !validToken(token) {
		c.expired(w, r, p)
		return
	}
	p.Token = token
	id := resendID(token)
	if p.Why != "" {
		// Not to be sent (now): unless this form's resend was sent
		// already, say why.
		_, err := store.GetCabinetAction(r.Context(), c.DB, u.CompanyID, token)
		switch {
		case err == nil:
			c.repeated(w, r, o)
		case errors.Is(err, errs.NotFound):
			c.confirmPage(w, r, http.StatusConflict, p, p.Why+" Nothing was sent.")
		default:
			c.fail(w, r, err)
		}
		return
	}
	err = claim(r.Context(), c.DB, &store.CabinetAction{CompanyID: u.CompanyID, UserID: u.ID, OrderID: o.ID,
		Action: actionResend, Detail: map[string]any{"resend_id": id, "workflow_id": contract.ResendTicketsWorkflowID(o.ID, id)}, Token: token})
	first := err == nil
	if err != nil && !errors.Is(err, errRepeated) {
		c.fail(w, r, err)
		return
	}
	if !first {
		// The token is this order's resend (not another action's form
		// sent here): only then is its start completed.
		a, err := store.GetCabinetAction(r.Context(), c.DB, u.CompanyID, token)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if a.OrderID != o.ID || a.Action != actionResend {
			c.repeated(w, r, o)
			return
		}
	}
	// Started again on a repeat: the workflow's id finds the first one
	// (running or done), so the e-mail goes once; a first POST whose start
	// failed is completed by the repeat.
	_, err = c.Temporal.ExecuteWorkflow(r.Context(), client.StartWorkflowOptions{
		ID: contract.ResendTicketsWorkflowID(o.ID, id), TaskQueue: c.Orders.TaskQueue,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDAttr.ValueSet(o.CompanyID),
			contract.EventIDAttr.ValueSet(o.EventID), contract.IsTestAttr.ValueSet(o.IsTest)),
	}, contract.ResendTicketsWorkflow, contract.ResendTicketsInput{OrderID: o.ID, CompanyID: o.CompanyID, ResendID: id})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		c.Log.ErrorContext(r.Context(), "cabinet: resend tickets", "order_id", o.ID, "err", err)
		w.Header().Set("Retry-After", "5")
		c.confirmPage(w, r, http.StatusServiceUnavailable, p,
			"The e-mail could not be handed to the sender just now. Confirm again in a moment: it is sent once however often you confirm.")
		return
	}
	if !first {
		c.repeated(w, r, o)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet: tickets e-mail sent again", "user_id", u.ID, "company_id", u.CompanyID, "order_id", o.ID)
	c.done(w, r, orderURL(o.ID), fmt.Sprintf("The tickets of order %d are being e-mailed again to the buyer.", o.ID))
}

// cancelOrder cancels an unpaid order (POST /cabinet/orders/{id}/cancel)
// as the API's cancel does (orders.Service), the action recorded in the
// cancel's transaction. A paid order is refused, unchanged.
func (c *cabinet) cancelOrder(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	o, ok := c.actionOrder(w, r)
	if !ok {
		return
	}
	p, err := c.actionData(r.Context(), actionCancel, o)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	token := r.PostFormValue("token")
	if !validToken(token) {
		c.expired(w, r, p)
		return
	}
	p.Token = token
	_, cancelled, err := c.Orders.CancelAsOrganizer(r.Context(), u.CompanyID, o.IsTest, o.ID, func(ctx context.Context, tx bun.Tx) error {
		return claim(ctx, tx, &store.CabinetAction{CompanyID: u.CompanyID, UserID: u.ID, OrderID: o.ID, Action: actionCancel, Token: token})
	})
	var state *errs.StateError
	switch {
	case errors.Is(err, errRepeated):
		c.repeated(w, r, o)
	case errors.Is(err, errs.OrderPaid):
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Order %d is paid: it was not cancelled. Refund its tickets instead.", o.ID))
	case errors.As(err, &state):
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Order %d is %s: only an unpaid order can be cancelled. Nothing changed.", o.ID, state.Status))
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	case !cancelled:
		// Cancelled before: by this form (its claim is there), or else.
		if _, err := store.GetCabinetAction(r.Context(), c.DB, u.CompanyID, token); err == nil {
			c.repeated(w, r, o)
			return
		}
		c.done(w, r, orderURL(o.ID), fmt.Sprintf("Order %d was cancelled already; nothing changed.", o.ID))
	default:
		c.Log.InfoContext(r.Context(), "cabinet: order cancelled", "user_id", u.ID, "company_id", u.CompanyID, "order_id", o.ID)
		c.done(w, r, orderURL(o.ID), fmt.Sprintf("Order %d is cancelled: its seats are back on sale.", o.ID))
	}
}

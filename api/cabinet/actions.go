package cabinet

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/refunds"
	"github.com/ticketsales/ticketsales/internal/states"
)

// Acting on an order (internal/organizer): refund tickets, send the
// tickets e-mail again, cancel an unpaid order, each through the service
// path the API's own request takes. Each asks to confirm on a page of its
// own whose form carries a one-time random token; the POST claims the
// token in cabinet_actions (who, what, when), so a double click, a reload
// or a racing second tab does the action once: a second claim finds the
// token taken, does nothing and redirects to the order. Every POST answers
// 303 with a notice (c.done); a refused one shows its confirm page again
// with why (4xx), nothing changed.

// The actions' names in the URLs.
const (
	actionRefund = organizer.ActionRefund
	actionResend = organizer.ActionResend
	actionCancel = organizer.ActionCancel
)

// actionPage is an action's confirm page (template order_action.html).
type actionPage struct {
	Kind     string // refund, resend or cancel
	Order    *organizer.ActionOrder
	OrderURL string
	// Tickets are the order's active tickets (refund), ticked as chosen.
	Tickets  []actionTicket
	Token    string
	Reason   string
	Override bool
	// Why says why the action cannot be done to the order now (no form).
	Why string
	// Amount is the money the chosen tickets' refund returns, by the
	// refund rule itself (organizer.ActionOrder.RefundAmount); WithFee says whether it is
	// the order's rest, the service fee included.
	Amount  int64
	WithFee bool
	FeeBack int64 // of Amount, what is beyond the chosen tickets' prices
}

// price sets p.Amount and p.WithFee for the tickets chosen now, by the
// same rule the refund applies, so the page says the money before the
// button.
func (p *actionPage) price() {
	var chosen []int64
	for _, t := range p.Tickets {
		if t.Chosen {
			chosen = append(chosen, t.ID)
		}
	}
	p.Amount, p.WithFee, p.FeeBack = p.Order.RefundAmount(chosen)
}

// ChosenCount is how many tickets are ticked.
func (p *actionPage) ChosenCount() int {
	n := 0
	for _, t := range p.Tickets {
		if t.Chosen {
			n++
		}
	}
	return n
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

// StatusText is the order's status as the page says it.
func (p *actionPage) StatusText() string { return statusWord(p.Order.Status) }

// orderURL is the order's page in the cabinet (where every action
// ends); a sandbox order's opens with ?env=sandbox.
func orderURL(o *organizer.ActionOrder) string {
	u := "/cabinet/orders/" + strconv.FormatInt(o.ID, 10)
	if o.IsTest {
		u += "?env=sandbox"
	}
	return u
}

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

// actionData reads the order of the URL (one of the user's company, in
// either environment; else 404) and makes the confirm page of kind for it,
// with a new token.
func (c *cabinet) actionData(w http.ResponseWriter, r *http.Request, kind string) (*actionPage, bool) {
	o, ok := c.postedOrder(w, r)
	if !ok {
		return nil, false
	}
	p := &actionPage{Kind: kind, Order: o, OrderURL: orderURL(o), Token: newToken()}
	switch kind {
	case actionRefund:
		p.Why = organizer.Refundable(o.Order)
		for _, t := range o.Tickets {
			seat := t.Category
			if t.Label != nil {
				seat = *t.Label
			}
			p.Tickets = append(p.Tickets, actionTicket{ID: t.ID, Number: t.Number, Seat: seat, Price: t.Price, CheckedInAt: t.CheckedInAt})
		}
	case actionResend:
		p.Why = organizer.Resendable(o.Order)
	case actionCancel:
		p.Why = organizer.Cancellable(o.Order)
	}
	return p, true
}

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
		p, ok := c.actionData(w, r, kind)
		if !ok {
			return
		}
		// Tickets not yet used at the door are ticked; an admitted one only
		// when the organizer ticks it. A form sent back with pick=1 (the
		// page's "Show the amount", or its script) chooses exactly its
		// tickets: the page then shows their money.
		picked := r.URL.Query().Get("pick") == "1"
		for i := range p.Tickets {
			t := &p.Tickets[i]
			if picked {
				t.Chosen = slices.Contains(r.URL.Query()["ticket"], strconv.FormatInt(t.ID, 10))
			} else {
				t.Chosen = t.CheckedInAt == nil
			}
		}
		if picked {
			p.Override = r.URL.Query().Get("checked_in") == "yes"
			p.Reason = r.URL.Query().Get("reason")
		}
		p.price()
		c.confirmPage(w, r, http.StatusOK, p, "")
	}
}

// postedToken reads the form's token into p: false (the confirm page
// answered again, with a new token, nothing done) when it cannot be one.
func (c *cabinet) postedToken(w http.ResponseWriter, r *http.Request, p *actionPage) bool {
	token := r.PostFormValue("token")
	if !validToken(token) {
		c.confirmPage(w, r, http.StatusBadRequest, p, "This form could not be used: check the order and confirm again.")
		return false
	}
	p.Token = token // the same form, sent again after a fix, is still one action
	return true
}

// repeated ends a POST whose token was claimed already: nothing was done
// this time; the order's page shows what the first one did.
func (c *cabinet) repeated(w http.ResponseWriter, r *http.Request, p *actionPage) {
	c.done(w, r, p.OrderURL, "This form was sent already and its action was done then; nothing more was done.")
}

func (c *cabinet) actor(r *http.Request) organizer.Actor {
	u := user(r)
	return organizer.Actor{CompanyID: u.CompanyID, UserID: u.ID}
}

// refundOrder refunds the chosen tickets (POST /cabinet/orders/{id}/refund).
func (c *cabinet) refundOrder(w http.ResponseWriter, r *http.Request) {
	p, ok := c.actionData(w, r, actionRefund)
	if !ok {
		return
	}
	_ = r.ParseForm()
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
		p.Tickets[i].Chosen = slices.Contains(ticketIDs, p.Tickets[i].ID)
	}
	p.price()
	if !c.postedToken(w, r, p) {
		return
	}
	ref, err := c.office.Refund(r.Context(), c.actor(r), organizer.RefundRequest{OrderID: p.Order.ID, TicketIDs: ticketIDs,
		Reason: p.Reason, AllowCheckedIn: p.Override, Token: p.Token})
	var bounds *refunds.RequestError
	var checkedIn *errs.CheckedInError
	var state *errs.StateError
	var invalid *errs.ValidationError
	switch {
	case errors.Is(err, organizer.ErrRepeated):
		c.repeated(w, r, p)
	case errors.As(err, &bounds): // the refund's own rules: no ticket chosen, a reason too long
		c.confirmPage(w, r, http.StatusUnprocessableEntity, p, bounds.Error()+" Nothing was refunded.")
	case errors.As(err, &checkedIn):
		for i := range p.Tickets {
			p.Tickets[i].Refused = slices.Contains(checkedIn.TicketIDs, p.Tickets[i].ID)
		}
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Nothing was refunded: %s already admitted at the door. "+
			"Tick “Refund tickets already admitted at the door” to refund them too, or untick them.", ticketList(p.Tickets, checkedIn.TicketIDs)))
	case errors.As(err, &state), errors.As(err, &invalid):
		// Refunded meanwhile (another tab, the API), or not this order's:
		// the page again as the order is now.
		fresh, ok := c.actionData(w, r, actionRefund)
		if !ok {
			return
		}
		fresh.Reason, fresh.Override, fresh.Token = p.Reason, p.Override, p.Token
		fresh.price()
		c.confirmPage(w, r, http.StatusConflict, fresh,
			"Nothing was refunded: some of the chosen tickets are refunded already or not tickets of this order. The list below is as it is now.")
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	default:
		u := user(r)
		c.Log.InfoContext(r.Context(), "cabinet: refund", "user_id", u.ID, "company_id", u.CompanyID, "order_id", p.Order.ID,
			"refund_id", ref.ID, "tickets", len(ref.TicketIDs), "checked_in_override", p.Override)
		s := fmt.Sprintf("Refund %s: %d ticket(s) of order %d voided, %s. ", ref.ID, len(ref.TicketIDs), p.Order.ID, money(ref.Amount, p.Order.Currency))
		switch {
		case ref.MoneyReturnedBy == states.PayExternally:
			s += "The order was paid to the partner: the partner returns the money."
		case ref.Status == states.RefundCompleted:
			s += "The money is returned through the gateway."
		case ref.Status == states.RefundFailed:
			s += "The gateway has not returned the money yet: it is tried again, and operators are alerted."
		default:
			s += "The money is on its way back through the gateway (the refund is pending)."
		}
		c.done(w, r, p.OrderURL, s)
	}
}

// ticketList names the tickets of ids by number: "ticket N was" or
// "tickets N, M were".
func ticketList(tickets []actionTicket, ids []int64) string {
	var names []string
	for _, t := range tickets {
		if slices.Contains(ids, t.ID) {
			names = append(names, t.Number)
		}
	}
	if len(names) == 1 {
		return "ticket " + names[0] + " was"
	}
	return "tickets " + strings.Join(names, ", ") + " were"
}

// resendTickets sends the tickets e-mail again (POST
// /cabinet/orders/{id}/resend), through the worker.
func (c *cabinet) resendTickets(w http.ResponseWriter, r *http.Request) {
	p, ok := c.actionData(w, r, actionResend)
	if !ok || !c.postedToken(w, r, p) {
		return
	}
	_, err := c.office.Resend(r.Context(), c.actor(r), p.Order.Order, p.Token)
	var impossible *organizer.ErrNotPossible
	switch {
	case errors.Is(err, organizer.ErrRepeated):
		c.repeated(w, r, p)
	case errors.As(err, &impossible):
		c.confirmPage(w, r, http.StatusConflict, p, impossible.Why+" Nothing was sent.")
	case err != nil:
		// Nothing started, nothing recorded: the same form again
		// starts it (once).
		c.Log.ErrorContext(r.Context(), "cabinet: resend tickets", "order_id", p.Order.ID, "err", err)
		w.Header().Set("Retry-After", "5")
		c.confirmPage(w, r, http.StatusServiceUnavailable, p,
			"The e-mail could not be handed to the sender just now. Confirm again in a moment: it is sent once however often you confirm.")
	default:
		u := user(r)
		c.Log.InfoContext(r.Context(), "cabinet: tickets e-mail sent again", "user_id", u.ID, "company_id", u.CompanyID, "order_id", p.Order.ID)
		c.done(w, r, p.OrderURL, fmt.Sprintf("The tickets of order %d are being e-mailed again to the buyer.", p.Order.ID))
	}
}

// cancelOrder cancels an unpaid order (POST /cabinet/orders/{id}/cancel);
// a paid order is refused, unchanged.
func (c *cabinet) cancelOrder(w http.ResponseWriter, r *http.Request) {
	p, ok := c.actionData(w, r, actionCancel)
	if !ok || !c.postedToken(w, r, p) {
		return
	}
	cancelled, err := c.office.Cancel(r.Context(), c.actor(r), p.Order.Order, p.Token)
	var state *errs.StateError
	switch {
	case errors.Is(err, organizer.ErrRepeated):
		c.repeated(w, r, p)
	case errors.Is(err, errs.OrderPaid):
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Order %d is paid: it was not cancelled. Refund its tickets instead.", p.Order.ID))
	case errors.As(err, &state):
		c.confirmPage(w, r, http.StatusConflict, p, fmt.Sprintf("Order %d is %s: only an unpaid order can be cancelled. Nothing changed.",
			p.Order.ID, strings.ReplaceAll(state.Status, "_", " ")))
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	case err != nil:
		c.fail(w, r, err)
	case !cancelled:
		c.done(w, r, p.OrderURL, fmt.Sprintf("Order %d was cancelled already; nothing changed.", p.Order.ID))
	default:
		u := user(r)
		c.Log.InfoContext(r.Context(), "cabinet: order cancelled", "user_id", u.ID, "company_id", u.CompanyID, "order_id", p.Order.ID)
		c.done(w, r, p.OrderURL, fmt.Sprintf("Order %d is cancelled: its seats are back on sale.", p.Order.ID))
	}
}

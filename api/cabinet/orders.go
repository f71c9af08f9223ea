package cabinet

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/states"
)

// ordersPerPage is the order list's page length.
const ordersPerPage = 50

// ordersForm is the order list's search and filters, as given.
type ordersForm struct {
	Q, Event, Status, Channel, From, To string
	// By is what From and To are days of: "created" (or "") or "paid".
	By      string
	Sandbox bool
}

// query is the form as a URL query, without its cursor.
func (f ordersForm) query() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"q": f.Q, "event": f.Event, "status": f.Status, "channel": f.Channel, "from": f.From, "to": f.To, "by": f.By} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if f.Sandbox {
		v.Set("env", "sandbox")
	}
	return v
}

// ordersPage is the order list's view.
type ordersPage struct {
	Form     ordersForm
	Events   []organizer.EventOption
	Keys     []apikey.CompanyKey // the environment's partner keys, for the channel filter
	Statuses []states.OrderStatus
	List     *organizer.List
	// Count is the matches as the page says it ("" with a refused form).
	Count                         string
	ProductionURL, SandboxURL     string
	NewestURL, NewerURL, OlderURL string
	// Downloads export the orders the form selects (all of them, not
	// only this page); TicketDownloads their tickets, one row each.
	Downloads, TicketDownloads downloadLine
}

// envOf reads ?env: production (the default) or sandbox; anything else is
// not a page.
func envOf(r *http.Request) (sandbox, ok bool) {
	switch r.URL.Query().Get("env") {
	case "", "production":
		return false, true
	case "sandbox":
		return true, true
	}
	return false, false
}

// ordersQuery reads the order list's search and filters from the query
// (the list's and its exports'): the form as given, the filter, the
// company's events and the environment's partner keys the form offers,
// and what is wrong with the form (nothing filtered by it is then shown).
// ok is false when the answer is sent already (404: not an environment,
// another company's event).
func (c *cabinet) ordersQuery(w http.ResponseWriter, r *http.Request) (view *ordersPage, f organizer.Filter, problems []string, ok bool) {
	u := user(r)
	q := r.URL.Query()
	sandbox, ok := envOf(r)
	if !ok {
		c.notFound(w, r)
		return nil, f, nil, false
	}
	form := ordersForm{Q: strings.TrimSpace(q.Get("q")), Event: q.Get("event"), Status: q.Get("status"), Channel: q.Get("channel"),
		From: q.Get("from"), To: q.Get("to"), By: q.Get("by"), Sandbox: sandbox}
	view = &ordersPage{Form: form, Statuses: states.OrderStatuses}
	events, err := organizer.EventOptions(r.Context(), c.DB, u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return nil, f, nil, false
	}
	keys, err := c.apiKeys.List(r.Context(), u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return nil, f, nil, false
	}
	env := apikey.Production
	if sandbox {
		env = apikey.Sandbox
	}
	for _, k := range keys {
		if k.Environment == env && !k.IsDoorKey() {
			view.Keys = append(view.Keys, k)
		}
	}
	view.Events = events

	// The days are the company's, as the report's (zone.go).
	f = organizer.Filter{CompanyID: u.CompanyID, IsTest: sandbox, Limit: ordersPerPage, Search: organizer.ParseSearch(form.Q),
		Zone: companyZone(r)}
	switch form.By {
	case "", "created":
	case "paid":
		f.ByPaid = true
	default:
		problems = append(problems, "Choose whether the dates are of creation or of payment.")
	}
	if form.Q != "" && f.Search.Empty() {
		problems = append(problems, "Search for an order id, a ticket's barcode or number, a payment id, an e-mail, or at least two letters of a name.")
	}
	if form.Event != "" {
		id, err := strconv.ParseInt(form.Event, 10, 64)
		if err != nil || !slices.ContainsFunc(events, func(e organizer.EventOption) bool { return e.ID == id }) {
			c.notFound(w, r) // another company's event is not there
			return nil, f, nil, false
		}
		f.EventID = id
	}
	if form.Status != "" {
		if !slices.Contains(states.OrderStatuses, states.OrderStatus(form.Status)) {
			problems = append(problems, "Choose a status from the list.")
		}
		f.Status = states.OrderStatus(form.Status)
	}
	switch ch := form.Channel; {
	case ch == "":
	case ch == string(states.ChannelAPI) || ch == string(states.ChannelAggregator):
		f.Channel = states.Channel(ch)
	case strings.HasPrefix(ch, "key:"):
		id, err := strconv.ParseInt(strings.TrimPrefix(ch, "key:"), 10, 64)
		if err != nil || !slices.ContainsFunc(view.Keys, func(k apikey.CompanyKey) bool { return k.ID == id }) {
			problems = append(problems, "Choose a channel from the list.")
		}
		f.APIKeyID = id
	default:
		problems = append(problems, "Choose a channel from the list.")
	}
	if form.From != "" {
		if f.From, err = time.Parse(time.DateOnly, form.From); err != nil {
			problems = append(problems, "“From” must be a date (YYYY-MM-DD).")
		}
	}
	if form.To != "" {
		if f.To, err = time.Parse(time.DateOnly, form.To); err != nil {
			problems = append(problems, "“To” must be a date (YYYY-MM-DD).")
		}
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		problems = append(problems, "“To” is before “From”.")
	}
	return view, f, problems, true
}

// orders lists the company's orders of one environment, newest first,
// found by the search box and narrowed by the filters.
func (c *cabinet) orders(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	view, f, problems, ok := c.ordersQuery(w, r)
	if !ok {
		return
	}
	form, sandbox := view.Form, view.Form.Sandbox
	data := pageData{Title: "Orders", Nav: "orders", Data: view}
	view.Downloads = downloads("orders-downloads", "these orders", "/cabinet/export/orders", form.query())
	view.TicketDownloads = downloads("attendees-downloads", "their tickets (attendees)", "/cabinet/export/attendees", form.query())
	switchTo := func(sandbox bool) string {
		v := url.Values{}
		if sandbox {
			v.Set("env", "sandbox")
		}
		return "/cabinet/orders?" + v.Encode()
	}
	view.ProductionURL, view.SandboxURL = switchTo(false), switchTo(true)
	if len(problems) > 0 {
		data.Message = strings.Join(problems, " ")
		c.render(w, r, http.StatusUnprocessableEntity, "orders", data)
		return
	}
	// An order id, a ticket's barcode or number, or a payment id that
	// names exactly one order opens it (a name's beginning lists as ever).
	if form.Q != "" && q.Get("older") == "" && q.Get("newer") == "" {
		id, ok, err := organizer.ExactOrder(r.Context(), c.DB, f)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if ok {
			to := "/cabinet/orders/" + strconv.FormatInt(id, 10)
			if sandbox {
				to += "?env=sandbox"
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
	}
	// A cursor from another list, or altered, shows the newest page.
	if cur, ok := organizer.ParseCursor(q.Get("older")); ok {
		f.After = &cur
	} else if cur, ok := organizer.ParseCursor(q.Get("newer")); ok {
		f.Before = &cur
	}
	list, err := organizer.ListOrders(r.Context(), c.DB, f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	view.List = list
	switch n := list.Count; {
	case n > organizer.MaxCount:
		view.Count = "More than " + strconv.Itoa(organizer.MaxCount) + " orders match."
	case n == 1:
		view.Count = "1 order matches."
	default:
		view.Count = strconv.Itoa(n) + " orders match."
	}
	page := func(key string, cur *organizer.Cursor) string {
		v := form.query()
		if cur != nil {
			v.Set(key, cur.String())
		}
		return "/cabinet/orders?" + v.Encode()
	}
	if list.Newer != nil {
		view.NewestURL, view.NewerURL = page("", nil), page("newer", list.Newer)
	}
	if list.Older != nil {
		view.OlderURL = page("older", list.Older)
	}
	c.render(w, r, http.StatusOK, "orders", data)
}

// orderPage is an order's page.
type orderPage struct {
	Order *organizer.Order
	// ListURL goes back to the list of the order's environment.
	ListURL  string
	EnvQuery string // "?env=sandbox" on a sandbox order's links
	// WorkflowURL opens the order's workflow in the Temporal UI ("" none).
	WorkflowURL string
	// The note and e-mail forms (notes.go): their one-time tokens, what
	// was typed (kept when refused) and why it was refused.
	NoteToken, EmailToken string
	NoteBody, NewEmail    string
	NoteWhy, EmailWhy     string
	ui, ns                string
}

// Workflow is the Temporal UI's link to a workflow ("" none).
func (p *orderPage) Workflow(id string) string { return organizer.WorkflowURL(p.ui, p.ns, id) }

// order shows one of the company's orders: its buyer, tickets, money and
// timeline. A sandbox order opens with ?env=sandbox only; another
// company's order is not there.
func (c *cabinet) order(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	sandbox, ok := envOf(r)
	if err != nil || !ok {
		c.notFound(w, r)
		return
	}
	c.showOrder(w, r, http.StatusOK, sandbox, id, &orderPage{})
}

// showOrder renders the order's page with status; view carries what the
// note and e-mail forms keep (new tokens are made where none is kept).
func (c *cabinet) showOrder(w http.ResponseWriter, r *http.Request, status int, sandbox bool, id int64, view *orderPage) {
	o, err := organizer.GetOrder(r.Context(), c.DB, user(r).CompanyID, sandbox, id, companyZone(r))
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	view.Order, view.ListURL, view.ui, view.ns = o, "/cabinet/orders", c.TemporalUIURL, c.TemporalNamespace
	if view.NoteToken == "" {
		view.NoteToken = newToken()
	}
	if view.EmailToken == "" {
		view.EmailToken = newToken()
	}
	if sandbox {
		view.ListURL, view.EnvQuery = "/cabinet/orders?env=sandbox", "?env=sandbox"
	}
	view.WorkflowURL = view.Workflow(o.WorkflowID)
	title := "Order " + strconv.FormatInt(o.ID, 10)
	if o.IsTest {
		title += " (TEST)"
	}
	msg := strings.TrimSpace(view.NoteWhy + " " + view.EmailWhy)
	c.render(w, r, status, "order", pageData{Title: title, Nav: "orders", Message: msg, Data: view})
}

package cabinet

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/door"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/states"
)

// The door desk (docs/cabinet.md, "The door desk"): at one of the
// company's events (and session), in one environment, a ticket looked up
// by number, barcode or buyer's name; admitted, or its admission undone,
// by hand with a reason; the refused scans; and a lost scanner's door key
// replaced. PermDoorDesk guards every page and form of it.

const (
	deskPath = "/cabinet/door"
	// deskResults bounds the tickets a search shows: a name's beginning
	// may match many; a longer one finds fewer.
	deskResults = 50
	// refusedPerPage is the refused scans' page; maxRefusedPages bounds
	// the page number.
	refusedPerPage  = 50
	maxRefusedPages = 1000
	// The replacement of a door key waits for its created page, as a key
	// made on the keys page does (createdKey), on a path of the desk's:
	// the door role has no keys page.
	createdDoorKeyPath = "/cabinet/door/keys/created"
)

// desk is where the desk works: the event, the environment, the session
// (0: any) and the search, as the query or a form's hidden fields carry
// them.
type desk struct {
	EventID   int64
	Sandbox   bool
	SessionID int64
	Q         string
	Outcome   string // the refused scans' filter ("": all)
	Page      int
}

// values is d as a query (what links and redirects carry).
func (d desk) values() url.Values {
	v := url.Values{"event": {strconv.FormatInt(d.EventID, 10)}}
	if d.Sandbox {
		v.Set("env", apikey.Sandbox)
	}
	if d.SessionID != 0 {
		v.Set("session", strconv.FormatInt(d.SessionID, 10))
	}
	if d.Q != "" {
		v.Set("q", d.Q)
	}
	if d.Outcome != "" {
		v.Set("outcome", d.Outcome)
	}
	return v
}

// URL is the desk's page at d.
func (d desk) URL() string { return deskPath + "?" + d.values().Encode() }

// PageURL is the desk's page at d, with the refused scans' page p.
func (d desk) PageURL(p int) string {
	v := d.values()
	v.Set("page", strconv.Itoa(p))
	return deskPath + "?" + v.Encode() + "#refused-h"
}

// deskView is the door desk page's own data.
type deskView struct {
	Desk     desk
	Event    report.EventInventory
	Sessions []checkin.EventSession
	Searched bool
	Tickets  []deskTicket
	More     bool // the search found more than it shows
	Refused  []checkin.RefusedScan
	// RefusedTotal counts the refused scans the filter selects.
	RefusedTotal     int
	Outcomes         []outcomeOption
	PrevURL, NextURL string
	DoorKeys         []apikey.CompanyKey
	MinSearch        int
	MaxReason        int
}

// outcomeOption is one refused outcome the log's filter offers.
type outcomeOption struct {
	Value, Words string
}

// deskTicket is a ticket found, and what the desk may do with it.
type deskTicket struct {
	checkin.DeskTicket
	// State is its state at this desk in words; Class marks it.
	State, Class string
	// Admit: a manual admission would admit it (valid, not inside, of
	// the desk's event and environment); Undo: it is inside, admitted.
	Admit, Undo bool
}

// refusedWords says why a door refused a scan, as the desk shows it.
var refusedWords = map[states.ScanOutcome]string{
	states.ScanAlreadyCheckedIn: "Already admitted: the ticket is inside (a copy, or scanned twice)",
	states.ScanVoid:             "Void: refunded, or its order cancelled",
	states.ScanNotPaid:          "Not paid: its order awaits payment",
	states.ScanWrongEvent:       "Wrong event: a ticket of another event or session",
	states.ScanUnknown:          "Unknown: no ticket of yours has this code",
	states.ScanSandbox:          "Sandbox: a test ticket at a real door",
}

// refusedOutcomes are the outcomes the log lists, in the filter's order.
var refusedOutcomes = []states.ScanOutcome{states.ScanAlreadyCheckedIn, states.ScanVoid, states.ScanNotPaid,
	states.ScanWrongEvent, states.ScanUnknown, states.ScanSandbox}

// deskState is a ticket's state at the desk, in words: the door's rules
// (door.TicketState) and its admission.
func deskState(t checkin.DeskTicket, d desk, loc *time.Location) (state, class string, admit, undo bool) {
	switch {
	case t.IsTest && !d.Sandbox:
		return "Sandbox (test) ticket: a real door refuses it", "sandbox", false, false
	case !t.IsTest && d.Sandbox:
		return "A real ticket: the sandbox desk does not admit it", "other", false, false
	case t.EventID != d.EventID:
		return "Another event: " + t.EventTitle, "other", false, false
	case d.SessionID != 0 && (t.SessionID == nil || *t.SessionID != d.SessionID):
		return "Another session of the event", "other", false, false
	}
	switch door.TicketState(t.Status, t.OrderStatus) {
	case states.DoorVoid:
		if t.Status == states.TicketRefunded || t.OrderStatus == states.OrderRefunded {
			return "Refunded: do not admit", "void", false, false
		}
		return "Cancelled: its order was cancelled, do not admit", "void", false, false
	case states.DoorNotPaid:
		return "Not paid: its order awaits payment", "void", false, false
	}
	where := func() string {
		s := inZone(*t.CheckedInAt, loc, "2006-01-02 15:04:05")
		if t.CheckedInGate != nil {
			s += " at gate " + *t.CheckedInGate
		}
		return s
	}
	switch {
	case t.Inside && t.CheckedInAt != nil:
		return "Admitted " + where(), "admitted", false, true
	case t.Inside:
		return "Inside", "admitted", false, true
	case t.CheckedInAt != nil:
		return "Out: admitted first " + where() + ", let out since", "valid", true, false
	}
	return "Valid, not admitted yet", "valid", true, false
}

// deskQuery reads where the desk works from v (a query, or a form): an
// event not the company's, a session not the event's, or an environment
// not known is 404.
func (c *cabinet) deskQuery(w http.ResponseWriter, r *http.Request, v url.Values) (desk, []report.EventInventory, bool) {
	u := user(r)
	events, err := report.Inventory(r.Context(), c.DB, u.CompanyID, c.Now())
	if err != nil {
		c.fail(w, r, err)
		return desk{}, nil, false
	}
	d := desk{Q: strings.Join(strings.Fields(v.Get("q")), " "), Outcome: v.Get("outcome")}
	switch v.Get("env") {
	case "", apikey.Production:
	case apikey.Sandbox:
		d.Sandbox = true
	default:
		c.notFound(w, r)
		return d, nil, false
	}
	if s := v.Get("event"); s != "" {
		if d.EventID, err = strconv.ParseInt(s, 10, 64); err != nil || !report.HasEvent(events, d.EventID) {
			c.notFound(w, r) // another company's event is not there
			return d, nil, false
		}
	} else if len(events) > 0 {
		d.EventID = nearestEvent(events, c.Now())
	}
	if s := v.Get("session"); s != "" && s != "0" {
		if d.SessionID, err = strconv.ParseInt(s, 10, 64); err != nil || d.SessionID <= 0 {
			c.notFound(w, r)
			return d, nil, false
		}
	}
	if d.Outcome != "" && !slices.Contains(refusedOutcomes, states.ScanOutcome(d.Outcome)) {
		d.Outcome = ""
	}
	d.Page, _ = strconv.Atoi(v.Get("page"))
	d.Page = min(max(d.Page, 1), maxRefusedPages)
	return d, events, true
}

func (c *cabinet) doorDesk(w http.ResponseWriter, r *http.Request) {
	d, events, ok := c.deskQuery(w, r, r.URL.Query())
	if !ok {
		return
	}
	c.deskPage(w, r, http.StatusOK, "", d, events)
}

// deskPage renders the desk at d, with message (a refusal) if any.
func (c *cabinet) deskPage(w http.ResponseWriter, r *http.Request, status int, message string, d desk, events []report.EventInventory) {
	u := user(r)
	data := pageData{Title: "Door desk", Nav: "door", Message: message, Events: events, EventID: d.EventID}
	if d.EventID == 0 {
		c.render(w, r, status, "door", data)
		return
	}
	view := deskView{Desk: d, MinSearch: checkin.MinSearch, MaxReason: checkin.MaxReason}
	for _, e := range events {
		if e.ID == d.EventID {
			view.Event = e
		}
	}
	loc := location(view.Event.Timezone)
	ctx := r.Context()
	var err error
	if view.Sessions, err = checkin.ListEventSessions(ctx, c.DB, d.EventID); err != nil {
		c.fail(w, r, err)
		return
	}
	if d.SessionID != 0 && !slices.ContainsFunc(view.Sessions, func(s checkin.EventSession) bool { return s.ID == d.SessionID }) {
		c.notFound(w, r)
		return
	}
	if d.Q != "" {
		view.Searched = true
		found, err := checkin.FindDeskTickets(ctx, c.DB, u.CompanyID, d.Sandbox, d.EventID, checkin.ParseDeskSearch(d.Q), deskResults+1)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		if len(found) > deskResults {
			found, view.More = found[:deskResults], true
		}
		for _, t := range found {
			dt := deskTicket{DeskTicket: t}
			dt.State, dt.Class, dt.Admit, dt.Undo = deskState(t, d, loc)
			view.Tickets = append(view.Tickets, dt)
		}
	}
	refused, total, err := checkin.ListRefusedScans(ctx, c.DB, u.CompanyID, d.Sandbox, d.EventID, states.ScanOutcome(d.Outcome),
		d.Page, refusedPerPage)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	view.Refused, view.RefusedTotal = refused, total
	if d.Page > 1 {
		view.PrevURL = d.PageURL(d.Page - 1)
	}
	if d.Page*refusedPerPage < total && d.Page < maxRefusedPages {
		view.NextURL = d.PageURL(d.Page + 1)
	}
	for _, o := range refusedOutcomes {
		view.Outcomes = append(view.Outcomes, outcomeOption{Value: string(o), Words: refusedWords[o]})
	}
	keys, err := c.apiKeys.List(ctx, u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, k := range keys {
		if k.IsDoorKey() && k.RevokedAt == nil {
			view.DoorKeys = append(view.DoorKeys, k)
		}
	}
	data.Data = view
	c.render(w, r, status, "door", data)
}

// deskForm reads a desk form: where the desk works and the ticket acted
// on (404 if it is no id).
func (c *cabinet) deskForm(w http.ResponseWriter, r *http.Request) (desk, []report.EventInventory, int64, bool) {
	if err := r.ParseForm(); err != nil {
		c.render(w, r, http.StatusBadRequest, "error", pageData{Title: "Refused", Message: "The form could not be read."})
		return desk{}, nil, 0, false
	}
	d, events, ok := c.deskQuery(w, r, r.PostForm)
	if !ok {
		return d, nil, 0, false
	}
	if d.EventID == 0 {
		c.notFound(w, r)
		return d, nil, 0, false
	}
	id, err := strconv.ParseInt(r.PostForm.Get("ticket"), 10, 64)
	if err != nil || id <= 0 {
		c.notFound(w, r)
		return d, nil, 0, false
	}
	return d, events, id, true
}

// deskAdmit admits a ticket by hand (checkin.Admit: the door's rules, as
// a scan). Refused, it shows the desk with the scanner's answer (409); bad
// input changes nothing (422).
func (c *cabinet) deskAdmit(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	d, events, id, ok := c.deskForm(w, r)
	if !ok {
		return
	}
	res, err := checkin.Admit(r.Context(), c.DB, checkin.ManualInput{CompanyID: u.CompanyID, UserID: u.ID, IsTest: d.Sandbox,
		EventID: d.EventID, SessionID: d.SessionID, TicketID: id, Gate: r.PostForm.Get("gate"), Reason: r.PostForm.Get("reason")})
	var invalid *errs.ValidationError
	switch {
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
		return
	case errors.As(err, &invalid):
		c.deskPage(w, r, http.StatusUnprocessableEntity, "Not admitted: "+validationWords(invalid)+".", d, events)
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	number := "The ticket"
	if res.Ticket != nil {
		number = res.Ticket.Number
	}
	c.Log.InfoContext(r.Context(), "cabinet: manual admission", "user_id", u.ID, "company_id", u.CompanyID, "ticket_id", id,
		"outcome", res.Outcome, "check_in_id", res.CheckInID)
	if res.Outcome != states.ScanAdmitted {
		c.deskPage(w, r, http.StatusConflict, "Not admitted: "+number+": "+refusedWords[res.Outcome]+
			" (a scanner is answered "+string(res.Outcome)+").", d, events)
		return
	}
	c.done(w, r, d.URL(), number+" is admitted at gate "+strings.TrimSpace(r.PostForm.Get("gate"))+".")
}

// deskUndo undoes a ticket's current admission (checkin.UndoCheckIn: one
// guarded statement). A ticket not admitted now is refused (409).
func (c *cabinet) deskUndo(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	d, events, id, ok := c.deskForm(w, r)
	if !ok {
		return
	}
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	var invalid *errs.ValidationError
	if err := checkin.CheckReason(reason); errors.As(err, &invalid) {
		c.deskPage(w, r, http.StatusUnprocessableEntity, "Not undone: "+validationWords(invalid)+".", d, events)
		return
	}
	undo, err := checkin.UndoCheckIn(r.Context(), c.DB, checkin.Undo{CompanyID: u.CompanyID, IsTest: d.Sandbox, EventID: d.EventID,
		SessionID: d.SessionID, TicketID: id, UserID: u.ID, Reason: reason})
	switch {
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
		return
	case errors.Is(err, checkin.ErrOtherSession):
		c.deskPage(w, r, http.StatusConflict, "Not undone: the ticket is of another session of the event than this desk's.", d, events)
		return
	case errors.Is(err, checkin.ErrNotAdmitted):
		c.deskPage(w, r, http.StatusConflict, "Not undone: the ticket is not admitted now (undone already, or let out).", d, events)
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet: admission undone", "user_id", u.ID, "company_id", u.CompanyID, "ticket_id", id, "check_in_id", undo)
	c.done(w, r, d.URL(), "The admission is undone: the ticket can be admitted again.")
}

// validationWords is a refused form field's message.
func validationWords(e *errs.ValidationError) string {
	if len(e.Fields) == 0 {
		return "the form is not valid"
	}
	f := e.Fields[0]
	switch {
	case strings.HasSuffix(f.Location, "gate"):
		return "the gate's name is text of at most 64 characters, without control characters"
	}
	return f.Message
}

// doorKey finds the company's door key of the path's id, else answers
// 404: a partner key is not the desk's.
func (c *cabinet) doorKey(w http.ResponseWriter, r *http.Request) (apikey.CompanyKey, bool) {
	k, ok := c.companyKey(w, r)
	if ok && !k.IsDoorKey() {
		c.notFound(w, r)
		return k, false
	}
	return k, ok
}

// replaceView is the confirmation page before a door key is replaced.
type replaceView struct {
	Key     apikey.CompanyKey
	Confirm string // the key's prefix, which the POST must carry
	Token   string // the form's one-time token
	Action  string
}

func (c *cabinet) replaceKeyConfirm(w http.ResponseWriter, r *http.Request) {
	c.replacePage(w, r, http.StatusOK, "")
}

func (c *cabinet) replacePage(w http.ResponseWriter, r *http.Request, status int, message string) {
	k, ok := c.doorKey(w, r)
	if !ok {
		return
	}
	if k.RevokedAt != nil {
		c.done(w, r, deskPath, "Door key "+strconv.FormatInt(k.ID, 10)+" is revoked already.")
		return
	}
	c.render(w, r, status, "door_key_replace", pageData{Title: "Replace a door key", Nav: "door", Message: message, Data: replaceView{
		Key: k, Confirm: k.KeyPrefix, Token: newFormToken(), Action: fmt.Sprintf("/cabinet/door/keys/%d/replace", k.ID)}})
}

// replaceKey revokes a lost scanner's door key and makes its replacement
// (apikey.Keys.ReplaceDoorKey: one transaction), then shows the new key
// once, as the keys page's created page does (the form's token in a
// cookie for that page alone).
func (c *cabinet) replaceKey(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	k, ok := c.doorKey(w, r)
	if !ok {
		return
	}
	token := r.PostFormValue("token")
	if r.PostFormValue("confirm") != k.KeyPrefix || !formTokenRe.MatchString(token) {
		if k.RevokedAt != nil {
			c.done(w, r, deskPath, "Door key "+strconv.FormatInt(k.ID, 10)+" is revoked already.")
			return
		}
		c.replacePage(w, r, http.StatusBadRequest, "Nothing was replaced: confirm below to replace this key.")
		return
	}
	old, made, err := c.apiKeys.ReplaceDoorKey(r.Context(), u.CompanyID, k.ID, token)
	var before *apikey.KeyMadeBefore
	switch {
	case errors.As(err, &before):
		// The same form sent again: its first sending made the key,
		// which this answer leads to as well.
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
		return
	case errors.Is(err, apikey.ErrKeyNotLive):
		c.done(w, r, deskPath, "Door key "+strconv.FormatInt(k.ID, 10)+" is revoked already: nothing was made.")
		return
	case errors.Is(err, apikey.ErrFormUsed):
		// A page's form sent for another key (a token copied, or the
		// browser's history): this page's new form replaces this key.
		c.replacePage(w, r, http.StatusConflict, "Nothing was replaced: that form replaced another key already. Confirm again below to replace this one.")
		return
	case err != nil:
		c.fail(w, r, err)
		return
	default:
		c.Log.InfoContext(r.Context(), "cabinet: door key replaced", "user_id", u.ID, "company_id", u.CompanyID,
			"old_key_id", old.ID, "key_id", made.ID)
	}
	http.SetCookie(w, c.keyCookie(createdDoorKeyPath, token, int(apikey.RevealMaxAge.Seconds())))
	http.Redirect(w, r, createdDoorKeyPath, http.StatusSeeOther)
}

// createdDoorKey shows the replacement replaceKey made, once (as
// createdKey shows a new key); opened again it goes to the desk.
func (c *cabinet) createdDoorKey(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(newKeyCookie)
	if err != nil || !formTokenRe.MatchString(ck.Value) {
		c.done(w, r, deskPath, keyShownOnlyOnce)
		return
	}
	keys, err := c.apiKeys.List(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	key, id, err := c.apiKeys.TakeReveal(r.Context(), user(r).CompanyID, ck.Value)
	http.SetCookie(w, c.keyCookie(createdDoorKeyPath, "", -1))
	if errors.Is(err, errs.NotFound) {
		c.done(w, r, deskPath, keyShownOnlyOnce)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, k := range keys {
		if k.ID == id && k.IsDoorKey() {
			events, err := report.Inventory(r.Context(), c.DB, user(r).CompanyID, c.Now())
			if err != nil {
				c.fail(w, r, err)
				return
			}
			if k.CheckinEventID != nil {
				for _, e := range events {
					if e.ID == *k.CheckinEventID {
						k.CheckinEventTitle = &e.Title
					}
				}
			}
			c.render(w, r, http.StatusOK, "door_key_created", pageData{Title: "New door key", Nav: "door", NewKey: key, NewKeyInfo: &k})
			return
		}
	}
	c.fail(w, r, fmt.Errorf("new door key %d is not in the company's list", id))
}

package cabinet

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/window"
)

// The channels section: the organizer's side of distribution (which
// partner sells what, and when), through the same distribution.Service the
// partner API, ticketctl and the release workflow use. Permission
// distribution: owner and finance. Every change is a POST answered by a
// 303 to the page with a notice; bad input renders the page again with
// why (422) and changes nothing.

// distributed runs h where the cabinet has the distribution service (a
// cabinet built without it, as some tests build one, has no such pages).
func (c *cabinet) distributed(h http.HandlerFunc) http.HandlerFunc {
	if c.Distribution == nil {
		return c.notFound
	}
	return h
}

// channelsView is the channels page's own data.
type channelsView struct {
	Channels []distribution.ChannelInfo
	Apps     []appOption
	Events   []report.EventInventory
	// The forms as given, when one was refused.
	Ref, Name   string
	AppID       int64
	AppChannel  int64
	Problems    []string
	ChannelName map[int64]string
}

// appOption is an application the form offers, with its channel.
type appOption struct {
	apikey.Application
	ChannelID int64
}

func (c *cabinet) channels(w http.ResponseWriter, r *http.Request) {
	c.channelsPage(w, r, http.StatusOK, channelsView{})
}

// channelsPage renders the channels page with v's forms and problems.
func (c *cabinet) channelsPage(w http.ResponseWriter, r *http.Request, status int, v channelsView) {
	ctx, company := r.Context(), user(r).CompanyID
	var err error
	if v.Channels, err = c.Distribution.Channels(ctx, company); err != nil {
		c.fail(w, r, err)
		return
	}
	apps, err := c.apiKeys.Applications(ctx, company)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	in := map[int64]int64{}
	v.ChannelName = map[int64]string{}
	for _, ch := range v.Channels {
		v.ChannelName[ch.ID] = ch.Name
		for _, a := range ch.Applications {
			in[a.ID] = ch.ID
		}
	}
	v.Apps = v.Apps[:0]
	for _, a := range apps {
		v.Apps = append(v.Apps, appOption{Application: a, ChannelID: in[a.ID]})
	}
	if v.Events, err = report.Inventory(ctx, c.DB, company, c.Now()); err != nil {
		c.fail(w, r, err)
		return
	}
	data := pageData{Title: "Sales channels", Nav: "channels", Data: v}
	if len(v.Problems) > 0 {
		data.Message = "Nothing was changed: correct the form."
	}
	c.render(w, r, status, "channels", data)
}

// saveChannel creates a channel, or renames the channel of that ref.
func (c *cabinet) saveChannel(w http.ResponseWriter, r *http.Request) {
	ref, name := strings.TrimSpace(r.PostFormValue("ref")), strings.TrimSpace(r.PostFormValue("name"))
	ch, renamed, err := c.Distribution.SaveChannel(r.Context(), user(r).CompanyID, ref, name)
	var invalid *errs.ValidationError
	switch {
	case errors.As(err, &invalid):
		c.channelsPage(w, r, http.StatusUnprocessableEntity, channelsView{Ref: ref, Name: name, Problems: channelProblems(invalid)})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet channel saved", "by_user_id", user(r).ID, "company_id", user(r).CompanyID, "channel_id", ch.ID)
	what := "created"
	if renamed {
		what = "renamed"
	}
	c.done(w, r, "/cabinet/channels", fmt.Sprintf("Channel %s %s: %s.", ch.Ref, what, ch.Name))
}

// moveApplication puts an application in a channel, or takes it out of
// its channel (channel 0): it then sells in general sale only.
func (c *cabinet) moveApplication(w http.ResponseWriter, r *http.Request) {
	ctx, company := r.Context(), user(r).CompanyID
	appID, errA := strconv.ParseInt(r.PostFormValue("application"), 10, 64)
	channelID, errC := strconv.ParseInt(cmpOr(r.PostFormValue("channel"), "0"), 10, 64)
	v := channelsView{AppID: appID, AppChannel: channelID}
	apps, err := c.apiKeys.Applications(ctx, company)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(apps, func(a apikey.Application) bool { return a.ID == appID })
	if errA != nil || i < 0 {
		v.Problems = []string{"Application: choose one of your applications."}
	}
	var ch distribution.ChannelRef
	if errC != nil || channelID < 0 {
		v.Problems = append(v.Problems, "Channel: choose one of your channels, or none.")
	} else if channelID != 0 {
		ch, err = c.Distribution.Channel(ctx, company, channelID)
		if errors.Is(err, errs.NotFound) {
			v.Problems = append(v.Problems, "Channel: choose one of your channels, or none.")
		} else if err != nil {
			c.fail(w, r, err)
			return
		}
	}
	if len(v.Problems) > 0 {
		c.channelsPage(w, r, http.StatusUnprocessableEntity, v)
		return
	}
	app := apps[i]
	if err := c.Distribution.SetApplicationChannel(ctx, company, app.Environment, app.Name, channelID); err != nil {
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(ctx, "cabinet application channel", "by_user_id", user(r).ID, "company_id", company,
		"application_id", app.ID, "channel_id", channelID)
	notice := fmt.Sprintf("The %s application %s sells in general sale only.", app.Environment, app.Name)
	if channelID != 0 {
		notice = fmt.Sprintf("The %s application %s sells in channel %s (%s).", app.Environment, app.Name, ch.Ref, ch.Name)
	}
	c.done(w, r, "/cabinet/channels", notice+" Its keys follow within "+authCacheNote+".")
}

// authCacheNote is how soon every api instance knows a key's new channel.
const authCacheNote = "the key cache's lifetime (10 seconds by default)"

func cmpOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return strings.TrimSpace(s)
}

// channelProblems words a distribution validation error for the page.
func channelProblems(invalid *errs.ValidationError) []string {
	var out []string
	for _, f := range invalid.Fields {
		label := f.Location
		switch {
		case f.Location == "ref":
			label = "Ref"
		case f.Location == "name":
			label = "Name"
		case f.Location == "sales_end":
			label = "Sales end"
		case f.Location == "quantity":
			label = "Quantity"
		case f.Location == "ticket_category_id":
			label = "Category"
		case f.Location == "session_id":
			label = "Session"
		case strings.HasPrefix(f.Location, "seats.zones"):
			label = fmt.Sprintf("Zone %v", f.Value)
		case strings.HasPrefix(f.Location, "seats.rows"):
			label = fmt.Sprintf("Rows %v", f.Value)
		case strings.HasPrefix(f.Location, "seats.seat_ids"):
			label = fmt.Sprintf("Seat %v", f.Value)
		case f.Location == "seats":
			label = "Seats"
		}
		out = append(out, label+": "+f.Message+".")
	}
	return out
}

// eventForm is a form of the event page as given, shown again when
// refused: which one (Form: general, terms, seats, quantity, release-seats,
// release-quota, release-whole) of which channel, and its values.
type eventForm struct {
	Form    string
	Channel int64
	Values  map[string]string
}

// Is tells whether the refused form is this one of this channel.
func (f eventForm) Is(form string, channel int64) bool { return f.Form == form && f.Channel == channel }

// Value is what the refused form had in field name, if it is that form.
func (f eventForm) Value(form string, channel int64, name string) string {
	if !f.Is(form, channel) {
		return ""
	}
	return f.Values[name]
}

// channelEventView is an event's distribution page's own data.
type channelEventView struct {
	Event    *distribution.EventDistribution
	Loc      *time.Location
	Form     eventForm
	Problems []string
}

// Local is a time for a datetime-local field, in the event's zone.
func (v channelEventView) Local(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.In(v.Loc).Format(localLayout)
}

// When is a time on the page, in the event's zone ("none" for nil).
func (v channelEventView) When(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return inZone(*t, v.Loc, "2006-01-02 15:04")
}

// HasGeneralAdmission tells whether the event has a category with a
// capacity (a quantity to allocate).
func (v channelEventView) HasGeneralAdmission() bool {
	return slices.ContainsFunc(v.Event.Categories, func(c distribution.CategoryInfo) bool { return c.Capacity != nil })
}

// Field is the value a field of a form shows: the refused value, or the
// stored one.
func (v channelEventView) Field(form string, channel int64, name, stored string) string {
	if v.Form.Is(form, channel) {
		return v.Form.Values[name]
	}
	return stored
}

const localLayout = "2006-01-02T15:04"

// eventFromPath is the company's event the path names (404 for another
// company's or an unknown one; ok false: answered).
func (c *cabinet) eventDistribution(w http.ResponseWriter, r *http.Request) (*distribution.EventDistribution, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		c.notFound(w, r)
		return nil, false
	}
	ev, err := c.Distribution.EventView(r.Context(), user(r).CompanyID, id)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return nil, false
	}
	if err != nil {
		c.fail(w, r, err)
		return nil, false
	}
	return ev, true
}

func (c *cabinet) channelEvent(w http.ResponseWriter, r *http.Request) {
	ev, ok := c.eventDistribution(w, r)
	if !ok {
		return
	}
	c.channelEventPage(w, r, http.StatusOK, ev, eventForm{}, nil, "")
}

// channelEventPage renders an event's distribution, with a refused form
// and its problems, or a message.
func (c *cabinet) channelEventPage(w http.ResponseWriter, r *http.Request, status int, ev *distribution.EventDistribution,
	form eventForm, problems []string, message string) {
	data := pageData{Title: "Channels: " + ev.Title, Nav: "channels",
		Data: channelEventView{Event: ev, Loc: location(ev.TimeZone), Form: form, Problems: problems}}
	switch {
	case message != "":
		data.Message = message
	case len(problems) > 0:
		data.Message = "Nothing was changed: correct the form."
	}
	c.render(w, r, status, "channel_event", data)
}

func eventPath(id int64) string { return "/cabinet/channels/events/" + strconv.FormatInt(id, 10) }

// eventAction reads the event of the path and the form's channel (one of
// the company's), for the event page's POSTs; ok false: answered.
func (c *cabinet) eventAction(w http.ResponseWriter, r *http.Request, form string) (*distribution.EventDistribution, *distribution.ChannelLine, eventForm, bool) {
	ev, ok := c.eventDistribution(w, r)
	if !ok {
		return nil, nil, eventForm{}, false
	}
	_ = r.ParseForm()
	f := eventForm{Form: form, Values: map[string]string{}}
	for k, v := range r.PostForm {
		if len(v) > 0 {
			f.Values[k] = v[0]
		}
	}
	if form == "general" {
		return ev, nil, f, true
	}
	id, err := strconv.ParseInt(r.PostFormValue("channel"), 10, 64)
	i := slices.IndexFunc(ev.Channels, func(l distribution.ChannelLine) bool { return l.Channel.ID == id })
	if err != nil || i < 0 {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, eventForm{}, []string{"Channel: choose one of your channels."}, "")
		return nil, nil, eventForm{}, false
	}
	f.Channel = id
	return ev, &ev.Channels[i], f, true
}

// parseLocal reads a datetime-local value in the event's zone ("": none).
func parseLocal(s string, loc *time.Location) (*time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for _, layout := range []string{localLayout, localLayout + ":05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return &t, nil
		}
	}
	return nil, fmt.Errorf("not a date and time")
}

// windowFrom reads a form's start and end (and release) in the event's
// zone; each problem is named.
func windowFrom(f eventForm, loc *time.Location, fields ...string) (map[string]*time.Time, []string) {
	out := map[string]*time.Time{}
	var problems []string
	labels := map[string]string{"start": "Sales start", "end": "Sales end", "release_at": "Release at"}
	for _, name := range fields {
		t, err := parseLocal(f.Values[name], loc)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %q is not a date and time (YYYY-MM-DD HH:MM, %s).", labels[name], f.Values[name], loc))
			continue
		}
		out[name] = t
	}
	if s, e := out["start"], out["end"]; s != nil && e != nil && !s.Before(*e) {
		problems = append(problems, "Sales end: must come after the sales start.")
	}
	return out, problems
}

// setGeneralSale sets general sale's window of the event.
func (c *cabinet) setGeneralSale(w http.ResponseWriter, r *http.Request) {
	ev, _, f, ok := c.eventAction(w, r, "general")
	if !ok {
		return
	}
	loc := location(ev.TimeZone)
	t, problems := windowFrom(f, loc, "start", "end")
	if len(problems) > 0 {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, problems, "")
		return
	}
	if !c.distributionDone(w, r, ev, f, c.Distribution.SetGeneralSale(r.Context(), user(r).CompanyID, ev.EventID,
		window.Window{Start: t["start"], End: t["end"]})) {
		return
	}
	c.logDistribution(r, "general_sale", ev.EventID, 0)
	c.done(w, r, eventPath(ev.EventID), fmt.Sprintf("General sale sells %s until %s.", bound(t["start"], loc, "from publication"),
		bound(t["end"], loc, "the event starts")))
}

// bound is a window's bound for a notice.
func bound(t *time.Time, loc *time.Location, none string) string {
	if t == nil {
		return none
	}
	return inZone(*t, loc, "2006-01-02 15:04")
}

// setTerms sets a channel's window and timed release for the event (its
// AllocationRelease workflow started, moved or ended with it).
func (c *cabinet) setTerms(w http.ResponseWriter, r *http.Request) {
	ev, line, f, ok := c.eventAction(w, r, "terms")
	if !ok {
		return
	}
	loc := location(ev.TimeZone)
	t, problems := windowFrom(f, loc, "start", "end", "release_at")
	if len(problems) > 0 {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, problems, "")
		return
	}
	err := c.Distribution.SetTerms(r.Context(), user(r).CompanyID, ev.EventID, line.Channel.ID,
		window.Window{Start: t["start"], End: t["end"]}, t["release_at"])
	if errors.Is(err, errs.Incomplete) {
		// The terms are stored; the workflow is not started yet.
		c.logDistribution(r, "terms", ev.EventID, line.Channel.ID)
		c.Log.WarnContext(r.Context(), "cabinet timed release not started", "event_id", ev.EventID, "channel_id", line.Channel.ID, "err", err)
		if ev2, err2 := c.Distribution.EventView(r.Context(), user(r).CompanyID, ev.EventID); err2 == nil {
			ev = ev2
		}
		c.channelEventPage(w, r, http.StatusServiceUnavailable, ev, eventForm{}, nil,
			"The window and release time are saved, but the timed release could not be scheduled right now. Save the same terms again in a moment; "+
				"if the release comes due first, the worker starts it.")
		return
	}
	if !c.distributionDone(w, r, ev, f, err) {
		return
	}
	c.logDistribution(r, "terms", ev.EventID, line.Channel.ID)
	notice := fmt.Sprintf("%s sells %s until %s; ", line.Channel.Name, bound(t["start"], loc, "from general sale's start"),
		bound(t["end"], loc, "general sale's end"))
	if t["release_at"] != nil {
		notice += "its unsold allocation returns to general sale at " + bound(t["release_at"], loc, "") + "."
	} else {
		notice += "its allocation returns to general sale only by hand."
	}
	c.done(w, r, eventPath(ev.EventID), notice)
}

// splitList reads a text field's items: separated by commas, semicolons,
// spaces or lines.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
}

// parseRowRanges reads "ZONE:FROM-TO" items.
func parseRowRanges(s string) ([]distribution.RowRange, []string) {
	var out []distribution.RowRange
	var problems []string
	for _, item := range splitList(s) {
		zone, rows, ok := strings.Cut(item, ":")
		from, to, ok2 := strings.Cut(rows, "-")
		if !ok || !ok2 || zone == "" || from == "" || to == "" {
			problems = append(problems, fmt.Sprintf("Rows: %q is not ZONE:FROM-TO (such as parterre:1-5).", item))
			continue
		}
		out = append(out, distribution.RowRange{Zone: zone, From: from, To: to})
	}
	return out, problems
}

// maxSeatText bounds a seats form's text fields together.
const maxSeatText = 200_000

// allocate allocates seats (zones, row ranges, seat ids) or sets the
// channel's quantity of a general-admission category (and session).
func (c *cabinet) allocate(w http.ResponseWriter, r *http.Request) {
	kind := r.PostFormValue("kind")
	if kind != "quantity" {
		kind = "seats"
	}
	ev, line, f, ok := c.eventAction(w, r, kind)
	if !ok {
		return
	}
	ctx, company := r.Context(), user(r).CompanyID
	if kind == "quantity" {
		cat, errCat := strconv.ParseInt(f.Values["category"], 10, 64)
		qty, errQty := strconv.Atoi(strings.TrimSpace(f.Values["quantity"]))
		var problems []string
		if errCat != nil {
			problems = append(problems, "Category: choose a general-admission category.")
		}
		if errQty != nil || qty < 0 {
			problems = append(problems, "Quantity: a whole number, 0 or more (the channel's total of the category).")
		}
		var session *int64
		if s := strings.TrimSpace(f.Values["session"]); s != "" {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				problems = append(problems, "Session: choose one of the event's sessions.")
			}
			session = &id
		}
		if len(problems) > 0 {
			c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, problems, "")
			return
		}
		q, err := c.Distribution.SetQuota(ctx, company, ev.EventID, line.Channel.ID, cat, session, qty)
		if !c.distributionDone(w, r, ev, f, err) {
			return
		}
		c.logDistribution(r, "quota", ev.EventID, line.Channel.ID)
		c.done(w, r, eventPath(ev.EventID), fmt.Sprintf("%s has %d of %s (%d sold or in unpaid orders, %d left to sell).",
			line.Channel.Name, q.Allocated, categoryName(ev, q.CategoryID), q.Taken, q.Left()))
		return
	}
	if len(f.Values["zones"])+len(f.Values["rows"])+len(f.Values["seats"]) > maxSeatText {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, eventForm{}, []string{"Seats: too long a list; allocate in parts, or by zones and rows."}, "")
		return
	}
	rows, problems := parseRowRanges(f.Values["rows"])
	sel := distribution.Selector{Zones: splitList(f.Values["zones"]), Rows: rows, SeatIDs: splitList(f.Values["seats"])}
	if len(problems) > 0 {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, problems, "")
		return
	}
	mv, err := c.Distribution.AllocateSeats(ctx, company, ev.EventID, line.Channel.ID, sel)
	if !c.distributionDone(w, r, ev, f, err) {
		return
	}
	c.logDistribution(r, "allocate", ev.EventID, line.Channel.ID)
	notice := fmt.Sprintf("%d seats allocated to %s.", len(mv.Moved), line.Channel.Name)
	if len(mv.Left) > 0 {
		notice += fmt.Sprintf(" %d stayed where they were (held, sold, or another channel's).", len(mv.Left))
	}
	c.done(w, r, eventPath(ev.EventID), notice)
}

func categoryName(ev *distribution.EventDistribution, id int64) string {
	for _, c := range ev.Categories {
		if c.ID == id {
			return c.Name
		}
	}
	return "category " + strconv.FormatInt(id, 10)
}

// release returns part of a channel's allocation (seats, or a quantity of
// one of its quotas) or all of it to general sale; the form's explicit
// checkbox confirms it.
func (c *cabinet) release(w http.ResponseWriter, r *http.Request) {
	kind := r.PostFormValue("kind")
	if kind != "quota" && kind != "whole" {
		kind = "seats"
	}
	ev, line, f, ok := c.eventAction(w, r, "release-"+kind)
	if !ok {
		return
	}
	rel := distribution.Release{EventID: ev.EventID, ChannelID: line.Channel.ID}
	var problems []string
	switch kind {
	case "whole":
		rel.Whole = true
	case "quota":
		id, errID := strconv.ParseInt(f.Values["quota"], 10, 64)
		qty, errQty := strconv.Atoi(strings.TrimSpace(f.Values["quantity"]))
		if errID != nil || !slices.ContainsFunc(line.Quotas, func(q distribution.QuotaLine) bool { return q.ID == id }) {
			problems = append(problems, "Quota: choose one of the channel's quotas.")
		}
		if errQty != nil || qty < 1 {
			problems = append(problems, "Quantity: a whole number, at least 1.")
		}
		rel.Quantities = map[int64]int{id: qty}
	default:
		rel.SeatIDs = splitList(f.Values["seats"])
		if len(rel.SeatIDs) == 0 {
			problems = append(problems, "Seats: name the seat ids to release.")
		} else if len(rel.SeatIDs) > distribution.MaxSelectorItems {
			problems = append(problems, fmt.Sprintf("Seats: at most %d at once.", distribution.MaxSelectorItems))
		}
	}
	if f.Values["confirm"] != "yes" {
		problems = append(problems, "Tick the box to confirm: released seats and tickets go back to general sale, for every partner to sell.")
	}
	if len(problems) > 0 {
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, problems, "")
		return
	}
	out, err := c.Distribution.Release(r.Context(), user(r).CompanyID, rel)
	if !c.distributionDone(w, r, ev, f, err) {
		return
	}
	c.logDistribution(r, "release-"+kind, ev.EventID, line.Channel.ID)
	n := 0
	for _, k := range out.Quantities {
		n += k
	}
	notice := fmt.Sprintf("Released to general sale from %s: %d seats, %d tickets of quotas.", line.Channel.Name, len(out.Seats), n)
	if rel.Whole {
		notice = fmt.Sprintf("%s's allocation is released as a whole: %d seats and %d tickets of quotas went back to general sale; what it sold stays its own.",
			line.Channel.Name, len(out.Seats), n)
	}
	if len(rel.SeatIDs) > len(out.Seats) {
		notice += fmt.Sprintf(" %d of the seats named were not the channel's unsold seats and stayed.", len(rel.SeatIDs)-len(out.Seats))
	}
	c.done(w, r, eventPath(ev.EventID), notice)
}

// distributionDone answers a refused change (bad input: 422 with its
// problems; a channel or event not the company's: 404) and reports
// whether err is nil.
func (c *cabinet) distributionDone(w http.ResponseWriter, r *http.Request, ev *distribution.EventDistribution, f eventForm, err error) bool {
	var invalid *errs.ValidationError
	switch {
	case err == nil:
		return true
	case errors.As(err, &invalid):
		c.channelEventPage(w, r, http.StatusUnprocessableEntity, ev, f, channelProblems(invalid), "")
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	default:
		c.fail(w, r, err)
	}
	return false
}

func (c *cabinet) logDistribution(r *http.Request, action string, eventID, channelID int64) {
	c.Log.InfoContext(r.Context(), "cabinet distribution", "action", action, "by_user_id", user(r).ID,
		"company_id", user(r).CompanyID, "event_id", eventID, "channel_id", channelID)
}

package cabinet

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/requestlog"
)

// reportQuery reads the report's filter from the query: event (one of the
// company's, else 404), from and to as dates (to inclusive), the company's
// local days. With no dates the report covers the last report.DefaultDays
// days, today (in the company's zone) included.
func (c *cabinet) reportQuery(w http.ResponseWriter, r *http.Request) (report.Filter, []report.EventInventory, pageData, bool) {
	u := user(r)
	q := r.URL.Query()
	data := pageData{Title: "Sales report", Nav: "report"}
	events, err := report.Inventory(r.Context(), c.DB, u.CompanyID, c.Now())
	if err != nil {
		c.fail(w, r, err)
		return report.Filter{}, nil, data, false
	}
	loc := companyZone(r) // read once per request, by signedIn
	f := report.Filter{CompanyID: u.CompanyID}
	if v := q.Get("event"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !report.HasEvent(events, id) {
			c.notFound(w, r) // another company's event is not there
			return f, nil, data, false
		}
		f.EventID = id
	}
	today := report.Today(c.Now(), loc)
	first := today.AddDate(0, 0, 1-report.DefaultDays)
	from, to := first, today
	if v := q.Get("from"); v != "" {
		if from, err = time.Parse(time.DateOnly, v); err != nil {
			data.Message = "“From” must be a date (YYYY-MM-DD)."
			from = first
		}
	}
	if v := q.Get("to"); v != "" {
		if to, err = time.Parse(time.DateOnly, v); err != nil {
			data.Message = "“To” must be a date (YYYY-MM-DD)."
			to = today
		}
	}
	report.Days(&f, from, to, loc)
	data.From, data.To, data.EventID = report.FirstDay(f).Format(time.DateOnly), report.LastDay(f).Format(time.DateOnly), f.EventID
	return f, events, data, true
}

// reportView is the report page's own data besides pageData's: the
// company's time zone, its form (for the owner) and the zones offered.
type reportView struct {
	TimeZone  string
	CanSetTZ  bool
	Zones     []string
	ZoneValue string // what the form shows: the zone, or the refused input
	// Allocations: per event with channels (the one chosen, or all), what
	// each channel holds now.
	Allocations []distribution.EventChannels
}

func (c *cabinet) report(w http.ResponseWriter, r *http.Request) {
	c.reportPage(w, r, http.StatusOK, "", "")
}

// reportPage renders the report; a refused time zone comes back with its
// message and what was typed. A report that would add up several
// currencies is no report: the page says so (422) and keeps the filter, so
// one event can be chosen.
func (c *cabinet) reportPage(w http.ResponseWriter, r *http.Request, status int, message, typed string) {
	f, events, data, ok := c.reportQuery(w, r)
	if !ok {
		return
	}
	q := url.Values{"from": {data.From}, "to": {data.To}}
	if f.EventID != 0 {
		q.Set("event", strconv.FormatInt(f.EventID, 10))
	}
	data.CSVURL = "/cabinet/report.csv?" + q.Encode()
	data.Downloads = downloads("report-downloads", "this report", "/cabinet/export/report", q)
	data.Events = events
	view := reportView{TimeZone: f.TimeZone, CanSetTZ: user(r).Can(organizer.PermTeam), Zones: report.CommonZones, ZoneValue: f.TimeZone}
	if c.Distribution != nil {
		var err error
		if view.Allocations, err = c.Distribution.Report(r.Context(), f.CompanyID, f.EventID); err != nil {
			c.fail(w, r, err)
			return
		}
	}
	rep, err := report.Sales(r.Context(), c.DB, f)
	var mixed *report.MixedCurrenciesError
	switch {
	case errors.As(err, &mixed):
		status, data.Message = http.StatusUnprocessableEntity, mixedCurrencies(mixed)
	case err != nil:
		c.fail(w, r, err)
		return
	default:
		data.Report, data.Currencies = rep, rep.Currency
		data.Chart = newChart(report.FillDays(rep.Days, report.FirstDay(f), report.LastDay(f)), rep.Currency, rep.TimeZone)
	}
	if message != "" {
		data.Message, view.ZoneValue = strings.TrimSpace(message+" "+data.Message), typed
	}
	data.Data = view
	c.render(w, r, status, "report", data)
}

// mixedCurrencies is what the report page says instead of a sum of
// several currencies.
func mixedCurrencies(e *report.MixedCurrenciesError) string {
	return "No report: these events are in several currencies (" + strings.Join(e.Currencies, ", ") +
		") and a report adds up one. Choose one event."
}

// setReportZone sets the company's time zone (the owner's: PermTeam) and
// goes back to the report; a name that is no IANA zone changes nothing and
// is shown with why, 422.
func (c *cabinet) setReportZone(w http.ResponseWriter, r *http.Request) {
	tz := strings.TrimSpace(r.PostFormValue("timezone"))
	if err := report.SetZone(r.Context(), c.DB, user(r).CompanyID, tz); err != nil {
		var bad *report.ZoneError // refused by Go or by Postgres
		if errors.As(err, &bad) {
			c.reportPage(w, r, http.StatusUnprocessableEntity, "Time zone not changed: "+bad.Error()+".", tz)
			return
		}
		c.fail(w, r, err)
		return
	}
	c.done(w, r, "/cabinet/report", "Report days are now in "+tz+".")
}

// reportCSV writes the report's rows (report.WriteCSV), the figures of
// the page.
func (c *cabinet) reportCSV(w http.ResponseWriter, r *http.Request) {
	f, _, _, ok := c.reportQuery(w, r)
	if !ok {
		return
	}
	rep, err := report.Sales(r.Context(), c.DB, f)
	var mixed *report.MixedCurrenciesError
	if errors.As(err, &mixed) {
		c.reportPage(w, r, http.StatusUnprocessableEntity, "", "") // the page says why
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+report.FileName(f)+`"`)
	if err := report.WriteCSV(w, rep); err != nil {
		c.Log.WarnContext(r.Context(), "cabinet report csv", "err", err)
	}
}

func (c *cabinet) keysPage(w http.ResponseWriter, r *http.Request, status int, data pageData) {
	keys, err := c.apiKeys.List(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	apps, err := c.apiKeys.Applications(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	events, err := report.Inventory(r.Context(), c.DB, user(r).CompanyID, c.Now())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data.Title, data.Nav, data.Keys, data.Apps, data.KeyEnvs = "API & integrations", "keys", keys, apps, keyEnvs(user(r).Role)
	data.Events = events
	if k := data.NewKeyInfo; k != nil && k.CheckinEventID != nil {
		for _, e := range events {
			if e.ID == *k.CheckinEventID {
				k.CheckinEventTitle = &e.Title
			}
		}
	}
	if data.KeyForm.Kind == "" {
		data.KeyForm.Kind = "partner"
	}
	if data.KeyForm.Env == "" {
		// Production unless the role makes no production door key: a
		// sandbox door key at the real door answers every ticket
		// "unknown", so sandbox is chosen, never fallen into.
		data.KeyForm.Env = apikey.Production
		if !user(r).Role.MayGrantScope(apikey.Production, apikey.ScopeCheckin) {
			data.KeyForm.Env = apikey.Sandbox
		}
	}
	data.KeyForm.Token = newFormToken()
	c.render(w, r, status, "keys", data)
}

func (c *cabinet) keys(w http.ResponseWriter, r *http.Request) {
	keys, err := c.apiKeys.List(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data := pageData{}
	// The notice after a revocation names the key only if it is a revoked
	// key of the company: the query cannot put text of its own in it.
	if id, err := strconv.ParseInt(r.URL.Query().Get("revoked"), 10, 64); err == nil &&
		slices.ContainsFunc(keys, func(k apikey.CompanyKey) bool { return k.ID == id && k.RevokedAt != nil }) {
		data.Notice = "Key " + strconv.FormatInt(id, 10) + " is revoked: requests with it now get 401."
	}
	c.keysPage(w, r, http.StatusOK, data)
}

// A key just made waits for the created page in its own row, sealed
// under the form's token (apikey.TakeReveal); the browser that sent the
// form keeps the token in a cookie for that page alone. Nothing of it is
// in the session, whose stale copies concurrent requests may save.
const (
	createdKeysPath  = "/cabinet/keys/created"
	newKeyCookie     = "ts_new_key"
	keyShownOnlyOnce = "A new key is shown only once, right after it is made: revoke it and make another if it was not copied."
)

// createKey makes a key and redirects to the page that shows it once
// (createdKey). The form's one-time token, claimed by the key's insert,
// makes a double click or a resent form make one key; a reload of either
// page makes nothing.
func (c *cabinet) createKey(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	if err := r.ParseForm(); err != nil {
		c.keysPage(w, r, http.StatusBadRequest, pageData{Message: "The form could not be read."})
		return
	}
	// The form's one-time token, made with the page and claimed by the
	// key's insert. It is not kept in the session: a concurrent request's
	// stale copy of the session could bring a spent one back.
	token := r.PostForm.Get("token")
	if !formTokenRe.MatchString(token) {
		c.keysPage(w, r, http.StatusBadRequest, pageData{Message: "The form could not be read: open the page again and resend it."})
		return
	}
	env := r.PostForm.Get("environment")
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if env != apikey.Sandbox && env != apikey.Production {
		c.keysPage(w, r, http.StatusUnprocessableEntity, pageData{Message: "Choose sandbox or production."})
		return
	}
	if len(name) > 100 {
		c.keysPage(w, r, http.StatusUnprocessableEntity, pageData{Message: "The name must have at most 100 characters."})
		return
	}
	form := keyForm{Env: env, Kind: r.PostForm.Get("kind"), EventID: strings.TrimSpace(r.PostForm.Get("event")),
		Gate: strings.TrimSpace(r.PostForm.Get("gate"))}
	refuse := func(msg string) {
		c.keysPage(w, r, http.StatusUnprocessableEntity, pageData{Message: msg, KeyForm: form})
	}
	var scopes []string
	var door apikey.DoorLimits
	switch form.Kind {
	case "door":
		// A door key carries the checkin scope alone: it cannot read
		// orders or buyers.
		scopes = []string{apikey.ScopeCheckin}
		if form.EventID != "" {
			id, err := strconv.ParseInt(form.EventID, 10, 64)
			if err != nil || id <= 0 {
				refuse("Choose one of your events, or any event.")
				return
			}
			door.EventID = id
		}
		door.Gate = form.Gate
	case "partner", "":
		form.Kind = "partner"
		if form.EventID != "" || form.Gate != "" {
			refuse("An event or a gate limits a door key: choose “Door key” to make one.")
			return
		}
		// The form names each environment's scopes apart (it shows the
		// chosen one's); "scopes" is the older form's field.
		asked, ok := r.PostForm["scopes_"+env]
		if !ok {
			asked = r.PostForm["scopes"]
		}
		var err error
		if scopes, err = apikey.ValidateScopes(asked); err != nil {
			if errors.Is(err, apikey.ErrDoorKeyMixed) {
				refuse("A door key has the checkin scope only: choose “Door key” to make one.")
				return
			}
			refuse("Choose at least one scope.")
			return
		}
	default:
		refuse("Choose a partner key or a door key.")
		return
	}
	// The role grants the scopes (organizer.Role.GrantScopes): a key
	// carries at most the rights of the one who makes it.
	_, k, err := c.apiKeys.Create(r.Context(), u.Role, u.CompanyID, env, name, scopes, door, token)
	var invalid *errs.ValidationError
	var before *apikey.KeyMadeBefore
	var refused *organizer.ScopesRefused
	switch {
	case errors.As(err, &refused):
		c.Log.InfoContext(r.Context(), "cabinet: key scopes refused", "user_id", u.ID, "company_id", u.CompanyID, "role", u.Role,
			"environment", env, "scopes", refused.Scopes)
		msg := refused.Error()
		c.keysPage(w, r, http.StatusForbidden, pageData{Message: strings.ToUpper(msg[:1]) + msg[1:] + ". Nothing was made.", KeyForm: form})
		return
	case errors.As(err, &before):
		// The same form sent again (a double click): the database's
		// claim of the token made one key, which this answer leads to
		// as well as the first's.
	case errors.As(err, &invalid) && len(invalid.Fields) > 0 && invalid.Fields[0].Location == "token":
		c.keysPage(w, r, http.StatusBadRequest, pageData{Message: "The form could not be read: open the page again and resend it."})
		return
	case errors.As(err, &invalid) && len(invalid.Fields) > 0:
		refuse(fieldMessage(invalid.Fields[0]))
		return
	case err != nil:
		c.fail(w, r, err)
		return
	default:
		c.Log.InfoContext(r.Context(), "cabinet: key created", "user_id", u.ID, "company_id", u.CompanyID, "key_id", k.ID, "environment", env)
	}
	http.SetCookie(w, c.keyCookie(createdKeysPath, token, int(apikey.RevealMaxAge.Seconds())))
	http.Redirect(w, r, createdKeysPath, http.StatusSeeOther)
}

// keyCookie carries the form's token to the created page at path alone
// (the keys page's, or the door desk's).
func (c *cabinet) keyCookie(path, token string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: newKeyCookie, Value: token, Path: path, MaxAge: maxAge, HttpOnly: true,
		Secure: c.sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode}
}

// createdKey shows the key createKey made, once: the page takes it from
// its row (one statement, so two tabs cannot both have it) after the key
// list is read, so a failure before then leaves it for a reload. Opened
// again (a reload, the back button, another browser), it shows the keys
// with a notice instead, and makes nothing.
func (c *cabinet) createdKey(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(newKeyCookie)
	if err != nil || !formTokenRe.MatchString(ck.Value) {
		c.done(w, r, "/cabinet/keys", keyShownOnlyOnce)
		return
	}
	keys, err := c.apiKeys.List(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	key, id, err := c.apiKeys.TakeReveal(r.Context(), user(r).CompanyID, ck.Value)
	http.SetCookie(w, c.keyCookie(createdKeysPath, "", -1))
	if errors.Is(err, errs.NotFound) {
		c.done(w, r, "/cabinet/keys", keyShownOnlyOnce)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	for _, k := range keys {
		if k.ID == id {
			c.keysPage(w, r, http.StatusOK, pageData{NewKey: key, NewKeyInfo: &k})
			return
		}
	}
	c.fail(w, r, fmt.Errorf("new key %d is not in the company's list", id))
}

// keyEnv is what the key form offers the signed-in user's role for one
// environment (organizer.Role.MayGrantScope decides).
type keyEnv struct {
	Name string
	// Scopes are the partner scopes the role may give a key here;
	// Withheld the ones only a role with more rights may.
	Scopes, Withheld []string
	// Door: the role may make a door key here.
	Door bool
}

func keyEnvs(role organizer.Role) []keyEnv {
	var out []keyEnv
	for _, env := range []string{apikey.Sandbox, apikey.Production} {
		e := keyEnv{Name: env, Scopes: role.GrantableScopes(env, apikey.PartnerScopes), Door: role.MayGrantScope(env, apikey.ScopeCheckin)}
		for _, sc := range apikey.PartnerScopes {
			if !role.MayGrantScope(env, sc) {
				e.Withheld = append(e.Withheld, sc)
			}
		}
		out = append(out, e)
	}
	return out
}

// keyForm is the key form as given, shown again when it is refused.
type keyForm struct {
	Env     string // sandbox or production
	Kind    string // partner or door
	EventID string
	Gate    string
	Token   string // the form's one-time token (formToken)
}

// fieldMessage is a refusal of the key form as the cabinet words it.
func fieldMessage(f errs.FieldError) string {
	switch f.Location {
	case "event":
		return "That event is not one of your events: choose one from the list."
	case "gate":
		return "The gate's name must be text of at most 64 characters, without control characters."
	}
	return f.Message
}

// revokeView is the confirmation page before a key is revoked: the key
// and what stops with it.
type revokeView struct {
	Key   apikey.CompanyKey
	Stops string
	// Confirm is the value the page's form sends as "confirm": the
	// key's prefix, which a POST must carry to revoke.
	Confirm string
	Action  string
}

// companyKey finds the company's key of the path's id, else answers 404.
func (c *cabinet) companyKey(w http.ResponseWriter, r *http.Request) (apikey.CompanyKey, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		c.notFound(w, r)
		return apikey.CompanyKey{}, false
	}
	keys, err := c.apiKeys.List(r.Context(), user(r).CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return apikey.CompanyKey{}, false
	}
	for _, k := range keys {
		if k.ID == id {
			return k, true
		}
	}
	c.notFound(w, r)
	return apikey.CompanyKey{}, false
}

// revokeStops says what stops when the key is revoked.
func revokeStops(k apikey.CompanyKey) string {
	switch {
	case k.IsDoorKey() && k.Environment == apikey.Production:
		return "Production door key: the scanners using it (" + doorOf(k) + ") stop admitting tickets at once."
	case k.IsDoorKey():
		return "Sandbox door key: the test scanners using it (" + doorOf(k) + ") stop scanning test tickets."
	case k.Environment == apikey.Production:
		return "Production key: every order, hold and read through it stops at once; a storefront or reseller using it stops selling."
	}
	return "Sandbox key: test orders and reads through it stop; nothing real is sold with it."
}

// revokeConfirm asks before revoking a key, naming it and what stops.
func (c *cabinet) revokeConfirm(w http.ResponseWriter, r *http.Request) {
	c.revokePage(w, r, http.StatusOK, "")
}

func (c *cabinet) revokePage(w http.ResponseWriter, r *http.Request, status int, message string) {
	k, ok := c.companyKey(w, r)
	if !ok {
		return
	}
	if k.RevokedAt != nil {
		c.done(w, r, "/cabinet/keys", "Key "+strconv.FormatInt(k.ID, 10)+" is already revoked.")
		return
	}
	c.render(w, r, status, "key_revoke", pageData{Title: "Revoke a key", Nav: "keys", Message: message, Data: revokeView{
		Key: k, Stops: revokeStops(k), Confirm: k.KeyPrefix, Action: fmt.Sprintf("/cabinet/keys/%d/revoke", k.ID)}})
}

// revokeKey revokes a key the confirmation page (revokeConfirm) names: a
// POST without its "confirm" field (the key's prefix), as the list's old
// one-click form sent, is refused with that page and changes nothing.
func (c *cabinet) revokeKey(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	k, ok := c.companyKey(w, r)
	if !ok {
		return
	}
	if k.RevokedAt == nil && r.PostFormValue("confirm") != k.KeyPrefix {
		c.revokePage(w, r, http.StatusBadRequest, "Nothing was revoked: confirm below to revoke this key.")
		return
	}
	// A key revoked here leaves the api's cache at once (Deps.Auth).
	k2, err := c.apiKeys.Revoke(r.Context(), u.CompanyID, k.ID)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.Log.InfoContext(r.Context(), "cabinet: key revoked", "user_id", u.ID, "company_id", u.CompanyID, "key_id", k2.ID)
	http.Redirect(w, r, "/cabinet/keys?revoked="+strconv.FormatInt(k2.ID, 10), http.StatusSeeOther)
}

// logFilter is the request log page's form, as given.
type logFilter struct {
	Status, Key, Method, Path, From, To, RequestID string
}

// requestsPerPage is the request log page's length; maxRequestPages bounds
// the page number (a narrower filter finds what lies further back).
const (
	requestsPerPage = 50
	maxRequestPages = 1000
)

func (c *cabinet) requests(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	q := r.URL.Query()
	lf := logFilter{Status: q.Get("status"), Key: q.Get("key"), Method: strings.ToUpper(strings.TrimSpace(q.Get("method"))),
		Path: strings.TrimSpace(q.Get("path")), From: q.Get("from"), To: q.Get("to"), RequestID: strings.TrimSpace(q.Get("request_id"))}
	data := pageData{Title: "Request log", Nav: "requests", LogFilter: lf}
	keys, err := c.apiKeys.List(r.Context(), u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data.Keys = keys
	data.KeyNames = map[int64]string{}
	for _, k := range keys {
		data.KeyNames[k.ID] = k.KeyPrefix + "… " + k.Name
	}
	f := requestlog.Filter{CompanyID: u.CompanyID, Method: lf.Method, PathPrefix: lf.Path, RequestID: lf.RequestID,
		Limit: requestsPerPage + 1}
	var problems []string
	if lf.Status != "" {
		if f.Status, err = strconv.Atoi(lf.Status); err != nil || f.Status < 100 || f.Status > 599 {
			problems = append(problems, "Status must be an HTTP status code.")
			f.Status = 0
		}
	}
	if lf.Key != "" {
		id, err := strconv.ParseInt(lf.Key, 10, 64)
		if err != nil || !slices.ContainsFunc(keys, func(k apikey.CompanyKey) bool { return k.ID == id }) {
			c.notFound(w, r) // another company's key is not there
			return
		}
		f.APIKeyID = id
	}
	parseTime := func(v, what string) time.Time {
		if v == "" {
			return time.Time{}
		}
		for _, layout := range []string{"2006-01-02T15:04", time.RFC3339, time.DateOnly} {
			if t, err := time.ParseInLocation(layout, v, companyZone(r)); err == nil {
				return t
			}
		}
		problems = append(problems, what+" must be a date and time (YYYY-MM-DDTHH:MM, "+companyZone(r).String()+").")
		return time.Time{}
	}
	f.Since, f.Until = parseTime(lf.From, "From"), parseTime(lf.To, "To")
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil {
		page = 1
	}
	page = min(max(page, 1), maxRequestPages)
	f.Offset = (page - 1) * requestsPerPage
	entries, err := requestlog.List(r.Context(), c.DB, f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data.Page = page
	link := func(p int) string {
		v := url.Values{}
		for k, x := range map[string]string{"status": lf.Status, "key": lf.Key, "method": lf.Method, "path": lf.Path,
			"from": lf.From, "to": lf.To, "request_id": lf.RequestID} {
			if x != "" {
				v.Set(k, x)
			}
		}
		v.Set("page", strconv.Itoa(p))
		return "/cabinet/requests?" + v.Encode()
	}
	if len(entries) > requestsPerPage {
		entries = entries[:requestsPerPage]
		if page < maxRequestPages {
			data.NextURL = link(page + 1)
		}
	}
	if page > 1 {
		data.PrevURL = link(page - 1)
	}
	data.Requests = entries
	data.RequestFound = lf.RequestID != "" && len(entries) > 0
	data.Message = strings.Join(problems, " ")
	if lf.RequestID != "" && len(entries) == 0 {
		// The id stays in the search field; the banner does not repeat
		// text from the query.
		data.Notice = "No request with that id of your keys in the log (entries are kept for 30 days)."
	}
	c.render(w, r, http.StatusOK, "requests", data)
}

func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(d.Seconds()+0.999)))
}

// checkinRefresh is how often the check-in page's script fetches fresh
// figures while the page is in view.
const checkinRefresh = 20

// checkinPage is an event's door, live: admitted of expected per category
// and per gate, arrivals per 10 minutes and the conflicts. Without an
// event it shows the company's event nearest to now; another company's
// event is 404. ?env=sandbox shows sandbox tickets and scans.
func (c *cabinet) checkinPage(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	data := pageData{Title: "Check-in", Nav: "checkin"}
	events, id, sandbox, ok := c.checkinQuery(w, r)
	if !ok {
		return
	}
	data.Events = events
	if id == 0 {
		c.render(w, r, http.StatusOK, "checkin", data)
		return
	}
	rep, err := checkin.Door(r.Context(), c.DB, u.CompanyID, id, sandbox, c.Now())
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	data.Door, data.EventID, data.Refresh = rep, id, checkinRefresh
	q := url.Values{"event": {strconv.FormatInt(id, 10)}}
	if sandbox {
		q.Set("env", apikey.Sandbox)
	}
	data.Downloads = downloads("checkin-downloads", "every scan of this event", "/cabinet/export/checkins", q)
	data.Arrivals = newArrivalsChart(rep.Arrivals, location(rep.Timezone))
	c.render(w, r, http.StatusOK, "checkin", data)
}

// checkinQuery reads the check-in page's event and environment (its
// exports' too): ?event, else the company's event nearest to now (0: the
// company has none); ?env=sandbox for sandbox tickets and scans. ok is
// false when the answer is sent already (404: another company's event,
// no such environment).
func (c *cabinet) checkinQuery(w http.ResponseWriter, r *http.Request) (events []report.EventInventory, id int64, sandbox, ok bool) {
	q := r.URL.Query()
	events, err := report.Inventory(r.Context(), c.DB, user(r).CompanyID, c.Now())
	if err != nil {
		c.fail(w, r, err)
		return nil, 0, false, false
	}
	switch q.Get("env") {
	case "", apikey.Production:
	case apikey.Sandbox:
		sandbox = true
	default:
		c.notFound(w, r)
		return nil, 0, false, false
	}
	if v := q.Get("event"); v != "" {
		if id, err = strconv.ParseInt(v, 10, 64); err != nil || !report.HasEvent(events, id) {
			c.notFound(w, r) // another company's event is not there
			return nil, 0, false, false
		}
	} else if len(events) > 0 {
		id = nearestEvent(events, c.Now())
	}
	return events, id, sandbox, true
}

// nearestEvent is the event starting nearest to now: tonight's show.
func nearestEvent(events []report.EventInventory, now time.Time) int64 {
	best, bestD := events[0].ID, time.Duration(math.MaxInt64)
	for _, e := range events {
		d := e.StartsAt.Sub(now)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = e.ID, d
		}
	}
	return best
}

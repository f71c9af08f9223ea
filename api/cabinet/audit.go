package cabinet

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/report"
)

// auditPerPage is how many rows a page of the audit log shows.
const auditPerPage = 50

// auditView is the audit page's own data.
type auditView struct {
	Rows    []auditRow
	Actions []string
	People  []organizer.AuditPerson
	// The filter: an action ("" every one) and a person's user id ("").
	Action, Person string
	Zone           string
	NewerURL       string
	OlderURL       string
}

// auditRow is one row as the page shows it.
type auditRow struct {
	ID      int64
	At      string
	Kind    string // the actor's kind
	Actor   string
	Action  string
	Subject string
	Detail  []auditDetail
}

type auditDetail struct{ Key, Value string }

// audit lists the company's audit log, newest first, a page at a time
// (?before: rows older than that id), filtered by action and by person;
// times in the company's zone, printed with it.
func (c *cabinet) audit(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	q := r.URL.Query()
	v := auditView{Actions: organizer.AuditActions, Action: q.Get("action"), Person: q.Get("person")}
	loc, err := report.Zone(r.Context(), c.DB, u.CompanyID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Zone = loc.String()
	if v.People, err = organizer.AuditPeople(r.Context(), c.DB, u.CompanyID); err != nil {
		c.fail(w, r, err)
		return
	}
	f := organizer.AuditFilter{CompanyID: u.CompanyID, Limit: auditPerPage + 1}
	var problems []string
	if v.Action != "" {
		if !slices.Contains(organizer.AuditActions, v.Action) {
			problems = append(problems, "Choose one of the actions.")
			v.Action = ""
		}
		f.Action = v.Action
	}
	if v.Person != "" {
		id, err := strconv.ParseInt(v.Person, 10, 64)
		if err != nil || !slices.ContainsFunc(v.People, func(p organizer.AuditPerson) bool { return p.ID == id }) {
			// Another company's user is not there.
			problems = append(problems, "Choose one of the people in the list.")
			v.Person = ""
		} else {
			f.UserID = id
		}
	}
	if b := q.Get("before"); b != "" {
		if f.Before, err = strconv.ParseInt(b, 10, 64); err != nil || f.Before <= 0 {
			problems = append(problems, "That page does not exist; showing the newest rows.")
			f.Before = 0
		}
	}
	rows, err := organizer.ListAudit(r.Context(), c.DB, f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	link := func(before int64) string {
		p := url.Values{}
		if v.Action != "" {
			p.Set("action", v.Action)
		}
		if v.Person != "" {
			p.Set("person", v.Person)
		}
		if before > 0 {
			p.Set("before", strconv.FormatInt(before, 10))
		}
		if len(p) == 0 {
			return "/cabinet/audit"
		}
		return "/cabinet/audit?" + p.Encode()
	}
	if len(rows) > auditPerPage {
		rows = rows[:auditPerPage]
		v.OlderURL = link(rows[len(rows)-1].ID)
	}
	if f.Before > 0 {
		v.NewerURL = link(0)
	}
	for _, e := range rows {
		v.Rows = append(v.Rows, auditRow{ID: e.ID, At: inZone(e.At, loc, "2006-01-02 15:04:05"), Kind: e.ActorKind, Actor: e.Actor,
			Action: e.Action, Subject: e.Subject, Detail: auditDetails(e.Detail, loc)})
	}
	status := http.StatusOK
	if len(problems) > 0 {
		status = http.StatusUnprocessableEntity
	}
	c.render(w, r, status, "audit", pageData{Title: "Audit log", Nav: "audit", Message: strings.Join(problems, " "), Data: v})
}

// auditDetails lists a row's detail by key, each value as plain text.
func auditDetails(d map[string]any, loc *time.Location) []auditDetail {
	out := make([]auditDetail, 0, len(d))
	// An amount is in the currency's minor units: shown as money.
	if cur, ok := d["currency"].(string); ok {
		if a, ok := d["amount"].(float64); ok {
			d = maps.Clone(d)
			d["amount"] = money(int64(a), cur)
			delete(d, "currency")
		}
	}
	for k, x := range d {
		var s string
		switch x := x.(type) {
		case nil:
			s = "—"
		case string:
			s = x
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				s = inZone(t, loc, "2006-01-02 15:04")
			}
		default:
			s = detailText(x)
		}
		out = append(out, auditDetail{Key: strings.ReplaceAll(k, "_", " "), Value: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// detailText is a detail's value in words: a list joined with commas, an
// object as its keys and values, anything else as JSON.
func detailText(x any) string {
	switch x := x.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, v := range x {
			parts[i] = detailText(v)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strings.ReplaceAll(k, "_", " ") + " " + detailText(x[k])
		}
		return strings.Join(parts, ", ")
	case string:
		return x
	}
	b, _ := json.Marshal(x)
	return string(b)
}

package cabinet

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/internal/requestlog"
	"github.com/ticketsales/ticketsales/internal/states"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// staticFiles serves the stylesheet and the script from the binary.
func staticFiles() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	files := http.StripPrefix("/cabinet/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

// pageData is what any page template may show.
type pageData struct {
	Title       string
	Nav         string // the menu entry to mark current
	Message     string // an error or notice at the top
	Notice      string
	Email       string
	Next        string // the sign-in form's page to open afterwards
	MinPassword int
	User        *organizer.User
	// Data is a page's own view (the cabinet's order pages keep theirs in
	// their own types instead of growing this one).
	Data any

	// Report
	Report   *report.SalesReport
	Chart    *chart
	Events   []report.EventInventory
	EventID  int64
	From, To string
	CSVURL   string
	// Downloads are the page's exports (the report's, the check-in
	// page's), one link per format.
	Downloads  downloadLine
	Currencies string

	// Keys
	Keys       []apikey.CompanyKey
	Apps       []apikey.Application
	KeyEnvs    []keyEnv // what the key form offers, per environment
	NewKey     string
	NewKeyInfo *apikey.CompanyKey
	KeyForm    keyForm

	// Request log
	Requests  []requestlog.Entry
	LogFilter logFilter

	PrevURL      string
	NextURL      string
	Page         int
	KeyNames     map[int64]string
	RequestFound bool

	// Check-in: the event's door, its arrivals chart; Refresh (seconds)
	// is how often the page's script fetches fresh figures while the page
	// is in view (the page never reloads itself).
	Door     *checkin.Report
	Arrivals *arrivalsChart
	Refresh  int
}

type pages struct{ byName map[string]*template.Template }

var funcs = template.FuncMap{
	"money": money,
	// statusWord is an order's status in words; orderStatus its badge,
	// which keeps the raw value for support (data-status, title).
	"statusWord":  func(s any) string { return statusWord(states.OrderStatus(fmt.Sprint(s))) },
	"orderStatus": func(s any) template.HTML { return orderStatus(states.OrderStatus(fmt.Sprint(s))) },
	// userLang marks user data (titles, names) written in Cyrillic as
	// Russian, in a page whose own words are English.
	"userLang": userLang,
	"sub":      func(a, b int64) int64 { return a - b },
	// abs is a figure without its sign, for a statement's line whose
	// label says which way the money went.
	"abs": func(a int64) int64 { return max(a, -a) },
	"time": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"timep": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"day": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"hms": func(t time.Time) string { return t.UTC().Format("15:04:05") },
	// pct is part of whole in whole percent ("—" of nothing).
	"pct": func(part, whole int64) string {
		if whole == 0 {
			return "—"
		}
		return strconv.FormatInt(part*100/whole, 10) + "%"
	},
	"join": strings.Join,
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
	"keyName": func(names map[int64]string, id *int64) string {
		if id == nil {
			return "—"
		}
		if n, ok := names[*id]; ok {
			return n
		}
		return strconv.FormatInt(*id, 10)
	},
	"derefID": func(p *int64) string { return idOrDash(p) },
	"derefStr": func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	},
	// refusal is why a door refused a scan, in words (the door desk's).
	"refusal": func(o states.ScanOutcome) string {
		if w, ok := refusedWords[o]; ok {
			return w
		}
		return string(o)
	},
	"duration": func(us int64) string {
		return (time.Duration(us) * time.Microsecond).Round(time.Microsecond * 10).String()
	},
	"door": doorOf,
	// sandboxDoor: a sandbox door key, marked wherever it shows.
	"sandboxDoor": func(k apikey.CompanyKey) bool { return k.IsDoorKey() && k.Environment == apikey.Sandbox },
	"contains": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
}

// statusWords are the order statuses as the cabinet says them.
var statusWords = map[states.OrderStatus]string{
	states.OrderPendingPayment:    "Awaiting payment",
	states.OrderPaid:              "Paid",
	states.OrderCancelled:         "Cancelled",
	states.OrderPartiallyRefunded: "Partly refunded",
	states.OrderRefunded:          "Refunded",
}

// statusWord is an order's status in words: every page that prints one
// says it the same way. An unknown status is shown as it is, its
// underscores spaces.
func statusWord(s states.OrderStatus) string {
	if w, ok := statusWords[states.OrderStatus(s)]; ok {
		return w
	}
	return strings.ReplaceAll(string(s), "_", " ")
}

// orderStatus is an order's status as a badge: its words, and the raw
// value in data-status and title for support, who speak the API's words.
func orderStatus(s states.OrderStatus) template.HTML {
	raw := template.HTMLEscapeString(string(s))
	return template.HTML(`<span class="badge status-` + raw + `" data-status="` + raw + `" title="` + raw + `">` +
		template.HTMLEscapeString(statusWord(s)) + `</span>`)
}

// userLang is the lang attribute of user data: lang="ru" when the text
// has Cyrillic letters, else nothing (the page's English).
func userLang(s string) template.HTMLAttr {
	for _, r := range s {
		if unicode.Is(unicode.Cyrillic, r) {
			return ` lang="ru"`
		}
	}
	return ""
}

func idOrDash(p *int64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatInt(*p, 10)
}

func parsePages() *pages {
	layout := template.Must(template.New("layout.html").Funcs(funcs).Funcs(zoneFuncs).ParseFS(templateFS, "templates/layout.html"))
	p := &pages{byName: map[string]*template.Template{}}
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	// A file named _*.html holds parts several pages share: every page
	// has them.
	if parts, _ := fs.Glob(templateFS, "templates/_*.html"); len(parts) > 0 {
		layout = template.Must(layout.ParseFS(templateFS, parts...))
	}
	// Every other template but the layout is a page, named after its file.
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		p.byName[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFS, f))
	}
	return p
}

const flashKey = "flash"

// flash keeps a notice for the next page the user opens: an action says
// what it did on the page it redirects to, and a reload of that page
// neither repeats the action nor the notice.
func (c *cabinet) flash(r *http.Request, notice string) {
	c.sessions.Put(r.Context(), flashKey, notice)
}

// done ends an action: its notice for the next page, and a 303 to it.
func (c *cabinet) done(w http.ResponseWriter, r *http.Request, to, notice string) {
	if notice != "" {
		c.flash(r, notice)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// render writes a page; a template error becomes a bare 500.
func (c *cabinet) render(w http.ResponseWriter, r *http.Request, status int, name string, data pageData) {
	c.renderThen(w, r, status, name, data, nil)
}

// renderThen writes a page as render does, running shown (if any) once
// the page is rendered and before it is written: what a page shows once
// (a flash, a new secret) leaves the session only when it was shown, and
// while the session can still be saved.
func (c *cabinet) renderThen(w http.ResponseWriter, r *http.Request, status int, name string, data pageData, shown func()) {
	if u, ok := r.Context().Value(userKey{}).(*organizer.User); ok && data.User == nil {
		data.User = u
	}
	flashed := false
	if data.Notice == "" && data.User != nil {
		// The notice an action left before redirecting here (POST,
		// redirect, GET: a reload repeats nothing).
		data.Notice = c.sessions.GetString(r.Context(), flashKey)
		flashed = data.Notice != ""
	}
	var buf bytes.Buffer
	if err := c.pages.byName[name].ExecuteTemplate(&buf, "layout.html", data); err != nil {
		c.Log.ErrorContext(r.Context(), "cabinet template", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if flashed {
		c.sessions.Remove(r.Context(), flashKey)
	}
	if shown != nil {
		shown()
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// money is pricing.Format, under the short name the code here uses.
var money = pricing.Format

// chart is the sales-per-day bar chart, laid out here and drawn as inline
// SVG by the template: no script, no outside asset.
type chart struct {
	Width, Height int
	Bars          []bar
	Ticks         []tick
	Max           string
	Label         string
}

type bar struct {
	X, Y, W, H   float64
	RX, RY, RH   float64 // the refund bar
	Label, Title string
	ShowLabel    bool
}

type tick struct {
	Y     float64
	Label string
}

// newChart lays out one bar per day for the gross sales, with the day's
// refunds beside it, scaled to the largest.
func newChart(days []report.DaySales, currency, tz string) *chart {
	if len(days) == 0 {
		return nil
	}
	const w, h, left, bottom, top = 720, 240, 8, 24, 12
	var peak int64 = 1
	for _, d := range days {
		peak = max(peak, d.Gross, d.Refunds)
	}
	ch := &chart{Width: w, Height: h, Max: money(peak, currency),
		Label: fmt.Sprintf("Sales per day (%s), %s to %s", tz, days[0].Day, days[len(days)-1].Day)}
	plotH := float64(h - bottom - top)
	slot := float64(w-left) / float64(len(days))
	every := max(1, len(days)/8) // at most about eight date labels
	for i, d := range days {
		gh := plotH * float64(d.Gross) / float64(peak)
		rh := plotH * float64(d.Refunds) / float64(peak)
		x := float64(left) + float64(i)*slot
		bw := slot * 0.4
		ch.Bars = append(ch.Bars, bar{
			X: x + slot*0.1, Y: float64(top) + plotH - gh, W: bw, H: gh,
			RX: x + slot*0.1 + bw, RY: float64(top) + plotH - rh, RH: rh,
			Label:     d.Day[5:],
			Title:     fmt.Sprintf("%s: %d tickets, gross %s, refunds %s", d.Day, d.TicketsSold, money(d.Gross, currency), money(d.Refunds, currency)),
			ShowLabel: i%every == 0,
		})
	}
	ch.Ticks = []tick{{Y: float64(top), Label: money(peak, currency)}, {Y: float64(top) + plotH/2, Label: money(peak/2, currency)}}
	return ch
}

// arrivalsChart is the check-in page's arrivals per 10 minutes, laid out
// here and drawn as inline SVG by the template, like the sales chart.
type arrivalsChart struct {
	Width, Height int
	Bars          []arrivalBar
	Max           int64
	Label         string
	BaseY, TopY   float64
}

type arrivalBar struct {
	X, Y, W, H float64
	Label      string
	LabelX     float64
	Title      string
	ShowLabel  bool
	Admitted   int64
}

// newArrivalsChart lays out one bar per bin, scaled to the busiest.
func newArrivalsChart(bins []checkin.Arrivals, loc *time.Location) *arrivalsChart {
	if len(bins) == 0 {
		return nil
	}
	const w, h, left, bottom, top = 720, 200, 4, 22, 14
	var peak int64 = 1
	for _, b := range bins {
		peak = max(peak, b.Admitted)
	}
	ch := &arrivalsChart{Width: w, Height: h, Max: peak, BaseY: float64(h - bottom), TopY: float64(top),
		Label: fmt.Sprintf("Arrivals per %d minutes, %s to %s (%s)", int(checkin.ArrivalBin.Minutes()),
			bins[0].Start.In(loc).Format("15:04"), bins[len(bins)-1].Start.Add(checkin.ArrivalBin).In(loc).Format("15:04 MST"), loc)}
	plotH := float64(h - bottom - top)
	// At least minArrivalSlots slots: the first bars of the evening are
	// bars, not a wall.
	const minArrivalSlots = 18
	slot := float64(w-left) / float64(max(len(bins), minArrivalSlots))
	every := max(1, len(bins)/8)
	for i, b := range bins {
		bh := plotH * float64(b.Admitted) / float64(peak)
		x := float64(left) + float64(i)*slot
		ch.Bars = append(ch.Bars, arrivalBar{
			X: x + slot*0.1, Y: float64(top) + plotH - bh, W: slot * 0.8, H: bh, LabelX: x + slot*0.1,
			Label:     b.Start.In(loc).Format("15:04"),
			Title:     fmt.Sprintf("%s–%s: %d admitted", b.Start.In(loc).Format("15:04"), b.Start.Add(checkin.ArrivalBin).In(loc).Format("15:04 MST"), b.Admitted),
			ShowLabel: i%every == 0, Admitted: b.Admitted,
		})
	}
	return ch
}

// doorOf names where a door key scans ("" for another key).
func doorOf(k apikey.CompanyKey) string {
	if !k.IsDoorKey() {
		return ""
	}
	event, gate := "any event", "any gate"
	if k.CheckinEventID != nil {
		event = "event " + strconv.FormatInt(*k.CheckinEventID, 10)
		if k.CheckinEventTitle != nil {
			event = *k.CheckinEventTitle + " (" + event + ")"
		}
	}
	if k.CheckinGate != nil {
		gate = "gate " + *k.CheckinGate
	}
	return event + ", " + gate
}

package cabinet

import (
	"bytes"
	"embed"
	"fmt"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
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
	// Loc is the company's time zone (companyZone): the funcs time,
	// timep, day and hms print in it.
	Loc *time.Location
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
	// num and xy print the hall map's coordinates (xy: a point's x (0) or
	// y (1)).
	"num": num,
	"xy":  func(i int, p catalogfile.XY) string { return num(p[i]) },
	// statusWord is an order's status in words; orderStatus its badge,
	// which keeps the raw value for support (data-status, title).
	"statusWord":  func(s any) string { return statusWord(states.OrderStatus(fmt.Sprint(s))) },
	"orderStatus": func(s any) template.HTML { return orderStatus(states.OrderStatus(fmt.Sprint(s))) },
	// userLang marks user data (titles, names) written in Cyrillic as
	// Russian, in a page whose own words are English.
	"userLang": userLang,
	// auditWord is an audit log action in words.
	"auditWord": organizer.AuditWord,
	"sub":       func(a, b int64) int64 { return a - b },
	// abs is a figure without its sign, for a statement's line whose
	// label says which way the money went.
	"abs": func(a int64) int64 { return max(a, -a) },
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

// parsePages parses the pages with the company funcs in UTC (tests).
func parsePages() *pages { return parsePagesIn(time.UTC) }

// parsePagesIn parses every page with the company funcs (companyFuncs) in
// loc: a page's times come out in the company's zone without any template
// passing it.
func parsePagesIn(loc *time.Location) *pages {
	layout := template.Must(template.New("layout.html").Funcs(funcs).Funcs(zoneFuncs).Funcs(companyFuncs(loc)).ParseFS(templateFS, "templates/layout.html"))
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

// zonedPages are the pages parsed once per company time zone in use, on
// first need (a parsed template's funcs are fixed; a company's zone is one
// of a few).
type zonedPages struct{ byZone sync.Map } // zone name → *pages

func (z *zonedPages) in(loc *time.Location) *pages {
	if loc == nil {
		loc = time.UTC
	}
	if p, ok := z.byZone.Load(loc.String()); ok {
		return p.(*pages)
	}
	p, _ := z.byZone.LoadOrStore(loc.String(), parsePagesIn(loc))
	return p.(*pages)
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
	if data.Loc == nil {
		data.Loc = companyZone(r)
	}
	flashed := false
	if data.Notice == "" && data.User != nil {
		// The notice an action left before redirecting here (POST,
		// redirect, GET: a reload repeats nothing).
		data.Notice = c.sessions.GetString(r.Context(), flashKey)
		flashed = data.Notice != ""
	}
	var buf bytes.Buffer
	if err := c.pages.in(data.Loc).byName[name].ExecuteTemplate(&buf, "layout.html", data); err != nil {
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
// SVG by the template: no script, no outside asset. The SVG has no viewBox:
// its shapes are placed in percent of its box and its text is in CSS
// pixels, so labels keep their size on a phone's narrow chart instead of
// shrinking with it.
type chart struct {
	Bars  []bar
	Ticks []tick      // the value scale: its gridlines, baseline first
	Days  []axisLabel // the dates under the bars
	Max   string      // the scale's top, in money
	Label string
}

// bar is one day: X and W (and the refund bar's RX) in percent of the
// chart's width, Y and H (RY, RH) in percent of its height.
type bar struct {
	X, Y, W, H float64
	RX, RY, RH float64 // the refund bar
	Title      string
}

// tick is a gridline of the scale, Y in percent of the height from the
// top, labelled with its value.
type tick struct {
	Y     float64
	Label string
}

// axisLabel is a label under the bars, X in percent of the width, with
// its text-anchor (end keeps the last inside the chart; the first may
// reach into the scale's column on the left).
type axisLabel struct {
	X      float64
	Label  string
	Anchor string
}

// plotTop is the headroom above the scale's top, in percent of the height.
const plotTop = 8.0

// maxAxisLabels bounds the labels under the bars: at about 40 px each they
// fit a phone's 330 px chart.
const maxAxisLabels = 7

// scale is a value scale for a peak: a round step (1, 2, 2.5 or 5 times a
// power of ten) and its top, a multiple of it, at most three steps up.
func scale(peak int64) (step, top int64) {
	peak = max(peak, 1)
	raw := float64(peak) / 3
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = max(int64(math.Ceil(m*mag)), 1)
			break
		}
	}
	top = (peak + step - 1) / step * step
	return step, top
}

// ticksOf is the scale's gridlines from 0 to top by step, labelled by label.
func ticksOf(step, top int64, label func(int64) string) []tick {
	var ts []tick
	for v := int64(0); v <= top; v += step {
		ts = append(ts, tick{Y: yOf(v, top), Label: label(v)})
	}
	return ts
}

// yOf is a value's height on a scale to top, in percent from the top.
func yOf(v, top int64) float64 { return plotTop + (100-plotTop)*(1-float64(v)/float64(top)) }

// axisLabels places every n-th of labels (at most maxAxisLabels) at its
// slot's middle, slot being the share of the width of one.
func axisLabels(labels []string, slot float64) []axisLabel {
	every := (len(labels) + maxAxisLabels - 1) / maxAxisLabels
	var out []axisLabel
	for i := 0; i < len(labels); i += every {
		x, anchor := (float64(i)+0.5)*slot, "middle"
		if x > 94 {
			x, anchor = float64(i+1)*slot, "end"
		}
		out = append(out, axisLabel{X: x, Label: labels[i], Anchor: anchor})
	}
	return out
}

// compact is an amount in minor units as a scale says it: major units,
// thousands as k and millions as M ("2.5M", "750k", "40").
func compact(minor int64) string {
	v := float64(minor) / 100
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// newChart lays out one bar per day for the gross sales, with the day's
// refunds beside it, on a round scale above the largest.
func newChart(days []report.DaySales, currency, tz string) *chart {
	if len(days) == 0 {
		return nil
	}
	var peak int64 = 1
	for _, d := range days {
		peak = max(peak, d.Gross, d.Refunds)
	}
	step, top := scale(peak)
	ch := &chart{Max: money(top, currency), Ticks: ticksOf(step, top, compact),
		Label: fmt.Sprintf("Sales per day (%s), %s to %s", tz, days[0].Day, days[len(days)-1].Day)}
	slot := 100 / float64(len(days))
	base := yOf(0, top)
	labels := make([]string, len(days))
	for i, d := range days {
		gy, ry := yOf(d.Gross, top), yOf(d.Refunds, top)
		x := float64(i) * slot
		bw := slot * 0.4
		ch.Bars = append(ch.Bars, bar{
			X: x + slot*0.1, Y: gy, W: bw, H: base - gy,
			RX: x + slot*0.1 + bw, RY: ry, RH: base - ry,
			Title: fmt.Sprintf("%s: %d tickets, gross %s, refunds %s", d.Day, d.TicketsSold, money(d.Gross, currency), money(d.Refunds, currency)),
		})
		labels[i] = d.Day[5:]
	}
	ch.Days = axisLabels(labels, slot)
	return ch
}

// arrivalsChart is the check-in page's arrivals per 10 minutes, laid out
// here and drawn as inline SVG by the template, as the sales chart.
type arrivalsChart struct {
	Bars  []arrivalBar
	Ticks []tick
	Times []axisLabel
	Max   int64 // the scale's top, in tickets
	Label string
}

// arrivalBar is one bin, in percent as a bar.
type arrivalBar struct {
	X, Y, W, H float64
	Title      string
	Admitted   int64
}

// newArrivalsChart lays out one bar per bin on a round scale above the
// busiest.
func newArrivalsChart(bins []checkin.Arrivals, loc *time.Location) *arrivalsChart {
	if len(bins) == 0 {
		return nil
	}
	var peak int64 = 1
	for _, b := range bins {
		peak = max(peak, b.Admitted)
	}
	step, top := scale(peak)
	ch := &arrivalsChart{Max: top, Ticks: ticksOf(step, top, func(v int64) string { return strconv.FormatInt(v, 10) }),
		Label: fmt.Sprintf("Arrivals per %d minutes, %s to %s (%s)", int(checkin.ArrivalBin.Minutes()),
			bins[0].Start.In(loc).Format("15:04"), bins[len(bins)-1].Start.Add(checkin.ArrivalBin).In(loc).Format("15:04 MST"), loc)}
	// At least minArrivalSlots slots: the first bars of the evening are
	// bars, not a wall.
	const minArrivalSlots = 18
	slot := 100 / float64(max(len(bins), minArrivalSlots))
	base := yOf(0, top)
	labels := make([]string, len(bins))
	for i, b := range bins {
		y := yOf(b.Admitted, top)
		x := float64(i) * slot
		ch.Bars = append(ch.Bars, arrivalBar{
			X: x + slot*0.1, Y: y, W: slot * 0.8, H: base - y,
			Title:    fmt.Sprintf("%s–%s: %d admitted", b.Start.In(loc).Format("15:04"), b.Start.Add(checkin.ArrivalBin).In(loc).Format("15:04 MST"), b.Admitted),
			Admitted: b.Admitted,
		})
		labels[i] = b.Start.In(loc).Format("15:04")
	}
	ch.Times = axisLabels(labels, slot)
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

package api_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// badCatalog has a problem of each kind, each on a line of its own.
const badCatalog = `{
  "cities": [{"ref": "ekb", "name": "Yekaterinburg", "population": 1500000}],
  "venues": [{"ref": "hall", "name": "Hall", "city": "spb",
    "timezone": "Ural/Nowhere"}],
  "events": [
    {"ref": "e1", "slug": "e1", "status": "published",
     "starts_at": "2027-01-15 19:00",
     "venue": "hall", "fee": {"mode": "separate", "rate_bp": 1000, "min_fee": 0},
     "categories": [{"ref": "c", "name": "C", "price": "1500.00", "capacity": 10}]},
    {"ref": "e2", "title": "GA", "slug": "ga", "status": "published", "starts_at": "2027-01-15T19:00:00+05:00",
     "venue": "ghost", "fee": {"mode": "included"},
     "categories": [{"ref": "ga", "name": "GA", "price": 100, "capacity": "ten"}]}
  ]
}`

// badCatalogErrors are its errors as the page lists them: line, path, reason.
var badCatalogErrors = []string{
	`line 2 cities[0]: unknown field "population"`,
	`line 3 venues[0].city: unknown city "spb"`,
	`line 4 venues[0].timezone: unknown time zone "Ural/Nowhere"`,
	`line 6 events[0].title: is required`,
	`line 7 events[0].starts_at: expected a date-time with its UTC offset, like 2026-12-01T19:00:00+03:00, not "2027-01-15 19:00"`,
	`line 9 events[0].categories[0].price: expected a whole number of minor currency units`,
	`line 11 events[1].venue: unknown venue "ghost"`,
	`line 12 events[1].categories[0].capacity: expected a whole number, not the text "ten"`,
}

var goWords = regexp.MustCompile(`(?i)struct|\bgo\b|unmarshal|catalogfile\.|json:|time\.time|int64|invalid character`)

// upload posts a catalog file as the upload form does.
func (b *browserless) upload(name string, file []byte) page {
	b.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(file)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, b.abs("/cabinet/catalog"), &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// catalogText is a page's text without tags, spaces collapsed.
func catalogText(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " "))), " ")
}

// inline is a fragment's text as a browser runs it together: tags
// dropped, spaces collapsed.
func inline(fragment string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(fragment, ""))), " ")
}

func countEvents(t *testing.T, s *testenv.Stack, company int64) int {
	t.Helper()
	var n int
	if err := s.DB.NewRaw("SELECT count(*) FROM events WHERE company_id = ?", company).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// catalogFields lists every field path the importer accepts, from the
// structs' json tags ("events[].categories[].price").
func catalogFields() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			out = append(out, prefix+name)
			switch ft := f.Type; {
			case ft == reflect.TypeFor[catalogfile.SeatList]():
				walk(reflect.TypeFor[catalogfile.Seat](), prefix+name+"[].")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), prefix+name+"[].")
			case ft.Kind() == reflect.Struct && ft.PkgPath() == reflect.TypeFor[catalogfile.File]().PkgPath():
				walk(ft, prefix+name+".")
			}
		}
	}
	walk(reflect.TypeFor[catalogfile.File](), "")
	return out
}

// TestCabinetCatalogUploadErrors: a bad file is refused whole, every
// problem listed with its line and field path in words (never Go's), an
// oversized file gets a page (413) pointing to ticketctl, the example file
// downloads and imports cleanly, and the format page lists every field.
func TestCabinetCatalogUploadErrors(t *testing.T) {
	t.Parallel()
	s := testenv.NewStack(t)
	company := s.Company(t, "Ural Concerts")
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "catalog@ural.test"))

	p := b.upload("bad.json", []byte(badCatalog))
	if p.Status != http.StatusUnprocessableEntity || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("bad file: %d %s", p.Status, p.Header.Get("Content-Type"))
	}
	items := regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllStringSubmatch(p.Body[strings.Index(p.Body, `id="import-errors"`):], -1)
	var listed []string
	for _, m := range items {
		listed = append(listed, inline(m[1]))
	}
	if len(listed) != len(badCatalogErrors) {
		t.Errorf("%d errors listed, want %d:\n%s", len(listed), len(badCatalogErrors), strings.Join(listed, "\n"))
	}
	for i, want := range badCatalogErrors {
		if i < len(listed) && !strings.HasPrefix(listed[i], want) {
			t.Errorf("error %d: %q, want %q", i, listed[i], want)
		}
	}
	for _, e := range listed {
		if goWords.MatchString(e) {
			t.Errorf("an error speaks Go: %s", e)
		}
	}
	if !strings.Contains(catalogText(p.Body), "The file was refused: 8 error(s), nothing imported.") || countEvents(t, s, company) != 0 {
		t.Fatalf("a refused file imported something, or the page does not say it refused it:\n%s", catalogText(p.Body))
	}
	// A syntax error: its line and column, and nothing else to list.
	p = b.upload("broken.json", []byte("{\n  \"cities\": [\n    {\"ref\": \"ekb\" \"name\": \"Yekaterinburg\"}\n  ]\n}"))
	if got := inline(p.Body); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(got, `line 3, column 19: expected ',' between two fields, found '"'`) || goWords.MatchString(got) {
		t.Fatalf("syntax error: %d\n%s", p.Status, got)
	}

	// Oversized: past the cabinet's body limit, and a file just over 1 MiB
	// in a form under it. Both get the catalog page, not JSON.
	huge := bytes.Repeat([]byte(" "), 3<<20)
	justOver := append(bytes.Repeat([]byte(" "), 1<<20), '{', '}')
	for name, file := range map[string][]byte{"3 MiB": huge, "1 MiB + 2 bytes": justOver} {
		p := b.upload("big.json", file)
		if p.Status != http.StatusRequestEntityTooLarge || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(p.Body, `id="upload-form"`) {
			t.Fatalf("%s: %d %s\n%.500s", name, p.Status, p.Header.Get("Content-Type"), p.Body)
		}
		if got := catalogText(p.Body); !strings.Contains(got, "larger than 1 MiB") || !strings.Contains(got, fmt.Sprintf("ticketctl catalog import --company %d", company)) {
			t.Fatalf("%s: the page does not say the limit and the way out:\n%s", name, got)
		}
	}
	// The session survives an oversized upload: the next page works.
	if p := b.get("/cabinet/catalog"); p.Status != http.StatusOK {
		t.Fatalf("the catalog after an oversized upload: %d", p.Status)
	}

	// The example file: linked, downloaded, imported cleanly.
	cat := b.get("/cabinet/catalog")
	if !strings.Contains(cat.Body, `href="/cabinet/catalog/example.json"`) || !strings.Contains(cat.Body, `href="/cabinet/catalog/format"`) {
		t.Fatalf("the catalog page links neither the example nor the format:\n%s", cat.Body)
	}
	ex := b.get("/cabinet/catalog/example.json")
	if ex.Status != http.StatusOK || ex.Header.Get("Content-Type") != "application/json" || !strings.Contains(ex.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("example download: %d %v", ex.Status, ex.Header)
	}
	p = b.upload("example.json", []byte(ex.Body))
	if p.Status != http.StatusOK || !strings.Contains(p.Body, `id="import-result"`) || countEvents(t, s, company) != 3 {
		t.Fatalf("the example does not import: %d\n%s", p.Status, catalogText(p.Body))
	}
	// Its events start in the venue's zone, labelled: 19:00 in
	// Yekaterinburg is 14:00 UTC.
	if got := catalogText(p.Body); !strings.Contains(got, "2027-01-15 19:00 +05 Asia/Yekaterinburg") || strings.Contains(got, "14:00") {
		t.Fatalf("the event list does not show the venue's time:\n%s", got)
	}

	// The format page names every field the importer accepts.
	fp := b.get("/cabinet/catalog/format")
	if fp.Status != http.StatusOK {
		t.Fatalf("format page: %d", fp.Status)
	}
	fields := catalogFields()
	if len(fields) < 40 {
		t.Fatalf("only %d fields found", len(fields))
	}
	for _, f := range fields {
		if !strings.Contains(fp.Body, fmt.Sprintf(`data-field="%s"`, f)) {
			t.Errorf("the format page lacks %s", f)
		}
	}
	if n := strings.Count(fp.Body, "data-field="); n != len(fields) {
		t.Errorf("the format page lists %d fields, the importer accepts %d", n, len(fields))
	}
}

// TestCabinetCheckInInVenueTime: the check-in page shows an event in
// Asia/Yekaterinburg (+05) with its times five hours ahead of UTC.
func TestCabinetCheckInInVenueTime(t *testing.T) {
	t.Parallel()
	s := testenv.NewStack(t)
	ctx := context.Background()
	company := s.Company(t, "Ural Concerts")
	s.Import(t, company, catalogfile.Example())
	var event int64
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND ref = 'jazz-night'", company).Scan(ctx, &event); err != nil {
		t.Fatal(err)
	}
	_, doorID := s.Key(t, company, apikey.Production, apikey.ScopeCheckin)
	at := time.Date(2027, 2, 5, 14, 3, 7, 0, time.UTC)
	if _, err := store.CheckIn(ctx, s.DB, store.Scan{CompanyID: company, APIKeyID: doorID, EventID: event, Barcode: "4006381333931",
		Gate: "North", DeviceID: "dev-1", Direction: states.ScanIn, ScannedAt: at, Offline: true}); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	if err := s.DB.NewRaw("SELECT max(scanned_at) FROM check_ins WHERE event_id = ?", event).Scan(ctx, &last); err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, s.URL, nil)
	b.setPassword(cabinetUser(t, s, s.URL, company, "door@ural.test"))
	p := b.get(fmt.Sprintf("/cabinet/checkin?event=%d", event))
	got := catalogText(p.Body)
	local := last.Add(5*time.Hour).UTC().Format("2006-01-02 15:04:05") + " +05"
	if p.Status != http.StatusOK || !strings.Contains(got, "North 0 1 1 "+local) {
		t.Fatalf("the gate's last scan is not at %s (five hours ahead of %s UTC):\n%s", local, last.UTC().Format(time.TimeOnly), got)
	}
	if !strings.Contains(got, "starts 2027-02-05 20:00 +05") || !strings.Contains(got, "venue's time zone, Asia/Yekaterinburg") ||
		strings.Contains(got, last.UTC().Format("15:04:05")) {
		t.Fatalf("the page shows UTC or no zone:\n%s", got)
	}
}

// TestCabinetCatalogInBrowser: a bad file's errors and the format page at
// desktop and phone width, without sideways scrolling. Screenshots go to
// .data/artifacts/cabinet.
func TestCabinetCatalogInBrowser(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Ural Concerts")
	link := cabinetUser(t, s, s.URL, company, "browser@ural.test")
	ctx := newBrowser(t, 2*time.Minute)
	artifacts := filepath.Join("..", ".data", "artifacts", "cabinet")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad-catalog.json")
	if err := os.WriteFile(bad, []byte(badCatalog), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	fits := func(what string) {
		t.Helper()
		over, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
		if err != nil || over {
			t.Fatalf("%s scrolls sideways (%v)", what, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		img, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(artifacts, name), img, 0o644); err != nil {
			t.Fatal(err)
		}
		if decoded, err := png.Decode(bytes.NewReader(img)); err != nil || distinctColours(decoded) <= 10 {
			t.Fatalf("%s is blank or no PNG (%v)", name, err)
		}
	}
	run("set the password", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#totals")))
	for _, w := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		if w.mobile {
			run("phone width", chromedp.EmulateViewport(w.width, w.height, chromedp.EmulateMobile))
		} else {
			run("desktop width", chromedp.EmulateViewport(w.width, w.height))
		}
		run("open the catalog", chromedp.Navigate(s.URL+"/cabinet/catalog"), chromedp.WaitVisible(chromedp.CSS("#upload-form")),
			chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{bad}))
		res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#upload")))
		if err != nil || res.Status != http.StatusUnprocessableEntity {
			t.Fatalf("upload at %s: %v %v", w.name, res, err)
		}
		errs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#import-errors li'), li => li.innerText)`))
		if err != nil || len(errs) != len(badCatalogErrors) {
			t.Fatalf("errors listed at %s: %q %v", w.name, errs, err)
		}
		for i, want := range badCatalogErrors {
			if got := strings.Join(strings.Fields(errs[i]), " "); !strings.HasPrefix(got, want) {
				t.Errorf("%s: error %d reads %q, want %q", w.name, i, got, want)
			}
		}
		fits("the catalog's errors at " + w.name + " width")
		shot("catalog-file-errors-" + w.name + ".png")
		run("open the format", chromedp.Click(chromedp.CSS("#format-link")), chromedp.WaitVisible(chromedp.CSS(`tr[data-field="events[].starts_at"]`)))
		fits("the format page at " + w.name + " width")
		shot("catalog-format-" + w.name + ".png")
	}
}

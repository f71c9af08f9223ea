package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// newKeyOn reads the key a created-key page shows once.
func newKeyOn(t *testing.T, p page) string {
	t.Helper()
	m := regexp.MustCompile(`id="new-key" type="text" readonly value="([^"]+)"`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || p.URL.Path != "/cabinet/keys/created" || m == nil {
		t.Fatalf("no new key on the page: %d\n%.2000s", p.Status, p.Body)
	}
	return m[1]
}

// TestCabinetDoorKeys: the key form makes a partner key (no checkin) by
// default, and a door key limited to one of the company's events and a
// gate on request; the door key admits at its gate and is refused
// elsewhere and on orders. Mixed scopes, limits on a partner key and
// another company's event are refused, and nothing is made.
func TestCabinetDoorKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "doors@a.test"))
	event := f.ids["swan-lake"]

	form := b.get("/cabinet/keys")
	if !strings.Contains(form.Body, `id="kind-door"`) || !strings.Contains(form.Body, fmt.Sprintf(`<option value="%d">Swan Lake`, event)) ||
		strings.Contains(form.Body, `value="checkin" checked`) || strings.Contains(form.Body, "Gig") {
		t.Fatalf("the key form:\n%s", form.Body)
	}
	partnerForm := url.Values{"environment": {"sandbox"}, "name": {"shop"}, "kind": {"partner"}, "scopes": apikey.PartnerScopes}
	partner := newKeyOn(t, b.postKeyForm(partnerForm))

	var keys int
	count := func() int {
		t.Helper()
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM api_keys").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	keys = count()
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"checkin among a partner's scopes", url.Values{"environment": {"sandbox"}, "kind": {"partner"},
			"scopes": {apikey.ScopeOrdersRead, apikey.ScopeCheckin}}, "checkin scope only"},
		{"a gate on a partner key", url.Values{"environment": {"sandbox"}, "kind": {"partner"},
			"scopes": {apikey.ScopeOrdersRead}, "gate": {"North"}}, "limits a door key"},
		{"another company's event", url.Values{"environment": {"sandbox"}, "kind": {"door"},
			"event": {fmt.Sprint(f.foreignID)}, "gate": {"North"}}, "not one of your events"},
		{"a NUL in the gate", url.Values{"environment": {"sandbox"}, "kind": {"door"}, "gate": {"North\x00"}}, "without control characters"},
		{"a gate not UTF-8", url.Values{"environment": {"sandbox"}, "kind": {"door"}, "gate": {"Nord\xe9"}}, "without control characters"},
		{"a gate too long", url.Values{"environment": {"sandbox"}, "kind": {"door"}, "gate": {strings.Repeat("в", 65)}}, "at most 64 characters"},
	} {
		p := b.postKeyForm(tc.form)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(p.Body), tc.want) {
			t.Errorf("%s: %d, want 422 saying %q\n%.3000s", tc.name, p.Status, tc.want, p.Body)
		}
	}
	if n := count(); n != keys {
		t.Fatalf("refused forms made keys: %d, %d before", n, keys)
	}

	created := b.postKeyForm(url.Values{"environment": {"sandbox"}, "name": {"north door"}, "kind": {"door"},
		"event": {fmt.Sprint(event)}, "gate": {"North"}, "scopes": apikey.PartnerScopes})
	door := newKeyOn(t, created)
	if !strings.Contains(created.Body, "Door key: Swan Lake (event "+fmt.Sprint(event)+"), gate North") ||
		!strings.Contains(created.Body, "Scopes: checkin<") {
		t.Fatalf("the created door key:\n%s", created.Body)
	}
	list := b.get("/cabinet/keys")
	if !regexp.MustCompile(`<td class="door[^"]*">Swan Lake \(event \d+\), gate North <span class="badge test sandbox-door">SANDBOX — test tickets only</span></td>`).MatchString(list.Body) {
		t.Fatalf("the key list does not show the door key's limits:\n%s", list.Body)
	}

	_, ts := f.paidTickets(t, f.keyA, "parterre-2-19", "parterre-2-20")
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/check-ins", partner,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, ts[0].Barcode, event), idemKey(t)),
		http.StatusForbidden, "insufficient_scope")
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" || got.Data.Gate != "North" {
		t.Fatalf("the door key at its gate: %+v", got.Data)
	}
	for _, body := range []string{
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "South"}`, ts[1].Barcode, event),
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, ts[1].Barcode, f.ids["standup"]),
	} {
		expectProblem(t, f.Do(t, http.MethodPost, "/v1/check-ins", door, body, idemKey(t)), http.StatusForbidden, "door_key_elsewhere")
	}
	expectProblem(t, f.Get(t, "/v1/orders", door), http.StatusForbidden, "insufficient_scope")
}

// A key made without naming its scopes is a partner's: it sells, and it
// does not admit tickets at the door (403, nothing recorded). Door keys
// are made on purpose.
func TestDefaultKeyDoesNotAdmit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-18")
	res := f.Do(t, http.MethodPost, "/v1/check-ins", f.keyA,
		fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North"}`, ts[0].Barcode, f.ids["swan-lake"]), idemKey(t))
	if p := expectProblem(t, res, http.StatusForbidden, "insufficient_scope"); p.RequiredScope != apikey.ScopeCheckin {
		t.Fatalf("required scope: %+v", p)
	}
	var scans int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins").Scan(context.Background(), &scans); err != nil || scans != 0 {
		t.Fatalf("%d scans recorded (%v)", scans, err)
	}
}

// The catalog file's "reentry": true lets an event's tickets out and in
// again: in, out, in is admitted, exited, admitted (the first admission
// kept); without it an exit is refused. Importing it again unchanged
// changes nothing; importing it without reentry turns it off.
func TestCatalogReentry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, ts := f.paidTickets(t, f.keyA, "parterre-3-11")
	scan := func(direction string) *testenv.Response {
		return f.Do(t, http.MethodPost, "/v1/check-ins", door,
			fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "North", "direction": %q}`, ts[0].Barcode, event, direction), idemKey(t))
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("first scan: %+v", got.Data)
	}
	expectProblem(t, scan("out"), http.StatusUnprocessableEntity, "validation_error")

	file := demoWithReentry(t, "swan-lake", true)
	res := f.Import(t, f.companyA, file)
	if !slices.ContainsFunc(res.Records, func(r store.ImportedRecord) bool {
		return r.Kind == "event" && r.ID == event && r.Action == store.Updated
	}) {
		t.Fatalf("import with reentry: %+v", res.Records)
	}
	var allow bool
	if err := f.DB.NewRaw("SELECT allow_reentry FROM events WHERE id = ?", event).Scan(ctx, &allow); err != nil || !allow {
		t.Fatalf("allow_reentry after the import: %v %v", allow, err)
	}
	if again := f.Import(t, f.companyA, file); again.Count(store.Updated) != 0 || again.Count(store.Created) != 0 {
		t.Fatalf("the same file again: %+v", again.Records)
	}
	for i, want := range []string{"exited", "admitted"} {
		direction := map[string]string{"exited": "out", "admitted": "in"}[want]
		r := scan(direction)
		var got checkInBody
		r.Decode(t, &got)
		if r.Status != http.StatusOK || got.Data.Outcome != want {
			t.Fatalf("scan %d (%s): %d %s", i+2, direction, r.Status, r.Body)
		}
		if want == "admitted" && (got.Data.FirstCheckIn == nil || got.Data.FirstCheckIn.Gate != "North") {
			t.Fatalf("admitted again: the first admission is %+v", got.Data.FirstCheckIn)
		}
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("inside again, scanned in: %+v", got.Data)
	}

	f.Import(t, f.companyA, demoWithReentry(t, "swan-lake", false))
	if err := f.DB.NewRaw("SELECT allow_reentry FROM events WHERE id = ?", event).Scan(ctx, &allow); err != nil || allow {
		t.Fatalf("allow_reentry after importing without it: %v %v", allow, err)
	}
}

// demoWithReentry is the demo catalog with the event's "reentry" set.
func demoWithReentry(t *testing.T, slug string, reentry bool) []byte {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(catalogfile.Demo(time.Now()), &file); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range file["events"].([]any) {
		if ev := e.(map[string]any); ev["slug"] == slug {
			ev["reentry"], found = reentry, true
		}
	}
	if !found {
		t.Fatalf("no event %s in the demo catalog", slug)
	}
	out, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCabinetCheckInPage: the check-in page shows an event's door —
// admitted of expected per category and in all, per gate, arrivals per
// 10 minutes and the conflict of a ticket admitted at one gate and scanned
// at another a moment later — of production tickets only (sandbox ones
// under env=sandbox); another company's event is 404. In Chromium it fits
// a desktop and a phone without scrolling sideways.
func TestCabinetCheckInPage(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	event := f.ids["swan-lake"]
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	door, doorID := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	sandboxDoor, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, sold := f.paidTickets(t, prod, "parterre-2-21", "parterre-2-22", "parterre-2-23", "balcony-1-1")
	bySeat := map[string]ticket{}
	for _, tk := range sold {
		bySeat[tk.Seat.SeatID] = tk
	}
	ts := []ticket{bySeat["parterre-2-21"], bySeat["parterre-2-22"]} // two stalls
	_, sts := f.paidTickets(t, f.keyA, "parterre-3-21")

	for _, s := range []struct{ barcode, gate, want string }{
		{ts[0].Barcode, "North", "admitted"},
		{ts[0].Barcode, "South", "already_checked_in"}, // a copy at another gate: a conflict
		{ts[1].Barcode, "South", "admitted"},
		{"4006381333931", "North", "unknown"},
	} {
		if got := f.scan(t, door, event, s.barcode, s.gate); got.Data.Outcome != s.want {
			t.Fatalf("scan at %s: %+v, want %s", s.gate, got.Data, s.want)
		}
	}
	if got := f.scan(t, sandboxDoor, event, sts[0].Barcode, "Test gate"); got.Data.Outcome != "admitted" {
		t.Fatalf("sandbox scan: %+v", got.Data)
	}
	// A scan made offline an hour before the admission at another gate,
	// uploaded now: a conflict, whatever the device's clock said.
	off, err := store.CheckIn(context.Background(), f.DB, store.Scan{CompanyID: f.companyA, APIKeyID: doorID, EventID: event,
		Barcode: ts[1].Barcode, Gate: "East", DeviceID: "dev-9", Direction: states.ScanIn, ScannedAt: time.Now().Add(-time.Hour), Offline: true})
	if err != nil || off.Outcome != states.ScanAlreadyCheckedIn || off.Conflict != states.ConflictTwoDoors {
		t.Fatalf("offline scan: %+v %v", off, err)
	}
	// A ticket refunded after a device let its holder in offline.
	refunded, rts := f.paidTickets(t, prod, "parterre-2-24")
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", refunded), prod, `{"reason": "buyer cannot come"}`, idemKey(t)); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	void, err := store.CheckIn(context.Background(), f.DB, store.Scan{CompanyID: f.companyA, APIKeyID: doorID, EventID: event,
		Barcode: rts[0].Barcode, Gate: "West", DeviceID: "dev-7", Direction: states.ScanIn, ScannedAt: time.Now().Add(-30 * time.Minute), Offline: true})
	if err != nil || void.Outcome != states.ScanVoid || void.Conflict != states.ConflictAdmittedVoid {
		t.Fatalf("offline scan of a refunded ticket: %+v %v", void, err)
	}

	base := f.ProductionLikeAPI(t)
	link := cabinetUser(t, f.Stack, base, f.companyA, "door@a.test")
	b := newBrowserless(t, base, nil)
	b.setPassword(link)
	text := func(body string) string {
		return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " "))), " ")
	}
	p := b.get(fmt.Sprintf("/cabinet/checkin?event=%d", event))
	if p.Status != http.StatusOK || strings.Contains(p.Body, `http-equiv="refresh"`) || !strings.Contains(p.Body, `id="refresh"`) || !strings.Contains(p.Body, `aria-current="page">Check-in<`) {
		t.Fatalf("check-in page: %d\n%s", p.Status, p.Body)
	}
	page := text(p.Body)
	for _, want := range []string{
		"Admitted 2 Expected 4 Admitted of expected 50%", "Conflicts 3",
		"Stalls 2 3", "Balcony 0 1",
		"East 0 1 1", "North 1 2 1", "South 1 2 1", "West 0 1 1", // gate, tickets admitted, scans, refused
		rts[0].Number + " Let in though void — — — West dev-7 offline", // the newest first
		ts[1].Number + " Let in at two doors South dev-1", "East dev-9 offline",
		ts[0].Number + " Copy refused North dev-1", "South dev-1",
		"Let in though void : a device working offline let the ticket in, but it is refunded",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Test gate") || strings.Index(page, ts[1].Number) > strings.Index(page, ts[0].Number) ||
		strings.Index(page, rts[0].Number) > strings.Index(page, ts[1].Number) {
		t.Errorf("the production view shows a sandbox scan, or the conflicts are not newest first:\n%s", page)
	}
	if n := strings.Count(p.Body, `<rect class="arrival"`); n < 1 {
		t.Errorf("the arrivals chart has %d bars", n)
	}
	sp := text(b.get(fmt.Sprintf("/cabinet/checkin?event=%d&env=sandbox", event)).Body)
	if !strings.Contains(sp, "Admitted 1 Expected 1") || !strings.Contains(sp, "Test gate 1 1 0") || strings.Contains(sp, "North") {
		t.Errorf("the sandbox view:\n%s", sp)
	}
	// The event nearest to now is shown by default; another company's
	// event is not there.
	if p := b.get("/cabinet/checkin"); p.Status != http.StatusOK || !strings.Contains(p.Body, `id="door-totals"`) {
		t.Fatalf("check-in without an event: %d", p.Status)
	}
	for _, path := range []string{fmt.Sprintf("/cabinet/checkin?event=%d", f.foreignID), "/cabinet/checkin?event=x",
		fmt.Sprintf("/cabinet/checkin?event=%d&env=staging", event)} {
		if p := b.get(path); p.Status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, p.Status)
		}
	}
	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	bUser := newBrowserless(t, base, nil)
	bUser.setPassword(cabinetUser(t, f.Stack, base, companyB, "door@b.test"))
	if p := bUser.get(fmt.Sprintf("/cabinet/checkin?event=%d", event)); p.Status != http.StatusNotFound {
		t.Fatalf("company B on A's event: %d", p.Status)
	}

	// In Chromium: the figures, and no sideways scroll on a desktop or a phone.
	ctx := newBrowser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	run("set the password", chromedp.Navigate(cabinetUser(t, f.Stack, base, f.companyA, "chromium@a.test")),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#totals")))
	run("open check-in", chromedp.Navigate(fmt.Sprintf("%s/cabinet/checkin?event=%d", base, event)),
		chromedp.WaitVisible(chromedp.CSS("#door-totals")))
	admitted, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#d-admitted")))
	if err != nil || strings.TrimSpace(admitted) != "2" {
		t.Fatalf("admitted in Chromium: %q %v", admitted, err)
	}
	conflicts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#conflicts tr[data-ticket]').length`))
	if err != nil || conflicts != 3 {
		t.Fatalf("conflict rows in Chromium: %d %v", conflicts, err)
	}
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(...Array.from(document.querySelectorAll('#arrivals rect.arrival'), r => r.getBoundingClientRect().height))`))
	if err != nil || bars < 20 {
		t.Fatalf("the tallest arrivals bar is %.0f px high (%v)", bars, err)
	}
	artifacts := filepath.Join("..", ".data", "artifacts", "cabinet")
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	// The arrivals chart reads on a phone: labels at least 11 px, a scale.
	pageFits(t, ctx, "checkin", func(t *testing.T, width int64) {
		chartReadable(t, ctx, "#arrivals", "#arrivals-scale", "#arrivals-times", width)
	})

	// The key form shows a door key's fields once "Door key" is chosen,
	// and hides the partner's scopes.
	visible := func(sel string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).offsetParent !== null`, sel)))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	run("open the keys page", chromedp.Navigate(base+"/cabinet/keys"), chromedp.WaitVisible(chromedp.CSS("#create-key")))
	if visible("#door-gate") || !visible("#scope-production-orders\\:read") {
		t.Fatal("a partner key's form shows the door fields or hides the scopes")
	}
	run("choose a door key", chromedp.Click(chromedp.CSS("#kind-door")))
	if !visible("#door-gate") || !visible("#door-event") || visible("#scope-production-orders\\:read") {
		t.Fatal("a door key's form hides the door fields or shows the partner's scopes")
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(artifacts, "keys-door-form.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An event with more conflicts than the check-in page shows: the newest
// 100 in the table, the figure says there are more, and the page says
// where the rest are.
func TestCabinetCheckInConflictsCapped(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	_, doorID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	event := f.ids["swan-lake"]
	_, ts := f.signedTickets(t, f.keyA, "parterre-3-27")
	f.manyConflicts(t, event, ts[0].ID, doorID, ts[0].Barcode, time.Now().UTC().Add(-time.Hour), 130)

	base := f.ProductionLikeAPI(t)
	b := newBrowserless(t, base, nil)
	b.setPassword(cabinetUser(t, f.Stack, base, f.companyA, "door@a.test"))
	p := b.get(fmt.Sprintf("/cabinet/checkin?event=%d&env=sandbox", event))
	if p.Status != http.StatusOK {
		t.Fatalf("check-in page: %d", p.Status)
	}
	if n := strings.Count(p.Body, `data-kind="admitted_void"`); n != 100 || !strings.Contains(p.Body, `<dd id="d-conflicts">100+</dd>`) ||
		!strings.Contains(p.Body, `id="conflicts-cut"`) {
		t.Fatalf("%d conflicts on the page:\n%s", n, p.Body)
	}
}

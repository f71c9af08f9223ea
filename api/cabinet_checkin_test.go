package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"ticketsales/internal/apikey"
	"ticketsales/internal/catalog/catalogfile"
	"ticketsales/store"
	"ticketsales/test/testenv"
)

// newKeyOn reads the key a created-key page shows once.
func newKeyOn(t *testing.T, p page) string {
	t.Helper()
	m := regexp.MustCompile(`id="new-key" type="text" readonly value="([^"]+)"`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusCreated || m == nil {
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
	partner := newKeyOn(t, b.post("/cabinet/keys", partnerForm))

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
	} {
		p := b.post("/cabinet/keys", tc.form)
		if p.Status != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(p.Body), tc.want) {
			t.Errorf("%s: %d, want 422 saying %q\n%.3000s", tc.name, p.Status, tc.want, p.Body)
		}
	}
	if n := count(); n != keys {
		t.Fatalf("refused forms made keys: %d, %d before", n, keys)
	}

	created := b.post("/cabinet/keys", url.Values{"environment": {"sandbox"}, "name": {"north door"}, "kind": {"door"},
		"event": {fmt.Sprint(event)}, "gate": {"North"}, "scopes": apikey.PartnerScopes})
	door := newKeyOn(t, created)
	if !strings.Contains(created.Body, "Door key: Swan Lake (event "+fmt.Sprint(event)+"), gate North") ||
		!strings.Contains(created.Body, "Scopes: checkin<") {
		t.Fatalf("the created door key:\n%s", created.Body)
	}
	list := b.get("/cabinet/keys")
	if !regexp.MustCompile(`<td class="door">Swan Lake \(event \d+\), gate North</td>`).MatchString(list.Body) {
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
		expectProblem(t, f.Do(t, http.MethodPost, "/v1/check-ins", door, body, idemKey(t)), http.StatusForbidden, "insufficient_scope")
	}
	expectProblem(t, f.Get(t, "/v1/orders", door), http.StatusForbidden, "insufficient_scope")
}

// A key made without naming its scopes is a partner's: it sells, and it
// does not admit tickets at the door (403, nothing recorded). Door keys
// are made on purpose.
func TestDefaultKeyDoesNotAdmit(t *testing.T) {
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

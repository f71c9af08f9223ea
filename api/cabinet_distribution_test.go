package api_test

// The organizer's side of distribution through the real HTTP cabinet:
// channels and their applications, allocations, windows, timed releases
// and releases (docs/cabinet.md, "Channels").

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// distributionState is everything of company A's distribution a refused
// request must leave as it was.
func distributionState(t *testing.T, f *fixture) string {
	t.Helper()
	var sum string
	err := f.DB.NewRaw(`SELECT md5(concat_ws('|',
		(SELECT string_agg(ch::text, ',' ORDER BY ch.id) FROM channels ch),
		(SELECT string_agg(ca::text, ',' ORDER BY ca.application_id) FROM channel_applications ca),
		(SELECT string_agg(ce::text, ',' ORDER BY ce.event_id, ce.channel_id) FROM channel_events ce),
		(SELECT string_agg(q::text, ',' ORDER BY q.id) FROM channel_quotas q),
		(SELECT string_agg(s.event_id || ':' || s.seat_id || ':' || coalesce(s.channel_id, 0), ',' ORDER BY s.event_id, s.seat_id) FROM event_seats s),
		(SELECT string_agg(e.id || ':' || coalesce(e.sales_start::text, '') || ':' || coalesce(e.sales_end::text, ''), ',' ORDER BY e.id) FROM events e)))`).Scan(context.Background(), &sum)
	if err != nil {
		t.Fatalf("distribution state: %v", err)
	}
	return sum
}

func (f *fixture) channelID(t *testing.T, ref string) int64 {
	t.Helper()
	var ids []int64
	if err := f.DB.NewRaw("SELECT id FROM channels WHERE company_id = ? AND ref = ?", f.companyA, ref).Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("channel %s: %d found", ref, len(ids))
	}
	return ids[0]
}

func (f *fixture) applicationID(t *testing.T, env, name string) int64 {
	t.Helper()
	var id int64
	if err := f.DB.NewRaw("SELECT id FROM applications WHERE company_id = ? AND environment = ? AND name = ?", f.companyA, env, name).
		Scan(context.Background(), &id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *fixture) seatsOfChannel(t *testing.T, event, channel int64) int {
	t.Helper()
	var n int
	if err := f.DB.NewRaw("SELECT count(*) FROM event_seats WHERE event_id = ? AND channel_id = ?", event, channel).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// mustStatus checks a response's status, showing the page's message.
func mustStatus(t *testing.T, step string, p page, want int) page {
	t.Helper()
	if p.Status != want {
		msg := p.Body
		if m := regexp.MustCompile(`(?s)<ul class="card errors" id="problems">(.*?)</ul>|<p class="message"[^>]*>(.*?)</p>`).FindString(p.Body); m != "" {
			msg = m
		}
		t.Fatalf("%s: %d at %s, want %d\n%.1500s", step, p.Status, p.URL, want, msg)
	}
	return p
}

// TestCabinetDistribution: owner and finance create a channel, put an
// application in it, allocate seats by zone and rows and a quantity, set a
// window and a timed release (its workflow started), release part and
// whole; bad input changes nothing; the channel's partner key sees its
// allocation; the report shows it. Support, door and developer get 403
// everywhere, a cross-site POST is refused, another company's event is 404.
func TestCabinetDistribution(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	swan, standup := f.ids["swan-lake"], f.ids["standup"]
	moscow, _ := time.LoadLocation("Europe/Moscow")
	var gaCategory int64
	if err := f.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? AND ref = 'ga'", standup).Scan(ctx, &gaCategory); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		role       organizer.Role
		ref, name  string
		app        string
		zones      string
		rows       string
		wantSeats  int
		releaseOne string
	}{
		{organizer.RoleOwner, "kassir", "Кассир.ру — партнёрская витрина", "kassir-shop", "balcony", "parterre:1-1", 36, "balcony-1-1"},
		{organizer.RoleFinance, "ticketland", "Тикетлэнд", "ticketland-shop", "", "parterre:2-3", 60, "parterre-2-1"},
	} {
		t.Run(string(tc.role), func(t *testing.T) {
			key := f.KeyIn(t, f.companyA, apikey.Sandbox, tc.app)
			b := newBrowserless(t, f.URL, nil)
			b.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, string(tc.role)+"@a.test", tc.role))

			p := mustStatus(t, "channels page", b.get("/cabinet/channels"), http.StatusOK)
			if !strings.Contains(p.Body, `href="/cabinet/channels" aria-current="page"`) {
				t.Error("the menu does not mark Channels")
			}
			// Bad input: a ref that is no ref, a blank name; nothing made.
			before := distributionState(t, f)
			p = mustStatus(t, "a bad channel", b.post("/cabinet/channels", url.Values{"ref": {"Кассир Ру"}, "name": {" "}}), http.StatusUnprocessableEntity)
			if !strings.Contains(p.Body, "Ref: 1 to 64 lowercase letters") || !strings.Contains(p.Body, "Name: 1 to 200 characters") {
				t.Errorf("the refused form does not say why:\n%.2000s", p.Body)
			}
			if distributionState(t, f) != before {
				t.Fatal("a refused channel changed something")
			}
			p = mustStatus(t, "create a channel", b.post("/cabinet/channels", url.Values{"ref": {tc.ref}, "name": {tc.name}}), http.StatusOK)
			if !strings.Contains(p.Body, "Channel "+tc.ref+" created") || !strings.Contains(p.Body, tc.name) {
				t.Fatalf("the channels page after creating:\n%.2000s", p.Body)
			}
			ch := f.channelID(t, tc.ref)
			app := f.applicationID(t, apikey.Sandbox, tc.app)

			p = mustStatus(t, "put the application in", b.post("/cabinet/channels/applications",
				url.Values{"application": {fmt.Sprint(app)}, "channel": {fmt.Sprint(ch)}}), http.StatusOK)
			if !strings.Contains(p.Body, fmt.Sprintf(`id="take-out-%d"`, app)) {
				t.Fatal("the channel's card does not list the application")
			}
			mustStatus(t, "an unknown application", b.post("/cabinet/channels/applications",
				url.Values{"application": {"999999"}, "channel": {fmt.Sprint(ch)}}), http.StatusUnprocessableEntity)

			ev := fmt.Sprintf("/cabinet/channels/events/%d", swan)
			mustStatus(t, "event page", b.get(ev), http.StatusOK)
			// Bad seats: a zone the event does not have, rows that are no range.
			before = distributionState(t, f)
			p = mustStatus(t, "no such zone", b.post(ev+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"}, "zones": {"nowhere"}}),
				http.StatusUnprocessableEntity)
			if !strings.Contains(p.Body, "Zone nowhere: the event has no such zone") {
				t.Errorf("the refused allocation does not say why:\n%.3000s", p.Body)
			}
			mustStatus(t, "rows not a range", b.post(ev+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"}, "rows": {"parterre"}}),
				http.StatusUnprocessableEntity)
			if distributionState(t, f) != before {
				t.Fatal("a refused allocation changed something")
			}
			p = mustStatus(t, "allocate seats", b.post(ev+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"},
				"zones": {tc.zones}, "rows": {tc.rows}}), http.StatusOK)
			if got := f.seatsOfChannel(t, swan, ch); got != tc.wantSeats {
				t.Fatalf("%d seats allocated, want %d", got, tc.wantSeats)
			}
			if !strings.Contains(p.Body, fmt.Sprintf("%d seats allocated to %s", tc.wantSeats, tc.name)) {
				t.Errorf("no notice of the allocation:\n%.2000s", p.Body)
			}

			// A window and a timed release, in the venue's time (Moscow).
			start, end, release := time.Now().Add(-time.Hour).In(moscow).Truncate(time.Minute), time.Now().Add(48*time.Hour).In(moscow).Truncate(time.Minute),
				time.Now().Add(72*time.Hour).In(moscow).Truncate(time.Minute)
			local := func(t time.Time) string { return t.Format("2006-01-02T15:04") }
			before = distributionState(t, f)
			p = mustStatus(t, "end before start", b.post(ev+"/terms", url.Values{"channel": {fmt.Sprint(ch)}, "start": {local(end)}, "end": {local(start)}}),
				http.StatusUnprocessableEntity)
			if !strings.Contains(p.Body, "Sales end: must come after the sales start") || !strings.Contains(p.Body, local(end)) {
				t.Errorf("the refused terms do not say why or lost what was typed:\n%.3000s", p.Body)
			}
			mustStatus(t, "not a time", b.post(ev+"/terms", url.Values{"channel": {fmt.Sprint(ch)}, "release_at": {"tomorrow"}}), http.StatusUnprocessableEntity)
			if distributionState(t, f) != before {
				t.Fatal("refused terms changed something")
			}
			p = mustStatus(t, "set terms", b.post(ev+"/terms", url.Values{"channel": {fmt.Sprint(ch)}, "start": {local(start)}, "end": {local(end)},
				"release_at": {local(release)}}), http.StatusOK)
			terms, err := store.GetChannelTerms(ctx, f.DB, swan, ch)
			if err != nil || terms == nil || terms.SalesStart == nil || !terms.SalesStart.Equal(start) || terms.SalesEnd == nil || !terms.SalesEnd.Equal(end) ||
				terms.ReleaseAt == nil || !terms.ReleaseAt.Equal(release) {
				t.Fatalf("terms stored: %+v %v, want %s..%s release %s", terms, err, start, end, release)
			}
			if want := release.Format("2006-01-02 15:04 MST"); !strings.Contains(p.Body, want) {
				t.Errorf("the page does not show the release at %s in the venue's time", want)
			}
			countWorkflows(t, f.Stack, fmt.Sprintf("WorkflowId = '%s' AND ExecutionStatus = 'Running'",
				contract.AllocationReleaseWorkflowID(swan, ch)), 1)

			// A quantity of a general-admission category, then part of it back.
			se := fmt.Sprintf("/cabinet/channels/events/%d", standup)
			mustStatus(t, "allocate a quantity", b.post(se+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"quantity"},
				"category": {fmt.Sprint(gaCategory)}, "quantity": {"20"}}), http.StatusOK)
			quotas, err := store.ListQuotas(ctx, f.DB, standup, ch)
			if err != nil || len(quotas) != 1 || quotas[0].Allocated != 20 {
				t.Fatalf("quotas: %+v %v", quotas, err)
			}
			mustStatus(t, "a quantity past what general sale has", b.post(se+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"quantity"},
				"category": {fmt.Sprint(gaCategory)}, "quantity": {"100000"}}), http.StatusUnprocessableEntity)
			mustStatus(t, "release a quantity", b.post(se+"/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"quota"},
				"quota": {fmt.Sprint(quotas[0].ID)}, "quantity": {"5"}, "confirm": {"yes"}}), http.StatusOK)
			if quotas, _ = store.ListQuotas(ctx, f.DB, standup, ch); quotas[0].Allocated != 15 || quotas[0].Released != 5 {
				t.Fatalf("after releasing 5: %+v", quotas[0])
			}

			// Part: one seat, confirmed only with the checkbox.
			before = distributionState(t, f)
			p = mustStatus(t, "release unconfirmed", b.post(ev+"/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"},
				"seats": {tc.releaseOne}}), http.StatusUnprocessableEntity)
			if !strings.Contains(p.Body, "Tick the box to confirm") || distributionState(t, f) != before {
				t.Fatal("a release without its checkbox was not refused, or changed something")
			}
			mustStatus(t, "release a seat", b.post(ev+"/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"},
				"seats": {tc.releaseOne}, "confirm": {"yes"}}), http.StatusOK)
			if got := f.seatsOfChannel(t, swan, ch); got != tc.wantSeats-1 {
				t.Fatalf("after releasing a seat: %d, want %d", got, tc.wantSeats-1)
			}

			// The channel's partner key sees its allocation and window.
			var share struct{ Data distribution.Share }
			res := f.Get(t, fmt.Sprintf("/v1/events/%d/allocation", swan), key)
			if res.Status != http.StatusOK {
				t.Fatalf("allocation: %d %s", res.Status, res.Body)
			}
			res.Decode(t, &share)
			if share.Data.Channel == nil || share.Data.Channel.Ref != tc.ref || share.Data.Allocation == nil ||
				share.Data.Allocation.Seats.Allocated != tc.wantSeats-1 || share.Data.Allocation.ReleasedSeats != 1 ||
				share.Data.Allocation.ReleaseAt == nil || !share.Data.Allocation.ReleaseAt.Equal(release) || !share.Data.Window.Open {
				t.Fatalf("the partner's allocation: %s", res.Body)
			}

			// The report shows the channel's figures.
			p = mustStatus(t, "report", b.get(fmt.Sprintf("/cabinet/report?event=%d", swan)), http.StatusOK)
			row := regexp.MustCompile(fmt.Sprintf(`(?s)<tr data-channel="%d" data-what="seats">(.*?)</tr>`, ch)).FindStringSubmatch(p.Body)
			if row == nil || !strings.Contains(row[1], tc.name) || !strings.Contains(row[1], fmt.Sprintf("<td>%d</td>", tc.wantSeats-1)) {
				t.Errorf("the report's allocations row: %q", row)
			}

			// Whole: the rest back to general sale, the allocation closed.
			mustStatus(t, "release all", b.post(ev+"/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"whole"}, "confirm": {"yes"}}), http.StatusOK)
			if terms, _ = store.GetChannelTerms(ctx, f.DB, swan, ch); terms.ReleasedAt == nil || f.seatsOfChannel(t, swan, ch) != 0 {
				t.Fatalf("after releasing all: %+v, %d seats", terms, f.seatsOfChannel(t, swan, ch))
			}

			// General sale's window.
			mustStatus(t, "general sale window", b.post(ev+"/general-sale", url.Values{"start": {local(start)}, "end": {""}}), http.StatusOK)
			e, err := store.GetEvent(ctx, f.DB, f.companyA, swan)
			if err != nil || e.SalesStart == nil || !e.SalesStart.Equal(start) || e.SalesEnd != nil {
				t.Fatalf("general sale: %+v %v", e, err)
			}
			_ = window.Window{}

			// Another company's event is 404, as an unknown one.
			mustStatus(t, "another company's event", b.get(fmt.Sprintf("/cabinet/channels/events/%d", f.foreignID)), http.StatusNotFound)
			mustStatus(t, "another company's event, a POST", b.post(fmt.Sprintf("/cabinet/channels/events/%d/release", f.foreignID),
				url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"whole"}, "confirm": {"yes"}}), http.StatusNotFound)

			// A cross-site POST is refused and changes nothing.
			before = distributionState(t, f)
			if p := b.post("/cabinet/channels", url.Values{"ref": {"forged"}, "name": {"Forged"}}, "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
				t.Fatalf("cross-site POST: %d", p.Status)
			}
			if p := b.post(ev+"/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"whole"}, "confirm": {"yes"}},
				"Origin: https://evil.example", "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
				t.Fatalf("cross-site release: %d", p.Status)
			}
			if distributionState(t, f) != before {
				t.Fatal("a cross-site POST changed something")
			}
		})
	}

	// Support, door and developer: 403 on every page and action, nothing changed.
	ch := f.channelID(t, "kassir")
	app := f.applicationID(t, apikey.Sandbox, "kassir-shop")
	ev := fmt.Sprintf("/cabinet/channels/events/%d", swan)
	for _, role := range []organizer.Role{organizer.RoleSupport, organizer.RoleDoor, organizer.RoleDeveloper} {
		t.Run(string(role), func(t *testing.T) {
			b := newBrowserless(t, f.URL, nil)
			b.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, string(role)+"@a.test", role))
			if p := b.get("/cabinet/report"); strings.Contains(p.Body, `href="/cabinet/channels"`) {
				t.Error("the menu offers Channels")
			}
			before := distributionState(t, f)
			for _, rq := range []struct {
				method, path string
				form         url.Values
			}{
				{"GET", "/cabinet/channels", nil},
				{"GET", ev, nil},
				{"POST", "/cabinet/channels", url.Values{"ref": {"mine"}, "name": {"Mine"}}},
				{"POST", "/cabinet/channels/applications", url.Values{"application": {fmt.Sprint(app)}, "channel": {"0"}}},
				{"POST", ev + "/general-sale", url.Values{"start": {""}, "end": {""}}},
				{"POST", ev + "/terms", url.Values{"channel": {fmt.Sprint(ch)}}},
				{"POST", ev + "/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"}, "zones": {"parterre"}}},
				{"POST", ev + "/release", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"whole"}, "confirm": {"yes"}}},
			} {
				status, _, body := b.send(rq.method, rq.path, rq.form)
				if status != http.StatusForbidden || !strings.Contains(body, "does not allow") {
					t.Errorf("%s %s as %s: %d, want 403", rq.method, rq.path, role, status)
				}
			}
			if distributionState(t, f) != before {
				t.Fatalf("refused requests of %s changed something", role)
			}
		})
	}
}

// fitLongChannels are channel names as organizers write them: Cyrillic,
// about 60 characters.
var fitLongChannels = []struct{ ref, name, app string }{
	{"kassir", "Кассир.ру — официальная партнёрская витрина Уральского филиала", "Кассир.ру витрина (продакшн, основной сайт и мобильное приложение)"},
	{"ticketland", "Тикетлэнд: корпоративные продажи и предварительная бронь групп", "ticketland-corporate-presale-storefront"},
	{"yandex-afisha", "Яндекс Афиша — агрегатор, квота на стоячий партер и балкон", "Яндекс Афиша агрегатор"},
	{"box-office", "Касса филармонии на Никитской, окно номер три (наличные и карты)", "Касса филармонии"},
}

// TestCabinetDistributionFits opens the channels page, an event's page
// (every form open) and the report's allocations in Chromium, with
// several channels of long Cyrillic names, their applications,
// allocations of seats and quantities, windows and timed releases, and
// measures them at 1280 and 390 px (measureFit: nothing wider than the
// screen, no squeezed text, every control in sight). Screenshots:
// .data/artifacts/cabinet/channels-*.png, channel-event-*.png,
// report-allocations-*.png.
func TestCabinetDistributionFits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dist := distribution.New(f.DB, nil, nil, distribution.Settings{})
	swan, standup, expo := f.ids["swan-lake"], f.ids["standup"], f.ids["expo"]
	moscow, _ := time.LoadLocation("Europe/Moscow")
	at := func(days int, hm string) *time.Time {
		d := time.Now().In(moscow).AddDate(0, 0, days)
		tt, _ := time.ParseInLocation("2006-01-02 15:04", d.Format("2006-01-02")+" "+hm, moscow)
		return &tt
	}
	var ga, adult int64
	_ = f.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? AND ref = 'ga'", standup).Scan(ctx, &ga)
	_ = f.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? AND ref = 'adult'", expo).Scan(ctx, &adult)
	var session int64
	_ = f.DB.NewRaw("SELECT id FROM sessions WHERE event_id = ? AND ref = 'd1-10'", expo).Scan(ctx, &session)
	rows := []string{"1", "2", "3"}
	for i, c := range fitLongChannels {
		_ = f.KeyIn(t, f.companyA, []string{apikey.Sandbox, apikey.Production}[i%2], c.app)
		ch, _, err := dist.SaveChannel(ctx, f.companyA, c.ref, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := dist.SetApplicationChannel(ctx, f.companyA, []string{apikey.Sandbox, apikey.Production}[i%2], c.app, ch.ID); err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			if _, err := dist.AllocateSeats(ctx, f.companyA, swan, ch.ID, distribution.Selector{Rows: []distribution.RowRange{{Zone: "parterre", From: rows[i], To: rows[i]}}}); err != nil {
				t.Fatal(err)
			}
			if err := dist.SetTerms(ctx, f.companyA, swan, ch.ID, window.Window{Start: at(-2, "10:00"), End: at(8, "19:00")}, at(5, "12:00")); err != nil {
				t.Fatal(err)
			}
			if _, err := dist.SetQuota(ctx, f.companyA, standup, ch.ID, ga, nil, 30+i*10); err != nil {
				t.Fatal(err)
			}
			if _, err := dist.SetQuota(ctx, f.companyA, expo, ch.ID, adult, &session, 5+i); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := dist.Release(ctx, f.companyA, distribution.Release{EventID: swan, ChannelID: f.channelID(t, "ticketland"), SeatIDs: []string{"parterre-2-1", "parterre-2-2"}}); err != nil {
		t.Fatal(err)
	}
	// A hold on an allocated seat through the channel's key.
	kassirKey := f.KeyIn(t, f.companyA, apikey.Sandbox, "kassir-holds")
	if err := dist.SetApplicationChannel(ctx, f.companyA, apikey.Sandbox, "kassir-holds", f.channelID(t, "kassir")); err != nil {
		t.Fatal(err)
	}
	if res := f.reserve(t, kassirKey, "parterre-1-1", "parterre-1-2"); res.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", res.Status, res.Body)
	}

	bctx, run := f.ownerInBrowser(t, "owner.with.a.rather.long.address@festival-productions.example.com")
	_ = run
	fits := func(name, path string, openDetails bool) {
		t.Helper()
		if res, err := chromedp.RunResponse(bctx, chromedp.Navigate(f.URL+path)); err != nil || res.Status != http.StatusOK {
			t.Fatalf("open %s: %v %v", path, res, err)
		}
		if openDetails { // every form of the page shown
			if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(document.querySelectorAll('details').forEach(d => d.open = true), true)`)); err != nil {
				t.Fatal(err)
			}
		}
		pageFits(t, bctx, name, func(t *testing.T, width int64) {
			got, err := chromedp.Run(bctx, chromedp.Evaluate[[]fitViolation](fmt.Sprintf("%s(%d)", measureFit, width)))
			if err != nil {
				t.Fatalf("measure %s: %v", name, err)
			}
			for _, v := range got {
				t.Errorf("%s at %d px: %s: %s: %s (%q)", name, width, v.Rule, v.Selector, v.Detail, v.Text)
			}
		})
	}
	fits("channels", "/cabinet/channels", false)
	fits("channel-event", fmt.Sprintf("/cabinet/channels/events/%d", swan), true)
	fits("channel-event-quantities", fmt.Sprintf("/cabinet/channels/events/%d", expo), true)
	fits("report-allocations", "/cabinet/report", false)
	if n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('#allocations table.counts').length`)); err != nil || n != 3 {
		t.Errorf("the report shows %d allocation tables, want 3 (%v)", n, err)
	}
}

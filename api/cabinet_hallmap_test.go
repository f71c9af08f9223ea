package api_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// seatChannels reads where each of the seats is: its channel's ref, or
// "held" (a live hold or order of general sale), or "" (free, general sale).
func seatChannels(t *testing.T, f *fixture, event int64, seats ...string) map[string]string {
	t.Helper()
	var rows []struct {
		SeatID string `bun:"seat_id"`
		Where  string `bun:"where"`
	}
	if err := f.DB.NewRaw(`SELECT s.seat_id, coalesce(c.ref, CASE WHEN s.state <> 'free' AND (s.hold_expires_at IS NULL OR s.hold_expires_at > now())
			THEN 'held' ELSE '' END) AS "where"
		FROM event_seats s LEFT JOIN channels c ON c.id = s.channel_id WHERE s.event_id = ? AND s.seat_id IN (?)`,
		event, bun.In(seats)).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rows {
		out[r.SeatID] = r.Where
	}
	return out
}

// notice is the page's notice, unescaped.
func notice(p page) string {
	m := regexp.MustCompile(`(?s)id="notice">(.*?)</p>`).FindStringSubmatch(p.Body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestCabinetHallMap: the hall map of the demo hall draws every seat with
// its state, counts them, and allocates and returns seats selected on it
// through the distribution rules, saying in words what stayed and why.
func TestCabinetHallMap(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	swan := f.ids["swan-lake"]
	b := newBrowserless(t, f.URL, nil)
	b.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "finance@a.test", organizer.RoleFinance))
	for _, ch := range [][2]string{{"kassir", "Кассир.ру"}, {"tl", "Тикетлэнд"}} {
		mustStatus(t, "channel", b.post("/cabinet/channels", url.Values{"ref": {ch[0]}, "name": {ch[1]}}), http.StatusOK)
	}
	kassir, tl := f.channelID(t, "kassir"), f.channelID(t, "tl")
	f.reserveFor(t, f.keyA, 15, "parterre-1-3")
	path := fmt.Sprintf("/cabinet/channels/events/%d/map", swan)

	p := mustStatus(t, "map", b.get(path), http.StatusOK)
	for _, want := range []string{`<svg id="hall-map"`, `data-seat="parterre-1-1"`, `class="seat st-held"`, "free, general sale</title>",
		`class="scroll hall`, `role="region" aria-label="Hall map of`, `class="stage"`, `class="zone-label"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the map lacks %q", want)
		}
	}
	var seats int
	if err := f.DB.NewRaw("SELECT count(*) FROM event_seats WHERE event_id = ?", swan).Scan(ctx, &seats); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(p.Body, `r="0.4" class="seat `); n != seats {
		t.Errorf("%d seats drawn, the event sells %d", n, seats)
	}
	if n := strings.Count(p.Body, "</title></circle>"); n != seats {
		t.Errorf("%d seats have a title, want %d", n, seats)
	}
	if !strings.Contains(p.Body, fmt.Sprintf(`<tfoot><tr data-channel="all"><th scope="row">All</th><td>%d</td><td>1</td><td>0</td><td>0</td><td>%d</td>`, seats-1, seats)) {
		t.Errorf("the counts' total row is not %d free, 1 held:\n%s", seats-1, regexp.MustCompile(`(?s)<table class="counts" id="hall-counts">.*?</table>`).FindString(p.Body))
	}

	// Allocate three seats to Кассир.ру: the held one stays.
	p = mustStatus(t, "allocate", b.post(path, url.Values{"action": {"allocate"}, "channel": {fmt.Sprint(kassir)},
		"seats": {"parterre-1-1 parterre-1-2, parterre-1-3"}}), http.StatusOK)
	if got, want := notice(p), "2 seats allocated to Кассир.ру. 1 seat stayed where they were: 1 held."; got != want {
		t.Errorf("notice %q, want %q", got, want)
	}
	if !strings.Contains(p.Body, fmt.Sprintf(`<tr data-channel="%d"><th scope="row" class="text">`, kassir)) ||
		!strings.Contains(p.Body, "free, allocated to Кассир.ру</title>") {
		t.Error("the map does not show Кассир.ру's seats")
	}
	// Overlapping, to Тикетлэнд: Кассир.ру's seat stays its.
	p = mustStatus(t, "allocate again", b.post(path, url.Values{"action": {"allocate"}, "channel": {fmt.Sprint(tl)},
		"seats": {"parterre-1-2 parterre-1-4"}}), http.StatusOK)
	if got, want := notice(p), "1 seat allocated to Тикетлэнд. 1 seat stayed where they were: 1 Кассир.ру's."; got != want {
		t.Errorf("notice %q, want %q", got, want)
	}
	want := map[string]string{"parterre-1-1": "kassir", "parterre-1-2": "kassir", "parterre-1-3": "held", "parterre-1-4": "tl", "parterre-1-5": ""}
	check := func(step string) {
		t.Helper()
		got := seatChannels(t, f, swan, "parterre-1-1", "parterre-1-2", "parterre-1-3", "parterre-1-4", "parterre-1-5")
		for s, w := range want {
			if got[s] != w {
				t.Errorf("%s: seat %s is %q, want %q", step, s, got[s], w)
			}
		}
	}
	check("allocated")

	// Refused: no channel chosen, an unknown seat, a release unconfirmed.
	before := distributionState(t, f)
	for _, form := range []url.Values{
		{"action": {"allocate"}, "seats": {"parterre-1-5"}},
		{"action": {"allocate"}, "channel": {fmt.Sprint(tl)}, "seats": {"parterre-1-5 nowhere-9-9"}},
		{"action": {"release"}, "seats": {"parterre-1-1"}},
		{"action": {"allocate"}, "channel": {fmt.Sprint(tl)}, "seats": {" "}},
	} {
		p = mustStatus(t, "refused", b.post(path, form), http.StatusUnprocessableEntity)
		if !strings.Contains(p.Body, `id="problems"`) || !strings.Contains(p.Body, "Nothing was changed") {
			t.Errorf("%v refused without saying why", form)
		}
		if !strings.Contains(p.Body, html.EscapeString(form.Get("seats"))) {
			t.Errorf("%v: the refused form lost the seats typed", form)
		}
	}
	if !strings.Contains(p.Body, "Seats: select seats on the map") {
		t.Error("an empty selection is not explained")
	}
	if distributionState(t, f) != before {
		t.Fatal("a refused form changed something")
	}

	// Return to general sale: each channel gives back its own.
	p = mustStatus(t, "release", b.post(path, url.Values{"action": {"release"}, "confirm": {"yes"},
		"seats": {"parterre-1-1 parterre-1-4 parterre-1-5"}}), http.StatusOK)
	if got, want := notice(p), "2 seats returned to general sale (from Кассир.ру: 1; Тикетлэнд: 1). 1 seat stayed where they were: 1 general sale's already."; got != want {
		t.Errorf("notice %q, want %q", got, want)
	}
	want["parterre-1-1"], want["parterre-1-4"] = "", ""
	check("released")

	// Every change is in the audit log as the finance user's.
	var n int
	if err := f.DB.NewRaw(`SELECT count(*) FROM audit_log a
		WHERE a.company_id = ? AND a.actor_kind = 'user' AND a.actor = 'finance@a.test' AND a.action IN ('channel.allocate', 'channel.release')`, f.companyA).Scan(ctx, &n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("%d allocation changes audited, want 4 (two allocations, two channels' releases)", n)
	}
	// A general-admission event has no hall: 404.
	mustStatus(t, "no hall", b.get(fmt.Sprintf("/cabinet/channels/events/%d/map", f.ids["standup"])), http.StatusNotFound)
}

// TestCabinetHallMapRace: two organizers allocate overlapping selections
// to different channels at once while a partner holds some of those
// seats: every seat ends in exactly one place, the notices' counts are
// what moved, and no held seat moved.
func TestCabinetHallMapRace(t *testing.T) {
	f := newFixture(t)
	swan := f.ids["swan-lake"]
	owner := newBrowserless(t, f.URL, nil)
	owner.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "owner@a.test", organizer.RoleOwner))
	finance := newBrowserless(t, f.URL, nil)
	finance.accept(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "finance@a.test", organizer.RoleFinance))
	for _, ch := range [][2]string{{"kassir", "Кассир.ру"}, {"tl", "Тикетлэнд"}} {
		mustStatus(t, "channel", owner.post("/cabinet/channels", url.Values{"ref": {ch[0]}, "name": {ch[1]}}), http.StatusOK)
	}
	kassir, tl := f.channelID(t, "kassir"), f.channelID(t, "tl")
	path := fmt.Sprintf("/cabinet/channels/events/%d/map", swan)
	moved := regexp.MustCompile(`^(\d+) seats? allocated to`)
	for round := 1; round <= 6; round++ {
		row := func(from, to int) []string {
			var out []string
			for i := from; i <= to; i++ {
				// Rows 1 to 3 of the stalls, each in two halves of 15.
				out = append(out, fmt.Sprintf("parterre-%d-%d", (round+1)/2, (round+1)%2*15+i))
			}
			return out
		}
		all := row(1, 14)
		var wg sync.WaitGroup
		var ownerPage, financePage page
		var holdStatus int
		wg.Add(3)
		go func() {
			defer wg.Done()
			ownerPage = owner.post(path, url.Values{"action": {"allocate"}, "channel": {fmt.Sprint(kassir)}, "seats": {strings.Join(row(1, 10), " ")}})
		}()
		go func() {
			defer wg.Done()
			financePage = finance.post(path, url.Values{"action": {"allocate"}, "channel": {fmt.Sprint(tl)}, "seats": {strings.Join(row(5, 14), " ")}})
		}()
		go func() {
			defer wg.Done()
			if round%2 == 0 {
				time.Sleep(time.Duration(round) * time.Millisecond) // let an allocation come first
			}
			res, err := testenv.Send(http.DefaultClient, testenv.NewRequest(t, http.MethodPost, f.URL+"/v1/reservations", f.keyA,
				fmt.Sprintf(`{"event_id": %d, "seats": %s}`, swan, seatsJSON(row(4, 11)...)), fmt.Sprintf("Idempotency-Key: hallrace-%d", round)))
			if err == nil {
				holdStatus = res.Status
			}
		}()
		wg.Wait()
		if ownerPage.Status != http.StatusOK || financePage.Status != http.StatusOK {
			t.Fatalf("round %d: %d, %d", round, ownerPage.Status, financePage.Status)
		}
		where := seatChannels(t, f, swan, all...)
		count := map[string]int{}
		for _, s := range all {
			count[where[s]]++
		}
		for _, s := range row(1, 3) {
			if where[s] != "kassir" {
				t.Errorf("round %d: %s only Кассир.ру asked for is %q", round, s, where[s])
			}
		}
		for _, s := range row(12, 14) {
			if where[s] != "tl" {
				t.Errorf("round %d: %s only Тикетлэнд asked for is %q", round, s, where[s])
			}
		}
		if holdStatus == http.StatusCreated {
			// The hold took all its eight seats before either allocation
			// reached them: none of them moved.
			if count["held"] != 8 {
				t.Errorf("round %d: the hold succeeded but %d seats are held: %v", round, count["held"], where)
			}
		} else if count["held"] != 0 {
			t.Errorf("round %d: a refused hold (%d) holds %d seats", round, holdStatus, count["held"])
		}
		if count["kassir"]+count["tl"]+count["held"]+count[""] != len(all) || count[""] != 0 {
			t.Errorf("round %d: seats not each in one place: %v", round, where)
		}
		for _, c := range []struct {
			p   page
			ref string
		}{{ownerPage, "kassir"}, {financePage, "tl"}} {
			m := moved.FindStringSubmatch(notice(c.p))
			if m == nil {
				t.Fatalf("round %d: no notice: %q", round, notice(c.p))
			}
			if n, _ := strconv.Atoi(m[1]); n != count[c.ref] {
				t.Errorf("round %d: the notice says %d moved to %s, %d are there", round, n, c.ref, count[c.ref])
			}
		}
		t.Logf("round %d: hold %d, %v; %q / %q", round, holdStatus, count, notice(ownerPage), notice(financePage))
	}
}

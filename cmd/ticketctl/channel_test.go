package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// demoCompany makes a company with the demo catalog and returns its id and
// its events' ids by ref.
func demoCatalogCompany(t *testing.T, db *bun.DB, name string) (string, map[string]string) {
	t.Helper()
	out, err := ticketctl(t, "company", "create", "--name", name, "--json")
	var co struct{ ID int64 }
	if err != nil || json.Unmarshal([]byte(out), &co) != nil || co.ID == 0 {
		t.Fatalf("company create: %v %s", err, out)
	}
	file := filepath.Join(t.TempDir(), "catalog.json")
	if err := os.WriteFile(file, catalogfile.Demo(time.Now()), 0o600); err != nil {
		t.Fatal(err)
	}
	cid := strconv.FormatInt(co.ID, 10)
	if out, err := ticketctl(t, "catalog", "import", "--company", cid, file); err != nil {
		t.Fatalf("catalog import: %v %s", err, out)
	}
	var rows []struct {
		Ref string
		ID  int64
	}
	if err := db.NewRaw("SELECT ref, id FROM events WHERE company_id = ?", co.ID).Scan(context.Background(), &rows); err != nil {
		t.Fatal(err)
	}
	events := map[string]string{}
	for _, r := range rows {
		events[r.Ref] = strconv.FormatInt(r.ID, 10)
	}
	return cid, events
}

func mustJSON(t *testing.T, out string, err error, v any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
}

// A partner gets its own application by key, the organizer puts it in a
// channel, allocates seats and a quantity to it, sets windows and releases
// — all from ticketctl, each mistake refused with a message and nothing
// changed.
func TestTicketctlChannelsAndAllocations(t *testing.T) {
	db, url := testenv.DB(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	cid, events := demoCatalogCompany(t, db, "Большой театр")
	swan, standup := events["swan-lake"], events["standup"]

	// Keys: --application makes the partner's own; without it, the
	// environment's default application as before.
	var key struct {
		Key         string
		Application string
	}
	out, err := ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--application", "Кассир.ру: сайт", "--json")
	mustJSON(t, out, err, &key)
	if key.Application != "Кассир.ру: сайт" {
		t.Fatalf("key's application: %s", out)
	}
	var plain struct{ Application string }
	out, err = ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--json")
	mustJSON(t, out, err, &plain)
	var apps []string
	if err := db.NewRaw("SELECT a.name FROM applications a JOIN companies c ON c.id = a.company_id WHERE c.id = ? ORDER BY a.name",
		cid).Scan(ctx, &apps); err != nil || plain.Application != "production" || strings.Join(apps, "|") != "production|Кассир.ру: сайт" {
		t.Fatalf("applications %v (%v), default key's %q", apps, err, plain.Application)
	}
	if out, err := ticketctl(t, "key", "create", "--company", cid, "--env", "production", "--application", " padded "); err == nil {
		t.Fatalf("a padded application name accepted: %s", out)
	}

	// Channels.
	if out, err := ticketctl(t, "channel", "create", "--company", cid, "--ref", "Kassir!", "--name", "Кассир.ру"); err == nil ||
		!strings.Contains(err.Error(), "--ref") {
		t.Fatalf("bad ref: %v %s", err, out)
	}
	if out, err := ticketctl(t, "channel", "create", "--company", "999999", "--ref", "kassir", "--name", "Кассир.ру"); err == nil {
		t.Fatalf("channel of no company: %s", out)
	}
	var ch struct {
		ID   int64
		Ref  string
		Name string
	}
	out, err = ticketctl(t, "channel", "create", "--company", cid, "--ref", "kassir", "--name", "Кассир.ру", "--json")
	mustJSON(t, out, err, &ch)
	if ch.Ref != "kassir" || ch.Name != "Кассир.ру" {
		t.Fatalf("channel: %s", out)
	}
	if out, err := ticketctl(t, "channel", "add-app", "--company", cid, "--channel", "kassir", "--env", "production",
		"--application", "Яндекс Афиша"); err == nil || !strings.Contains(err.Error(), `no production application "Яндекс Афиша"`) {
		t.Fatalf("an application nobody made: %v %s", err, out)
	}
	if out, err := ticketctl(t, "channel", "add-app", "--company", cid, "--channel", "ponominalu", "--env", "production",
		"--application", "Кассир.ру: сайт"); err == nil || !strings.Contains(err.Error(), `no channel "ponominalu"`) {
		t.Fatalf("an unknown channel: %v %s", err, out)
	}
	if out, err := ticketctl(t, "channel", "add-app", "--company", cid, "--channel", "kassir", "--env", "production",
		"--application", "Кассир.ру: сайт"); err != nil {
		t.Fatalf("add-app: %v %s", err, out)
	}
	out, err = ticketctl(t, "channel", "list", "--company", cid)
	if err != nil || !strings.Contains(out, "kassir") || !strings.Contains(out, "production/Кассир.ру: сайт") {
		t.Fatalf("channel list: %v\n%s", err, out)
	}
	p, err := apikey.NewAuthenticator(db, 0).Authenticate(ctx, key.Key)
	if err != nil || p.ChannelID != ch.ID {
		t.Fatalf("the partner's key sells in channel %d: %+v %v", ch.ID, p, err)
	}

	// Seats: a zone, a row range and a seat.
	var mv struct{ Moved, Left int }
	alloc := []string{"allocate", "--company", cid, "--event", swan, "--channel", "kassir", "--zone", "balcony",
		"--rows", "parterre:1-2", "--seat", "parterre-3-5", "--json"}
	out, err = ticketctl(t, alloc...)
	mustJSON(t, out, err, &mv)
	if mv.Moved != 6+60+1 || mv.Left != 0 {
		t.Fatalf("allocate: %s", out)
	}
	out, err = ticketctl(t, alloc...)
	mustJSON(t, out, err, &mv)
	if mv.Moved != 0 || mv.Left != 67 {
		t.Fatalf("allocate again moves nothing: %s", out)
	}
	countSeats := func() int {
		var n int
		if err := db.NewRaw("SELECT count(*) FROM event_seats WHERE event_id = ? AND channel_id = ?", swan, ch.ID).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, bad := range [][]string{
		{"--zone", "ложа"}, {"--rows", "parterre:5-7"}, {"--rows", "parterre"}, {"--seat", "parterre-3-99"},
		{"--zone", "balcony", "--category", "1", "--quantity", "2"}, {},
	} {
		args := append([]string{"allocate", "--company", cid, "--event", swan, "--channel", "kassir"}, bad...)
		if out, err := ticketctl(t, args...); err == nil {
			t.Errorf("allocate %v accepted: %s", bad, out)
		}
	}
	if n := countSeats(); n != 67 {
		t.Fatalf("refused allocations changed seats: %d in the channel", n)
	}

	// A quantity of a general-admission category.
	var catID int64
	if err := db.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ?", standup).Scan(ctx, &catID); err != nil {
		t.Fatal(err)
	}
	cat := strconv.FormatInt(catID, 10)
	var q struct {
		Quota struct {
			ID        int64
			Allocated int
		}
	}
	out, err = ticketctl(t, "allocate", "--company", cid, "--event", standup, "--channel", "kassir", "--category", cat, "--quantity", "50", "--json")
	mustJSON(t, out, err, &q)
	if q.Quota.Allocated != 50 {
		t.Fatalf("quota: %s", out)
	}
	if out, err := ticketctl(t, "allocate", "--company", cid, "--event", standup, "--channel", "kassir", "--category", cat,
		"--quantity", "1000"); err == nil || !strings.Contains(err.Error(), "general sale has 200 left") {
		t.Fatalf("more than general sale has: %v %s", err, out)
	}
	if out, err := ticketctl(t, "allocate", "--company", cid, "--event", standup, "--channel", "kassir", "--category", cat); err == nil {
		t.Fatalf("a category without a quantity: %s", out)
	}

	// Windows: general sale's, and the channel's with its timed release.
	if out, err := ticketctl(t, "window", "--company", cid, "--event", swan, "--start", "tomorrow", "--end", ""); err == nil ||
		!strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("a bad time: %v %s", err, out)
	}
	if out, err := ticketctl(t, "window", "--company", cid, "--event", swan, "--start", "2026-12-02T10:00:00+03:00",
		"--end", "2026-12-01T10:00:00+03:00"); err == nil {
		t.Fatalf("an end before the start: %s", out)
	}
	if out, err := ticketctl(t, "window", "--company", cid, "--event", swan, "--start", "", "--end", "", "--release-at", "2026-12-01T10:00:00+03:00"); err == nil {
		t.Fatalf("general sale's release: %s", out)
	}
	if out, err := ticketctl(t, "window", "--company", cid, "--event", swan, "--start", "2026-11-01T10:00:00+03:00", "--end", ""); err != nil {
		t.Fatalf("general sale's window: %v %s", err, out)
	}
	var general struct{ SalesStart, SalesEnd *time.Time }
	if err := db.NewRaw("SELECT sales_start, sales_end FROM events WHERE id = ?", swan).Scan(ctx, &general); err != nil ||
		general.SalesStart == nil || !general.SalesStart.Equal(time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)) || general.SalesEnd != nil {
		t.Fatalf("general sale's window stored: %+v %v", general, err)
	}
	if out, err := ticketctl(t, "window", "--company", cid, "--event", swan, "--channel", "kassir", "--start", "2026-10-25T10:00:00+03:00",
		"--end", "", "--release-at", "2026-11-20T00:00:00+03:00"); err != nil {
		t.Fatalf("channel's window: %v %s", err, out)
	}
	out, err = ticketctl(t, "window", "--company", cid, "--event", swan, "--channel", "kassir", "--start", "2026-10-20T10:00:00+03:00", "--end", "")
	if err != nil || !strings.Contains(out, "releases 2026-11-19T21:00:00Z") {
		t.Fatalf("a new window keeps the release: %v %s", err, out)
	}
	var terms struct{ SalesStart, ReleaseAt *time.Time }
	if err := db.NewRaw("SELECT sales_start, release_at FROM channel_events WHERE event_id = ? AND channel_id = ?", swan, ch.ID).Scan(ctx, &terms); err != nil ||
		terms.ReleaseAt == nil || terms.SalesStart == nil || !terms.SalesStart.Equal(time.Date(2026, 10, 20, 7, 0, 0, 0, time.UTC)) {
		t.Fatalf("channel's terms: %+v %v", terms, err)
	}

	// Releases: a seat, a quantity, then all of it.
	var rel struct {
		Seats      []string
		Quantities map[string]int
	}
	out, err = ticketctl(t, "release", "--company", cid, "--event", swan, "--channel", "kassir", "--seat", "parterre-3-5", "--json")
	mustJSON(t, out, err, &rel)
	if len(rel.Seats) != 1 || countSeats() != 66 {
		t.Fatalf("release a seat: %s", out)
	}
	qid := strconv.FormatInt(q.Quota.ID, 10)
	if out, err := ticketctl(t, "release", "--company", cid, "--event", standup, "--channel", "kassir", "--quota", qid, "--quantity", "51"); err == nil {
		t.Fatalf("more than the quota has: %s", out)
	}
	if out, err := ticketctl(t, "release", "--company", cid, "--event", standup, "--channel", "kassir", "--quota", "999999", "--quantity", "1"); err == nil {
		t.Fatalf("another quota: %s", out)
	}
	out, err = ticketctl(t, "release", "--company", cid, "--event", standup, "--channel", "kassir", "--quota", qid, "--quantity", "10", "--json")
	mustJSON(t, out, err, &rel)
	if rel.Quantities[qid] != 10 {
		t.Fatalf("release a quantity: %s", out)
	}
	out, err = ticketctl(t, "release", "--company", cid, "--event", swan, "--channel", "kassir")
	if err != nil || !strings.Contains(out, "released as a whole: 66 seats") || countSeats() != 0 {
		t.Fatalf("release all: %v %s", err, out)
	}

	// Out of the channel: the key sells in general sale only.
	if out, err := ticketctl(t, "channel", "remove-app", "--company", cid, "--channel", "kassir", "--env", "production",
		"--application", "Кассир.ру: сайт"); err != nil {
		t.Fatalf("remove-app: %v %s", err, out)
	}
	var list []struct{ Applications []any }
	out, err = ticketctl(t, "channel", "list", "--company", cid, "--json")
	mustJSON(t, out, err, &list)
	if len(list) != 1 || len(list[0].Applications) != 0 {
		t.Fatalf("channel list after remove-app: %s", out)
	}
}

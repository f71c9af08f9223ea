package api_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
)

// deskText is a page's text without tags, spaces folded.
func deskText(body string) string {
	return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " "))), " ")
}

// ticketCard is the door desk's card of a ticket found.
func ticketCard(t *testing.T, body, number string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<article class="card desk-ticket" data-ticket="` + regexp.QuoteMeta(number) + `".*?</article>`).FindString(body)
	if m == "" {
		t.Fatalf("no card of %s on the page:\n%s", number, body)
	}
	return m
}

// TestCabinetDoorDesk: the door role finds a ticket by number, barcode
// and the buyer's Cyrillic name (no e-mail, no phone shown), admits it by
// hand with a reason (recorded with the user, announced as a scan's
// admission), is refused a refunded ticket with the scanner's answer,
// undoes the admission (the figures drop it) and admits again; the
// refused scans list each outcome in words, filtered; another company's
// tickets are not found; a cross-site form is refused.
func TestCabinetDoorDesk(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	prodDoor, _ := f.Key(t, f.companyA, apikey.Production, apikey.ScopeCheckin)
	order, ts := f.paidTickets(t, f.keyA, "parterre-2-11", "parterre-2-12")
	if _, err := f.DB.NewRaw(`UPDATE orders SET customer_first_name = 'Анастасия', customer_last_name = 'Волконская-Трубецкая' WHERE id = ?`,
		order).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	refunded, rts := f.paidTickets(t, f.keyA, "parterre-2-13")
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", refunded), f.keyA, `{"reason": "не сможет прийти"}`, idemKey(t)); res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}

	base := f.ProductionLikeAPI(t)
	b := newBrowserless(t, base, nil)
	link := cabinetUserAs(t, f.Stack, base, f.companyA, "door@a.test", organizer.RoleDoor)
	if p := b.get(link); p.Status != http.StatusOK {
		t.Fatalf("link: %d", p.Status)
	}
	if p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}}); p.Status != http.StatusOK ||
		p.URL.Path != "/cabinet/checkin" {
		t.Fatalf("the door role lands on %s (%d)", p.URL, p.Status)
	}
	desk := fmt.Sprintf("/cabinet/door?event=%d&env=sandbox", event)
	where := url.Values{"event": {fmt.Sprint(event)}, "env": {"sandbox"}}
	form := func(ticket int64, kv ...string) url.Values {
		v := url.Values{"ticket": {fmt.Sprint(ticket)}}
		for k, x := range where {
			v[k] = x
		}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}

	// Lookups: by number, barcode, and the beginning of a Cyrillic first
	// or last name in another case.
	for _, q := range []string{ts[0].Number, strings.ToLower(ts[0].Number), ts[0].Barcode, "анаст", "ВОЛКОН", "волконская-трубецкая анастасия"} {
		p := b.get(desk + "&q=" + url.QueryEscape(q))
		if p.Status != http.StatusOK {
			t.Fatalf("search %q: %d\n%s", q, p.Status, p.Body)
		}
		card := deskText(ticketCard(t, p.Body, ts[0].Number))
		if !strings.Contains(card, "Holder Анастасия Волконская-Трубецкая") || !strings.Contains(card, "Valid, not admitted yet") ||
			!strings.Contains(card, fmt.Sprintf("Order %d", order)) {
			t.Errorf("search %q: the card says %q", q, card)
		}
		if strings.Contains(p.Body, "anna@example.com") || strings.Contains(p.Body, "999 123") {
			t.Fatalf("the door desk shows the buyer's e-mail or phone:\n%s", p.Body)
		}
	}
	// A buyer of the same name in the other environment: not found by
	// name; by number the ticket is marked, its holder not shown.
	prodSales, _ := f.Key(t, f.companyA, apikey.Production)
	prodOrder, pts := f.paidTickets(t, prodSales, "parterre-3-5")
	if _, err := f.DB.NewRaw(`UPDATE orders SET customer_first_name = 'Анастасия', customer_last_name = 'Волконская-Трубецкая' WHERE id = ?`,
		prodOrder).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if p := b.get(desk + "&q=" + url.QueryEscape("анаст")); strings.Contains(p.Body, `data-ticket="`+pts[0].Number+`"`) {
		t.Errorf("the sandbox desk finds a real buyer by name:\n%s", deskText(p.Body))
	}
	if card := deskText(ticketCard(t, b.get(desk+"&q="+pts[0].Number).Body, pts[0].Number)); !strings.Contains(card, "A real ticket") ||
		strings.Contains(card, "Анастасия") || strings.Contains(card, "Волконская") || !strings.Contains(card, "not shown") {
		t.Errorf("the real ticket on the sandbox desk: %q", card)
	}
	if p := b.get(desk + "&q=" + rts[0].Number); !strings.Contains(deskText(ticketCard(t, p.Body, rts[0].Number)), "Refunded: do not admit") {
		t.Errorf("the refunded ticket's card:\n%s", ticketCard(t, p.Body, rts[0].Number))
	}

	// A manual admission needs a reason; then it admits, recorded with the
	// user and the reason, and announced as a scan's admission.
	if p := b.post("/cabinet/door/admit", form(ts[0].ID, "gate", "Главный вход", "reason", "  ")); p.Status != http.StatusUnprocessableEntity ||
		!strings.Contains(deskText(p.Body), "Not admitted: say why") {
		t.Fatalf("admission without a reason: %d\n%s", p.Status, p.Body)
	}
	var rows int
	if err := f.DB.NewRaw("SELECT count(*) FROM check_ins").Scan(ctx, &rows); err != nil || rows != 0 {
		t.Fatalf("a refused form recorded %d rows (%v)", rows, err)
	}
	p := b.post("/cabinet/door/admit", form(ts[0].ID, "q", ts[0].Number, "gate", "Главный вход", "reason", "сканер сломался"))
	if p.Status != http.StatusOK || !strings.Contains(deskText(p.Body), ts[0].Number+" is admitted at gate Главный вход") ||
		!strings.Contains(deskText(ticketCard(t, p.Body, ts[0].Number)), "at gate Главный вход") || !strings.Contains(p.Body, fmt.Sprintf(`id="undo-%d"`, ts[0].ID)) {
		t.Fatalf("manual admission: %d\n%s", p.Status, p.Body)
	}
	var rec struct {
		Outcome  string  `bun:"outcome"`
		Email    string  `bun:"email"`
		Reason   string  `bun:"reason"`
		APIKeyID *int64  `bun:"api_key_id"`
		Gate     string  `bun:"gate"`
		Event    *string `bun:"event"`
	}
	if err := f.DB.NewRaw(`SELECT c.outcome, u.email, c.reason, c.api_key_id, c.gate,
			(SELECT type FROM webhook_events WHERE type = 'ticket.checked_in' AND (snapshot->>'ticket_id')::bigint = c.ticket_id) AS event
		FROM check_ins c JOIN cabinet_users u ON u.id = c.cabinet_user_id WHERE c.ticket_id = ?`, ts[0].ID).Scan(ctx, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Outcome != "admitted" || rec.Email != "door@a.test" || rec.Reason != "сканер сломался" || rec.APIKeyID != nil ||
		rec.Gate != "Главный вход" || rec.Event == nil {
		t.Fatalf("the manual admission's record: %+v", rec)
	}
	// The same rules as a scan: admitted already, refunded.
	if p := b.post("/cabinet/door/admit", form(ts[0].ID, "gate", "Главный вход", "reason", "ещё раз")); p.Status != http.StatusConflict ||
		!strings.Contains(deskText(p.Body), "Not admitted: "+ts[0].Number+": Already admitted") {
		t.Fatalf("admitting twice: %d\n%s", p.Status, deskText(p.Body))
	}
	scanned := f.scan(t, door, event, rts[0].Barcode, "North")
	p = b.post("/cabinet/door/admit", form(rts[0].ID, "gate", "Главный вход", "reason", "покупатель настаивает"))
	if p.Status != http.StatusConflict || !strings.Contains(deskText(p.Body), "Void: refunded, or its order cancelled (a scanner is answered "+scanned.Data.Outcome+")") ||
		scanned.Data.Outcome != "void" {
		t.Fatalf("admitting a refunded ticket: %d (the scanner got %s)\n%s", p.Status, scanned.Data.Outcome, deskText(p.Body))
	}

	// Undo: a reason again; the ticket is admissible, the figures drop it;
	// an undo of a ticket not admitted is refused.
	if p := b.post("/cabinet/door/undo", form(ts[0].ID)); p.Status != http.StatusUnprocessableEntity {
		t.Fatalf("undo without a reason: %d", p.Status)
	}
	figures := func() string {
		return deskText(b.get(fmt.Sprintf("/cabinet/checkin?event=%d&env=sandbox", event)).Body)
	}
	if fg := figures(); !strings.Contains(fg, "Admitted 1 Expected 2") {
		t.Fatalf("figures after the admission: %s", fg)
	}
	p = b.post("/cabinet/door/undo", form(ts[0].ID, "q", ts[0].Number, "reason", "впустили по ошибке"))
	if p.Status != http.StatusOK || !strings.Contains(deskText(p.Body), "The admission is undone") ||
		!strings.Contains(deskText(ticketCard(t, p.Body, ts[0].Number)), "Valid, not admitted yet") {
		t.Fatalf("undo: %d\n%s", p.Status, deskText(p.Body))
	}
	if fg := figures(); !strings.Contains(fg, "Admitted 0 Expected 2") {
		t.Fatalf("figures after the undo: %s", fg)
	}
	if p := b.post("/cabinet/door/undo", form(ts[0].ID, "reason", "ещё раз")); p.Status != http.StatusConflict ||
		!strings.Contains(deskText(p.Body), "not admitted now") {
		t.Fatalf("undo twice: %d", p.Status)
	}
	// Admissible again: a scanner admits it, and it is announced again.
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" || got.Data.FirstCheckIn != nil {
		t.Fatalf("scan after the undo: %+v", got.Data)
	}
	var announced int
	if err := f.DB.NewRaw(`SELECT count(*) FROM webhook_events WHERE type = 'ticket.checked_in' AND (snapshot->>'ticket_id')::bigint = ?`,
		ts[0].ID).Scan(ctx, &announced); err != nil || announced != 2 {
		t.Fatalf("ticket.checked_in events: %d (%v)", announced, err)
	}

	// The company's audit log has the admission by hand and the undo, as
	// the door keeper's, with their reasons.
	expectAudit(t, f, f.companyA, "door@a.test", map[string]string{"door.admit": "", "door.undo": "впустили по ошибке"})

	// The refused scans: each outcome in words, filtered.
	f.scan(t, door, event, ts[0].Barcode, "South")               // already_checked_in
	f.scan(t, door, event, "4006381333931", "South")             // unknown
	f.scan(t, door, f.ids["standup"], ts[1].Barcode, "South")    // wrong_event at another event
	f.scan(t, door, event, ts[1].Barcode, "South")               // admitted: not listed
	f.scan(t, prodDoor, event, ts[1].Barcode, "Production gate") // sandbox, at the real door
	log := deskText(b.get(desk).Body)
	for _, want := range []string{
		"Already admitted: the ticket is inside", "Unknown: no ticket of yours has this code", "4006381333931",
		"Void: refunded, or its order cancelled (by hand: покупатель настаивает)", "Door desk: door@a.test",
		rts[0].Number + " Void: refunded, or its order cancelled",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the refused scans lack %q:\n%s", want, log)
		}
	}
	p = b.get(desk + "&outcome=unknown")
	if n := strings.Count(p.Body, `<tr data-outcome="unknown"`); n != 1 || strings.Contains(p.Body, `data-outcome="void"`) {
		t.Errorf("filtered by unknown: %d rows\n%s", n, deskText(p.Body))
	}
	if other := b.get(fmt.Sprintf("/cabinet/door?event=%d&outcome=wrong_event", f.ids["standup"])).Body; strings.Contains(other, `data-outcome="wrong_event"`) {
		// the production desk of the other event has no sandbox scans
		t.Errorf("the production desk of standup shows sandbox scans:\n%s", deskText(other))
	}
	if w := b.get(fmt.Sprintf("/cabinet/door?event=%d&env=sandbox&outcome=wrong_event", f.ids["standup"])).Body; !regexp.MustCompile(
		`(?s)<tr data-outcome="wrong_event".*?Wrong event: a ticket of another event`).MatchString(w) {
		t.Errorf("wrong_event in the log:\n%s", deskText(w))
	}
	if pr := deskText(b.get(fmt.Sprintf("/cabinet/door?event=%d", event)).Body); !strings.Contains(pr, "Sandbox: a test ticket at a real door") ||
		!strings.Contains(pr, "Production gate") {
		t.Errorf("sandbox at the real door in the production log:\n%s", pr)
	}

	// Another company's user finds none of these tickets and acts on none.
	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(ctx, &companyB); err != nil {
		t.Fatal(err)
	}
	bb := newBrowserless(t, base, nil)
	bb.setPassword(cabinetUser(t, f.Stack, base, companyB, "door@b.test"))
	for _, q := range []string{ts[1].Number, ts[1].Barcode, "анаст"} {
		p := bb.get(fmt.Sprintf("/cabinet/door?event=%d&q=%s", f.foreignID, url.QueryEscape(q)))
		if p.Status != http.StatusOK || strings.Contains(p.Body, `data-ticket="`+ts[1].Number) || !strings.Contains(p.Body, `id="no-tickets"`) {
			t.Errorf("company B searching %q: %d\n%s", q, p.Status, deskText(p.Body))
		}
	}
	if p := bb.get(desk); p.Status != http.StatusNotFound {
		t.Errorf("company B on A's desk: %d", p.Status)
	}
	if p := bb.post("/cabinet/door/admit", url.Values{"event": {fmt.Sprint(f.foreignID)}, "ticket": {fmt.Sprint(ts[1].ID)},
		"gate": {"X"}, "reason": {"чужой"}}); p.Status != http.StatusNotFound {
		t.Errorf("company B admitting A's ticket: %d", p.Status)
	}
	if p := bb.post("/cabinet/door/undo", url.Values{"event": {fmt.Sprint(f.foreignID)}, "ticket": {fmt.Sprint(ts[1].ID)},
		"reason": {"чужой"}}); p.Status != http.StatusNotFound {
		t.Errorf("company B undoing A's ticket: %d", p.Status)
	}
	// A form posted from another site is refused; nothing changes.
	if p := b.post("/cabinet/door/undo", form(ts[1].ID, "reason", "подделка"), "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
		t.Fatalf("cross-site undo: %d", p.Status)
	}
	var inside bool
	if err := f.DB.NewRaw("SELECT inside FROM tickets WHERE id = ?", ts[1].ID).Scan(ctx, &inside); err != nil || !inside {
		t.Fatalf("the cross-site undo changed the ticket (inside %v, %v)", inside, err)
	}
}

// TestDoorUndoRace: many undos of one admission at once: one undoes it,
// every other is told the ticket is not admitted, and one undo is
// recorded.
func TestDoorUndoRace(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-14")
	users := organizer.New(f.DB, nil, organizer.Limits{})
	u, _, err := users.CreateUser(ctx, f.companyA, "door@a.test", organizer.RoleDoor)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
			t.Fatalf("round %d: scan %+v", round, got.Data)
		}
		const n = 24
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = store.UndoCheckIn(ctx, f.DB, store.Undo{CompanyID: f.companyA, IsTest: true, EventID: event,
					TicketID: ts[0].ID, UserID: u.ID, Reason: fmt.Sprintf("гонка %d", i)})
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrNotAdmitted):
				t.Fatalf("round %d: undo: %v", round, err)
			}
		}
		var undos int
		var inside bool
		var at *string
		if err := f.DB.NewRaw(`SELECT (SELECT count(*) FROM check_ins WHERE ticket_id = t.id AND outcome = 'undone'), t.inside, t.checked_in_at::text
			FROM tickets t WHERE t.id = ?`, ts[0].ID).Scan(ctx, &undos, &inside, &at); err != nil {
			t.Fatal(err)
		}
		if won != 1 || undos != round+1 || inside || at != nil {
			t.Fatalf("round %d: %d undos won, %d recorded, inside %v, checked in at %v", round, won, undos, inside, at)
		}
	}
}

// TestCabinetDoorKeyReplace: the door role replaces a lost scanner's door
// key from the desk: a confirmation page, then the old key is refused
// (401) and the new one, shown once, scans at the same event and gate.
// Partner keys are not the desk's; a sandbox door key stays marked.
func TestCabinetDoorKeyReplace(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	gate := "Северный вход"
	old, hash, prefix := apikey.Generate(apikey.Production)
	k, err := store.CreateAPIKey(ctx, f.DB, f.companyA, apikey.Production, "Сканер 3", hash, prefix,
		[]string{apikey.ScopeCheckin}, store.DoorLimits{EventID: &event, Gate: &gate}, store.KeyClaim{})
	if err != nil {
		t.Fatal(err)
	}
	_, sandboxID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, partnerID := f.Key(t, f.companyA, apikey.Production)
	_, ts := f.paidTickets(t, prod, "parterre-2-15", "parterre-2-16")
	if got := f.scan(t, old, event, ts[0].Barcode, gate); got.Data.Outcome != "admitted" {
		t.Fatalf("the old key: %+v", got.Data)
	}

	base := f.ProductionLikeAPI(t)
	b := newBrowserless(t, base, nil)
	link := cabinetUserAs(t, f.Stack, base, f.companyA, "door@a.test", organizer.RoleDoor)
	b.get(link)
	b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	desk := b.get("/cabinet/door")
	if !strings.Contains(desk.Body, fmt.Sprintf(`id="replace-%d"`, k.ID)) || strings.Contains(desk.Body, fmt.Sprintf(`data-key-id="%d"`, partnerID)) {
		t.Fatalf("the desk's door keys:\n%s", desk.Body)
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?s)<tr data-key-id="%d">.*?SANDBOX — test tickets only.*?</tr>`, sandboxID)).MatchString(desk.Body) {
		t.Errorf("the sandbox door key is not marked on the desk")
	}
	if p := b.get(fmt.Sprintf("/cabinet/door/keys/%d/replace", sandboxID)); !strings.Contains(p.Body, "SANDBOX — test tickets only") {
		t.Errorf("the sandbox door key's confirmation:\n%s", p.Body)
	}
	for _, id := range []int64{partnerID, 999999999} {
		if p := b.get(fmt.Sprintf("/cabinet/door/keys/%d/replace", id)); p.Status != http.StatusNotFound {
			t.Errorf("replace key %d: %d, want 404", id, p.Status)
		}
		if p := b.post(fmt.Sprintf("/cabinet/door/keys/%d/replace", id), url.Values{"confirm": {"x"}}); p.Status != http.StatusNotFound {
			t.Errorf("POST replace key %d: %d, want 404", id, p.Status)
		}
	}
	path := fmt.Sprintf("/cabinet/door/keys/%d/replace", k.ID)
	confirm := b.get(path)
	token := regexp.MustCompile(`name="token" value="([0-9a-f]{32})"`).FindStringSubmatch(confirm.Body)
	if confirm.Status != http.StatusOK || token == nil || !strings.Contains(deskText(confirm.Body), "Door Swan Lake") {
		t.Fatalf("confirmation: %d\n%s", confirm.Status, confirm.Body)
	}
	// Without the confirmation nothing happens; from another site neither.
	if p := b.post(path, url.Values{"token": {token[1]}}); p.Status != http.StatusBadRequest {
		t.Fatalf("replace without confirming: %d", p.Status)
	}
	if p := b.post(path, url.Values{"token": {token[1]}, "confirm": {k.KeyPrefix}}, "Sec-Fetch-Site: cross-site"); p.Status != http.StatusForbidden {
		t.Fatalf("cross-site replace: %d", p.Status)
	}
	if _, revoked := keyState(t, f.Stack, k.ID); revoked {
		t.Fatal("a refused replacement revoked the key")
	}
	created := b.post(path, url.Values{"token": {token[1]}, "confirm": {k.KeyPrefix}})
	m := regexp.MustCompile(`id="new-key" type="text" readonly value="([^"]+)" data-key-id="(\d+)"`).FindStringSubmatch(created.Body)
	if created.Status != http.StatusOK || created.URL.Path != "/cabinet/door/keys/created" || m == nil ||
		!strings.Contains(deskText(created.Body), "Door key: Swan Lake (event "+fmt.Sprint(event)+"), gate "+gate) {
		t.Fatalf("the new key: %d %s\n%s", created.Status, created.URL, created.Body)
	}
	if _, revoked := keyState(t, f.Stack, k.ID); !revoked {
		t.Fatal("the old key is not revoked")
	}
	var made store.APIKey
	if err := f.DB.NewRaw(`SELECT * FROM api_keys WHERE id = ?`, m[2]).
		Scan(ctx, &made); err != nil {
		t.Fatal(err)
	}
	if made.CheckinEventID == nil || *made.CheckinEventID != event || made.CheckinGate == nil || *made.CheckinGate != gate ||
		made.ApplicationID != k.ApplicationID || strings.Join(made.Scopes, ",") != apikey.ScopeCheckin {
		t.Fatalf("the new key: %+v, the old %+v", made, k)
	}
	// Shown once; the form sent again makes nothing more.
	if p := b.get("/cabinet/door/keys/created"); strings.Contains(p.Body, m[1]) {
		t.Fatal("the new key is shown twice")
	}
	var keys int
	count := func() int {
		if err := f.DB.NewRaw("SELECT count(*) FROM api_keys").Scan(ctx, &keys); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	before := count()
	if p := b.post(path, url.Values{"token": {token[1]}, "confirm": {k.KeyPrefix}}); p.Status != http.StatusOK || count() != before ||
		strings.Contains(p.Body, m[1]) {
		t.Fatalf("the form sent again: %d, %d keys, %d before", p.Status, count(), before)
	}
	// The same form sent for another door key: refused in words, the key
	// stays live, nothing is made.
	_, hash2, prefix2 := apikey.Generate(apikey.Production)
	k2, err := store.CreateAPIKey(ctx, f.DB, f.companyA, apikey.Production, "Сканер 4", hash2, prefix2,
		[]string{apikey.ScopeCheckin}, store.DoorLimits{EventID: &event, Gate: &gate}, store.KeyClaim{})
	if err != nil {
		t.Fatal(err)
	}
	before = count()
	if p := b.post(fmt.Sprintf("/cabinet/door/keys/%d/replace", k2.ID), url.Values{"token": {token[1]}, "confirm": {k2.KeyPrefix}}); p.Status != http.StatusConflict ||
		!strings.Contains(deskText(p.Body), "that form replaced another key already") || count() != before {
		t.Fatalf("the form sent for another key: %d, %d keys, %d before\n%s", p.Status, count(), before, deskText(p.Body))
	}
	if _, revoked := keyState(t, f.Stack, k2.ID); revoked {
		t.Fatal("the refused replacement revoked the other key")
	}
	// The old key is refused, the new one scans at the same door.
	res := f.Do(t, http.MethodPost, "/v1/check-ins", old, fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": %q}`, ts[1].Barcode, event, gate), idemKey(t))
	if res.Status != http.StatusUnauthorized {
		t.Fatalf("the old key: %d %s", res.Status, res.Body)
	}
	if got := f.scan(t, m[1], event, ts[1].Barcode, gate); got.Data.Outcome != "admitted" || got.Data.Gate != gate {
		t.Fatalf("the new key: %+v", got.Data)
	}
	expectProblem(t, f.Do(t, http.MethodPost, "/v1/check-ins", m[1], fmt.Sprintf(`{"barcode": %q, "event_id": %d, "gate": "Юг"}`, ts[1].Barcode, event), idemKey(t)),
		http.StatusForbidden, "door_key_elsewhere")
	expectAudit(t, f, f.companyA, "door@a.test", map[string]string{"door.replace_key": ""})
}

// expectAudit fails unless the company's audit log has, for each action, a
// row by the user with that e-mail whose detail's reason contains want.
func expectAudit(t *testing.T, f *fixture, company int64, email string, want map[string]string) {
	t.Helper()
	for action, reason := range want {
		var n int
		if err := f.DB.NewRaw(`SELECT count(*) FROM audit_log WHERE company_id = ? AND action = ? AND actor = ?
			AND coalesce(detail->>'reason', '') LIKE '%' || ? || '%'`, company, action, email, reason).Scan(context.Background(), &n); err != nil || n == 0 {
			var rows []string
			_ = f.DB.NewRaw(`SELECT action || ' by ' || actor || ': ' || detail::text FROM audit_log WHERE company_id = ? ORDER BY id`, company).Scan(context.Background(), &rows)
			t.Fatalf("no %s by %s with reason %q in the audit log (%v): %q", action, email, reason, err, rows)
		}
	}
}

// TestDoorUndoBeforeOfflineUpload: an offline entry made before an undo
// and uploaded after it is recorded, as the undo withdrew it: it puts the
// ticket neither back inside nor sets its first admission, counts in no
// figure and conflicts with nothing. That holds for one made while the
// undone admission stood (between its receipt and the undo's) and for
// one older than that admission; one made after the undo admits, and is
// the first admission, also when its device asks again.
func TestDoorUndoBeforeOfflineUpload(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, doorID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-17")
	u, _, err := organizer.New(f.DB, nil, organizer.Limits{}).CreateUser(ctx, f.companyA, "door@a.test", organizer.RoleDoor)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	// Made while the North admission stood.
	between := time.Now().Truncate(time.Microsecond)
	time.Sleep(20 * time.Millisecond)
	undo, err := store.UndoCheckIn(ctx, f.DB, store.Undo{CompanyID: f.companyA, IsTest: true, EventID: event, TicketID: ts[0].ID,
		UserID: u.ID, Reason: "впустили по ошибке"})
	if err != nil {
		t.Fatal(err)
	}
	offline := func(at time.Time) store.ScanResult {
		t.Helper()
		res, err := store.CheckIn(ctx, f.DB, store.Scan{CompanyID: f.companyA, APIKeyID: doorID, IsTest: true, EventID: event, Barcode: ts[0].Barcode,
			Gate: "East", DeviceID: "dev-5", Direction: "in", ScannedAt: at, Offline: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	recorded := func(at time.Time) *store.RecordedScan {
		t.Helper()
		rec, err := store.GetOfflineCheckIn(ctx, f.DB, f.companyA, true, event, "dev-5", ts[0].Barcode, at)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	for _, at := range []time.Time{between, time.Now().Add(-time.Minute).Truncate(time.Microsecond)} {
		res := offline(at)
		if res.Outcome != "admitted" || res.First || res.Conflict != "" {
			t.Fatalf("offline entry at %s, before the undo: %+v", at, res)
		}
		var undoneBy *int64
		if err := f.DB.NewRaw("SELECT undone_by FROM check_ins WHERE id = ?", res.CheckInID).Scan(ctx, &undoneBy); err != nil {
			t.Fatal(err)
		}
		if undoneBy == nil || *undoneBy != undo {
			t.Fatalf("offline entry at %s: undone by %v, want the undo %d", at, undoneBy, undo)
		}
		if s := readDoorState(t, f, event, ts[0].ID, true); s.inside || s.admitted || s.category != 0 || s.gates["East"] != 0 || s.conflicts != 0 {
			t.Fatalf("an entry made before the undo moved the ticket or the figures: %+v", s)
		}
		if rec := recorded(at); rec.First || rec.Conflict != "" {
			t.Fatalf("offline entry at %s as recorded: %+v", at, rec)
		}
	}
	var events int
	if err := f.DB.NewRaw(`SELECT count(*) FROM webhook_events WHERE type = 'ticket.check_in_conflict'`).Scan(ctx, &events); err != nil || events != 0 {
		t.Fatalf("%d conflicts announced (%v)", events, err)
	}
	after := time.Now().Add(time.Second).Truncate(time.Microsecond)
	later := offline(after)
	if later.Outcome != "admitted" || !later.First || later.Conflict != "" {
		t.Fatalf("offline entry after the undo: %+v", later)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); !s.inside || !s.admitted || s.category != 1 || s.gates["East"] != 1 {
		t.Fatalf("the entry after the undo did not admit: %+v", s)
	}
	// The device uploads it again: the same answer, the first admission.
	if rec := recorded(after); rec.Outcome != "admitted" || !rec.First {
		t.Fatalf("the entry after the undo as recorded: %+v", rec)
	}
}

// doorState is a ticket's state at the door and its figures: inside,
// admitted (checked_in_at set), and its event's admitted figures per
// category and per gate.
type doorState struct {
	inside, admitted bool
	category         int64
	gates            map[string]int64
	conflicts        int
}

func readDoorState(t *testing.T, f *fixture, event, ticket int64, isTest bool) doorState {
	t.Helper()
	ctx := context.Background()
	var s doorState
	if err := f.DB.NewRaw("SELECT inside, checked_in_at IS NOT NULL FROM tickets WHERE id = ?", ticket).Scan(ctx, &s.inside, &s.admitted); err != nil {
		t.Fatal(err)
	}
	fg, err := store.GetCheckInFigures(ctx, f.DB, store.CheckInFilter{CompanyID: f.companyA, EventID: event, IsTest: isTest,
		Bin: time.Hour, ConflictWindow: time.Hour, MaxConflicts: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fg.Categories {
		s.category += c.Admitted
	}
	s.gates = map[string]int64{}
	for _, g := range fg.Gates {
		s.gates[g.Gate] = g.Admitted
	}
	s.conflicts = len(fg.Conflicts)
	return s
}

// TestDoorUndoneAdmissionIsNoPass: an admission undone at the desk is no
// pass a later scan is judged against: the copy refused beside it is no
// conflict any more, and an offline entry made after the undo is no
// admitted_while_inside conflict, announced to nobody.
func TestDoorUndoneAdmissionIsNoPass(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	r := newReceiver(t)
	f.subscribe(t, f.keyA, r)
	door, doorID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-18")
	u, _, err := organizer.New(f.DB, nil, organizer.Limits{}).CreateUser(ctx, f.companyA, "door@a.test", organizer.RoleDoor)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "South"); got.Data.Outcome != "already_checked_in" {
		t.Fatalf("second scan: %+v", got.Data)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); s.conflicts != 1 {
		t.Fatalf("the copy before the undo: %+v", s)
	}
	if _, err := store.UndoCheckIn(ctx, f.DB, store.Undo{CompanyID: f.companyA, IsTest: true, EventID: event, TicketID: ts[0].ID,
		UserID: u.ID, Reason: "впустили по ошибке"}); err != nil {
		t.Fatal(err)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); s.conflicts != 0 || s.inside || s.admitted || s.category != 0 || s.gates["North"] != 0 {
		t.Fatalf("after the undo: %+v", s)
	}
	east, err := store.CheckIn(ctx, f.DB, store.Scan{CompanyID: f.companyA, APIKeyID: doorID, IsTest: true, EventID: event, Barcode: ts[0].Barcode,
		Gate: "East", DeviceID: "dev-7", Direction: "in", ScannedAt: time.Now().Add(time.Second), Offline: true})
	if err != nil || east.Outcome != "admitted" || !east.First || east.Conflict != "" {
		t.Fatalf("the offline entry after the undo: %+v %v", east, err)
	}
	var conflicts, events int
	if err := f.DB.NewRaw(`SELECT (SELECT count(*) FROM check_ins WHERE ticket_id = ? AND conflict IS NOT NULL),
			(SELECT count(*) FROM webhook_events WHERE type = 'ticket.check_in_conflict')`, ts[0].ID).Scan(ctx, &conflicts, &events); err != nil {
		t.Fatal(err)
	}
	if conflicts != 0 || events != 0 {
		t.Fatalf("%d conflicts recorded, %d announced", conflicts, events)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); !s.inside || !s.admitted || s.category != 1 || s.gates["East"] != 1 || s.conflicts != 0 {
		t.Fatalf("after the entry at East: %+v", s)
	}
}

// TestDoorUndoAfterLateExit: an offline exit uploaded late, made before
// the ticket's current admission (it moved nothing), does not hide that
// admission from an undo: the undo withdraws it, and the figures drop it.
func TestDoorUndoAfterLateExit(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["swan-lake"]
	door, doorID := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	_, ts := f.paidTickets(t, f.keyA, "parterre-2-19")
	u, _, err := organizer.New(f.DB, nil, organizer.Limits{}).CreateUser(ctx, f.companyA, "door@a.test", organizer.RoleDoor)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.scan(t, door, event, ts[0].Barcode, "North"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	exit, err := store.CheckIn(ctx, f.DB, store.Scan{CompanyID: f.companyA, APIKeyID: doorID, IsTest: true, EventID: event, Barcode: ts[0].Barcode,
		Gate: "East", DeviceID: "dev-9", Direction: "out", ScannedAt: time.Now().Add(-time.Minute), Offline: true})
	if err != nil || exit.Outcome != "exited" {
		t.Fatalf("the late exit: %+v %v", exit, err)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); !s.inside || !s.admitted {
		t.Fatalf("the late exit moved the ticket: %+v", s)
	}
	undo, err := store.UndoCheckIn(ctx, f.DB, store.Undo{CompanyID: f.companyA, IsTest: true, EventID: event, TicketID: ts[0].ID,
		UserID: u.ID, Reason: "впустили по ошибке"})
	if err != nil {
		t.Fatal(err)
	}
	var undoneBy *int64
	if err := f.DB.NewRaw("SELECT undone_by FROM check_ins WHERE ticket_id = ? AND outcome = 'admitted'", ts[0].ID).Scan(ctx, &undoneBy); err != nil {
		t.Fatal(err)
	}
	if s := readDoorState(t, f, event, ts[0].ID, true); s.inside || s.admitted || s.category != 0 || s.gates["North"] != 0 ||
		undoneBy == nil || *undoneBy != undo {
		t.Fatalf("after the undo: %+v, the admission undone by %v (the undo %d)", s, undoneBy, undo)
	}
}

// TestDoorUndoOtherSession: the desk of one session of a scheduled event
// does not undo the admission of a ticket of another session.
func TestDoorUndoOtherSession(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	ctx := context.Background()
	event := f.ids["expo"]
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	var sessions struct{ Data []struct{ ID int64 } }
	f.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", event), f.keyA).Decode(t, &sessions)
	var cats struct{ Data []category }
	f.Get(t, fmt.Sprintf("/v1/events/%d/categories", event), f.keyA).Decode(t, &cats)
	first, second := sessions.Data[0].ID, sessions.Data[1].ID
	res := f.Do(t, http.MethodPost, "/v1/orders", f.keyA, fmt.Sprintf(`{"event_id": %d, "schedule_slot_id": %d,
		"items": [{"ticket_category_id": %d, "quantity": 1}], "customer": %s, "payment": "external"}`,
		event, first, cats.Data[0].ID, customer), idemKey(t))
	var ob orderBody
	res.Decode(t, &ob)
	if res := f.confirm(t, f.keyA, ob.Data.ID, ob.Data.Amount.Amount); res.Status != http.StatusOK {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	var ts struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", ob.Data.ID), f.keyA).Decode(t, &ts)
	if got := f.scan(t, door, event, ts.Data[0].Barcode, "Hall"); got.Data.Outcome != "admitted" {
		t.Fatalf("scan: %+v", got.Data)
	}
	u, _, err := organizer.New(f.DB, nil, organizer.Limits{}).CreateUser(ctx, f.companyA, "door@a.test", organizer.RoleDoor)
	if err != nil {
		t.Fatal(err)
	}
	undo := func(session int64) error {
		_, err := store.UndoCheckIn(ctx, f.DB, store.Undo{CompanyID: f.companyA, IsTest: true, EventID: event, SessionID: session,
			TicketID: ts.Data[0].ID, UserID: u.ID, Reason: "не тот сеанс"})
		return err
	}
	if err := undo(second); !errors.Is(err, store.ErrOtherSession) {
		t.Fatalf("the second session's desk: %v", err)
	}
	if s := readDoorState(t, f, event, ts.Data[0].ID, true); !s.inside || !s.admitted {
		t.Fatalf("the refused undo moved the ticket: %+v", s)
	}
	if err := undo(first); err != nil {
		t.Fatalf("its own session's desk: %v", err)
	}
}

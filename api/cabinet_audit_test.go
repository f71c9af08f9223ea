package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/organizer"
)

// auditRow is a row of the audit log as the test reads it.
type auditRow struct {
	Action    string `bun:"action"`
	ActorKind string `bun:"actor_kind"`
	Actor     string `bun:"actor"`
	Subject   string `bun:"subject"`
}

// auditRows lists the company's audit rows, oldest first.
func auditRows(t *testing.T, f *fixture, company int64) []auditRow {
	t.Helper()
	var out []auditRow
	if err := f.DB.NewRaw("SELECT action, actor_kind, actor, subject FROM audit_log WHERE company_id = ? ORDER BY id", company).
		Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// hasAudit reports whether rows hold action by actor (and subject
// containing about, if given).
func hasAudit(rows []auditRow, action, actor, about string) bool {
	for _, r := range rows {
		if r.Action == action && r.Actor == actor && strings.Contains(r.Subject, about) {
			return true
		}
	}
	return false
}

// TestCabinetAuditLog: every action the log covers, done through the
// cabinet's own handlers by the role that may, is one row naming who did
// it, to what; a partner's refund through the API is the key's. The owner
// reads them newest first, filtered by action and by person; another role
// gets 403; another company's owner sees none of them.
func TestCabinetAuditLog(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	withOutbox(t, f)
	f.StartWorker(t)
	ctx := context.Background()

	owner := newBrowserless(t, f.URL, nil)
	joinAs(t, owner, cabinetUser(t, f.Stack, f.URL, f.companyA, "owner@a.test"))
	finance := newBrowserless(t, f.URL, nil)
	joinAs(t, finance, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "money@a.test", organizer.RoleFinance))
	support := newBrowserless(t, f.URL, nil)
	joinAs(t, support, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "desk@a.test", organizer.RoleSupport))
	dev := newBrowserless(t, f.URL, nil)
	joinAs(t, dev, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "dev@a.test", organizer.RoleDeveloper))
	door := newBrowserless(t, f.URL, nil)
	joinAs(t, door, cabinetUserAs(t, f.Stack, f.URL, f.companyA, "door@a.test", organizer.RoleDoor))

	must := func(step string, p page, path string) {
		t.Helper()
		if p.Status != http.StatusOK || (path != "" && p.URL.Path != path) {
			t.Fatalf("%s: %d %s %q\n%.1500s", step, p.Status, p.URL, noticeOf(p), p.Body)
		}
	}

	// Orders: finance refunds, support cancels, notes, corrects, resends;
	// a partner refunds through the API.
	refunded := f.paidOrder(t, f.keyA, "parterre-2-1")
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", refunded), f.keyA).Decode(t, &tb)
	token, _ := actionToken(t, finance, refunded, "refund")
	must("refund", finance.post(fmt.Sprintf("/cabinet/orders/%d/refund", refunded), url.Values{"token": {token},
		"ticket": {fmt.Sprint(tb.Data[0].ID)}, "reason": {"Покупатель заболел"}}),
		fmt.Sprintf("/cabinet/orders/%d", refunded))
	byAPI := f.paidOrder(t, f.keyA, "parterre-2-2")
	if res := f.refund(t, byAPI); res.Status >= 300 {
		t.Fatalf("the API's refund: %d %s", res.Status, res.Body)
	}
	unpaid := f.externalOrder(t, f.keyA, "parterre-2-3")
	token, _ = actionToken(t, support, unpaid.ID, "cancel")
	must("cancel", support.post(fmt.Sprintf("/cabinet/orders/%d/cancel", unpaid.ID), url.Values{"token": {token}}), "")
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	sold := f.paidOrder(t, prod, "parterre-2-4")
	path := fmt.Sprintf("/cabinet/orders/%d", sold)
	token, _ = formToken(t, support, path, noteTokenRE)
	must("note", support.post(path+"/notes", url.Values{"token": {token}, "note": {"Звонила, просит переслать билеты"}}), path)
	token, _ = formToken(t, support, path, emailTokenRE)
	must("e-mail", support.post(path+"/email", url.Values{"token": {token}, "email": {"anna.new@example.org"}}), path)
	token, _ = actionToken(t, support, sold, "resend")
	must("resend", support.post(path+"/resend", url.Values{"token": {token}}), path)

	// Keys and webhooks: the developer.
	must("create a key", dev.post("/cabinet/keys", dev.withKeyFormToken(url.Values{"environment": {"sandbox"}, "name": {"Касса на входе"},
		"kind": {"partner"}, "scopes": {"orders:read"}})), "/cabinet/keys/created")
	_, keyID := f.Key(t, f.companyA, apikey.Sandbox)
	prefix, _ := keyState(t, f.Stack, keyID)
	must("revoke a key", dev.post(fmt.Sprintf("/cabinet/keys/%d/revoke", keyID), url.Values{"confirm": {prefix}}), "")
	p := dev.createEndpointForm("sandbox", "https://hooks.example.org/audit", "Партнёр", "order.created")
	must("create an endpoint", p, "")
	var endpoint int64
	if err := f.DB.NewRaw("SELECT id FROM webhook_endpoints WHERE url = 'https://hooks.example.org/audit'").Scan(ctx, &endpoint); err != nil {
		t.Fatal(err)
	}
	endpointPath := fmt.Sprintf("/cabinet/webhooks/%d", endpoint)
	must("rotate", dev.post(endpointPath+"/rotate-secret", nil), "")
	must("disable", dev.post(endpointPath+"/disable", nil), "")
	must("enable", dev.post(endpointPath+"/enable", nil), "")
	must("edit", dev.post(endpointPath, url.Values{"url": {"https://hooks.example.org/audit"}, "description": {"Партнёр, правка"},
		"event_types": {"order.paid"}}), endpointPath)

	// Channels: finance; the catalog, the zone and the team: the owner.
	must("a channel", finance.post("/cabinet/channels", url.Values{"ref": {"kassir"}, "name": {"Кассир.ру"}}), "")
	f.KeyIn(t, f.companyA, apikey.Sandbox, "kassir-shop")
	ch := f.channelID(t, "kassir")
	must("an application", finance.post("/cabinet/channels/applications", url.Values{"application": {fmt.Sprint(f.applicationID(t, apikey.Sandbox, "kassir-shop"))},
		"channel": {fmt.Sprint(ch)}}), "")
	ev := fmt.Sprintf("/cabinet/channels/events/%d", f.ids["swan-lake"])
	must("allocate", finance.post(ev+"/allocate", url.Values{"channel": {fmt.Sprint(ch)}, "kind": {"seats"}, "zones": {"balcony"}}), "")
	must("terms", finance.post(ev+"/terms", url.Values{"channel": {fmt.Sprint(ch)}, "end": {time.Now().Add(48 * time.Hour).Format("2006-01-02T15:04")}}), "")
	example := owner.get("/cabinet/catalog/example.json")
	must("upload", owner.upload("example.json", []byte(example.Body)), "")
	must("zone", owner.post("/cabinet/report/timezone", url.Values{"timezone": {"Asia/Yekaterinburg"}}), "")
	must("invite", owner.post("/cabinet/team/invite", url.Values{"email": {"new@a.test"}, "role": {"support"}}), "/cabinet/team")
	must("role", owner.post(fmt.Sprintf("/cabinet/team/%d/role", memberID(t, f.Stack, "desk@a.test")), url.Values{"role": {"finance"}}), "/cabinet/team")
	must("remove", owner.post(fmt.Sprintf("/cabinet/team/%d/remove", memberID(t, f.Stack, "dev@a.test")), url.Values{}), "/cabinet/team")
	must("leave", door.post("/cabinet/account/leave", url.Values{}), "/cabinet/signin")
	// A wrong password: the person's company sees it.
	stranger := newBrowserless(t, f.URL, nil)
	if p := stranger.post("/cabinet/signin", url.Values{"email": {"money@a.test"}, "password": {"not the password"}}); p.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %d", p.Status)
	}

	rows := auditRows(t, f, f.companyA)
	for _, want := range []struct{ action, actor, about string }{
		{"order.refund", "money@a.test", fmt.Sprintf("order %d", refunded)},
		{"order.cancel", "desk@a.test", fmt.Sprintf("order %d", unpaid.ID)},
		{"order.note", "desk@a.test", fmt.Sprintf("order %d", sold)},
		{"order.email", "desk@a.test", fmt.Sprintf("order %d", sold)},
		{"order.resend", "desk@a.test", fmt.Sprintf("order %d", sold)},
		{"key.create", "dev@a.test", "(Касса на входе)"},
		{"key.revoke", "dev@a.test", prefix},
		{"webhook.create", "dev@a.test", "https://hooks.example.org/audit"},
		{"webhook.rotate_secret", "dev@a.test", "https://hooks.example.org/audit"},
		{"webhook.disable", "dev@a.test", "https://hooks.example.org/audit"},
		{"webhook.enable", "dev@a.test", "https://hooks.example.org/audit"},
		{"channel.save", "money@a.test", "channel kassir"},
		{"channel.application", "money@a.test", "kassir-shop"},
		{"channel.allocate", "money@a.test", fmt.Sprintf("event %d, channel %d", f.ids["swan-lake"], ch)},
		{"channel.terms", "money@a.test", fmt.Sprintf("event %d, channel %d", f.ids["swan-lake"], ch)},
		{"webhook.edit", "dev@a.test", "https://hooks.example.org/audit"},
		{"catalog.upload", "owner@a.test", "catalog"},
		{"company.timezone", "owner@a.test", "Asia/Yekaterinburg"},
		{"team.invite", "owner@a.test", "new@a.test"},
		{"team.role", "owner@a.test", "desk@a.test"},
		{"team.remove", "owner@a.test", "dev@a.test"},
		{"team.leave", "door@a.test", "door@a.test"},
		{"signin.ok", "owner@a.test", "owner@a.test"},
		{"signin.failed", "money@a.test", "money@a.test"},
	} {
		if !hasAudit(rows, want.action, want.actor, want.about) {
			t.Errorf("no %s by %s about %q in the log:\n%+v", want.action, want.actor, want.about, rows)
		}
	}
	var keyRefund int
	if err := f.DB.NewRaw(`SELECT count(*) FROM audit_log WHERE company_id = ? AND action = 'order.refund' AND actor_kind = 'key'
		AND actor_key_id IS NOT NULL AND subject = ?`, f.companyA, fmt.Sprintf("order %d", byAPI)).Scan(ctx, &keyRefund); err != nil {
		t.Fatal(err)
	}
	if keyRefund != 1 {
		t.Errorf("the API's refund: %d rows of the key's", keyRefund)
	}
	// One row per action, however it got there.
	counts := map[string]int{}
	for _, r := range rows {
		counts[r.Action]++
	}
	for _, a := range []string{"order.cancel", "order.note", "order.email", "order.resend", "key.revoke", "webhook.rotate_secret", "company.timezone"} {
		if counts[a] != 1 {
			t.Errorf("%d rows of %s", counts[a], a)
		}
	}

	// The page: the owner's, newest first, in the company's zone.
	page := owner.get("/cabinet/audit")
	must("the audit page", page, "/cabinet/audit")
	if !strings.Contains(page.Body, "Asia/Yekaterinburg") || !regexp.MustCompile(`\d\d:\d\d:\d\d (\+|&#43;)05<`).MatchString(page.Body) {
		t.Errorf("the page does not show times in the company's zone:\n%.3000s", page.Body[strings.Index(page.Body, "<main"):])
	}
	first := regexp.MustCompile(`data-action="([a-z_.]+)"`).FindAllStringSubmatch(page.Body, -1)
	if len(first) == 0 || first[0][1] != "signin.failed" {
		t.Errorf("the newest row first: %v", first)
	}
	page = owner.get("/cabinet/audit?action=key.revoke")
	if got := regexp.MustCompile(`data-action="([a-z_.]+)"`).FindAllStringSubmatch(page.Body, -1); len(got) != 1 || got[0][1] != "key.revoke" {
		t.Errorf("filtered by action: %v", got)
	}
	page = owner.get(fmt.Sprintf("/cabinet/audit?person=%d", memberID(t, f.Stack, "dev@a.test")))
	for _, m := range regexp.MustCompile(`data-actor-kind="user">([^<]+)`).FindAllStringSubmatch(page.Body, -1) {
		if strings.TrimSpace(m[1]) != "dev@a.test" {
			t.Errorf("filtered by the developer, a row of %q", m[1])
		}
	}
	if !strings.Contains(page.Body, "webhook.rotate_secret") {
		t.Errorf("the developer's rows miss the rotation")
	}
	if p := owner.get("/cabinet/audit?action=nonsense"); p.Status != http.StatusUnprocessableEntity || !strings.Contains(noticeOf(p), "Choose one of the actions") {
		t.Errorf("an unknown action: %d %q", p.Status, noticeOf(p))
	}
	// Paged: 50 a page, the next older through ?before.
	for i := range 60 {
		if _, err := f.DB.ExecContext(ctx, `INSERT INTO audit_log (company_id, actor_kind, actor, action, subject) VALUES (?, 'system', 'system', 'channel.release', ?)`,
			f.companyA, fmt.Sprintf("filler %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	page = owner.get("/cabinet/audit")
	older := regexp.MustCompile(`href="(/cabinet/audit\?before=\d+)"[^>]*id="older"`).FindStringSubmatch(page.Body)
	if n := strings.Count(page.Body, "data-audit-id="); n != 50 || older == nil {
		t.Fatalf("the first page: %d rows, older link %v", n, older)
	}
	next := owner.get(strings.ReplaceAll(older[1], "&amp;", "&"))
	if !strings.Contains(next.Body, "owner@a.test") || strings.Contains(next.Body, "filler 59") {
		t.Errorf("the older page does not go on where the first ended")
	}

	// Roles: nobody but the owner.
	for who, b := range map[string]*browserless{"finance": finance, "support (now finance)": support} {
		if p := b.get("/cabinet/audit"); p.Status != http.StatusForbidden {
			t.Errorf("%s opened the audit log: %d", who, p.Status)
		}
	}
	// Another company's owner sees none of it, nor can filter by A's people.
	var companyB int64
	if err := f.DB.NewRaw("SELECT id FROM companies WHERE name = 'B'").Scan(ctx, &companyB); err != nil {
		t.Fatal(err)
	}
	other := newBrowserless(t, f.URL, nil)
	joinAs(t, other, cabinetUser(t, f.Stack, f.URL, companyB, "owner@b.test"))
	page = other.get("/cabinet/audit")
	must("B's audit page", page, "/cabinet/audit")
	for _, leak := range []string{"a.test", "hooks.example.org", "Кассир"} {
		if strings.Contains(strings.ReplaceAll(page.Body, "owner@b.test", ""), leak) {
			t.Errorf("B's audit page shows %q", leak)
		}
	}
	if p := other.get(fmt.Sprintf("/cabinet/audit?person=%d", memberID(t, f.Stack, "dev@a.test"))); p.Status != http.StatusUnprocessableEntity ||
		strings.Contains(p.Body, "dev@a.test") {
		t.Errorf("B filtered by A's developer: %d", p.Status)
	}
}

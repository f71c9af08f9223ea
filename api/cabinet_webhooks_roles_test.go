package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// webhooksOpen is which roles open the webhooks pages at all (the
// webhooks permission), written out rather than asked of the code.
func webhooksOpen(role organizer.Role) bool {
	return role == organizer.RoleOwner || role == organizer.RoleDeveloper
}

// webhookEnvAllowed is the decision (docs/decisions.md, "A key carries at
// most its maker's rights"), written out: managing an environment's
// endpoints is a webhooks:write key's reach and reading its payloads an
// orders:read key's, so the owner does both everywhere and a developer in
// sandbox only.
func webhookEnvAllowed(role organizer.Role, env string) bool {
	switch role {
	case organizer.RoleOwner:
		return true
	case organizer.RoleDeveloper:
		return env == apikey.Sandbox
	}
	return false
}

// TestCabinetWebhookRightsFollowTheEnvironment: every role, in both
// environments, against an endpoint with a delivered order event whose
// payload names its buyer. Where the role may not manage the environment's
// endpoints the pages show no control and every action, sent as a forged
// POST, is 403 and changes no row; where it may, the controls are there and
// the actions are served. The payload shows exactly where the role may read
// the environment's buyers; the delivery's status and attempts show to
// anyone who opens the page.
func TestCabinetWebhookRightsFollowTheEnvironment(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	company := s.Company(t, "Acme")
	base, _ := outboxInstance(t, s)
	const buyer = "maria.ivanova@buyer.test"

	type envHook struct{ path, delivery string }
	hooks := map[string]envHook{}
	for _, env := range []string{apikey.Sandbox, apikey.Production} {
		// Made in the store: no address is resolved and, with no worker
		// here, nothing is ever sent.
		e := &store.WebhookEndpoint{CompanyID: company, IsTest: env == apikey.Sandbox, URL: "https://93.184.215.14/" + env,
			Description: env + " receiver", Secret: "whsec_" + env, Enabled: true}
		if err := store.CreateWebhookEndpoint(ctx, s.DB, e, 10); err != nil {
			t.Fatal(err)
		}
		event := "evt_rights_" + env
		payload := fmt.Sprintf(`{"type": "order.paid", "data": {"id": 1, "customer": {"email": %q, "phone": "+7 999 000-00-00"}}}`, buyer)
		if _, err := s.DB.ExecContext(ctx, `INSERT INTO webhook_events (id, type, company_id, is_test, payload, dispatched_at)
			VALUES (?, 'order.paid', ?, ?, ?::jsonb, now())`, event, company, e.IsTest, payload); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB.ExecContext(ctx, `INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, last_attempt_at, last_status, delivered_at)
			VALUES (?, ?, 'delivered', 1, now(), 200, now())`, event, e.ID); err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/cabinet/webhooks/%d", e.ID)
		hooks[env] = envHook{path: path, delivery: path + "/deliveries/" + event}
	}
	// What a refused action must leave as it was: every endpoint, event
	// and delivery, whole.
	fingerprint := func() string {
		t.Helper()
		var sum string
		if err := s.DB.NewRaw(`SELECT md5(concat_ws('|',
			(SELECT string_agg(e::text, ',' ORDER BY e.id) FROM webhook_endpoints e),
			(SELECT string_agg(v::text, ',' ORDER BY v.id) FROM webhook_events v),
			(SELECT string_agg(d::text, ',' ORDER BY d.event_id, d.endpoint_id) FROM webhook_deliveries d)))`).Scan(ctx, &sum); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		return sum
	}

	for _, role := range organizer.Roles {
		t.Run(string(role), func(t *testing.T) {
			b := newBrowserless(t, base, nil)
			b.accept(cabinetUserAs(t, s, base, company, "hooks-"+string(role)+"@acme.test", role))
			for _, env := range []string{apikey.Sandbox, apikey.Production} {
				h, allowed := hooks[env], webhookEnvAllowed(role, env)
				list, ep, delivery := b.get("/cabinet/webhooks"), b.get(h.path), b.get(h.delivery)
				if !webhooksOpen(role) {
					for _, p := range []page{list, ep, delivery} {
						if p.Status != http.StatusForbidden || strings.Contains(p.Body, buyer) {
							t.Errorf("%s opening %s: %d, want 403", role, p.URL.Path, p.Status)
						}
					}
				} else {
					for _, p := range []page{list, ep, delivery} {
						if p.Status != http.StatusOK {
							t.Fatalf("%s opening %s: %d\n%.500s", role, p.URL.Path, p.Status, p.Body)
						}
					}
					// The controls: present exactly where allowed.
					for _, c := range []struct {
						p    page
						mark string
					}{{list, `id="env-` + env + `"`}, {ep, `id="edit-endpoint-form"`}, {ep, `id="disable"`}, {ep, `id="rotate-secret"`},
						{ep, `id="send-test"`}, {delivery, `id="redeliver"`}} {
						if got := strings.Contains(c.p.Body, c.mark); got != allowed {
							t.Errorf("%s on the %s %s: %s shown %v, want %v", role, env, c.p.URL.Path, c.mark, got, allowed)
						}
					}
					if got := strings.Contains(ep.Body, `id="manage-withheld"`); got == allowed {
						t.Errorf("%s on the %s endpoint: says it is an owner's %v", role, env, got)
					}
					// The payload: shown exactly where allowed; the
					// delivery's facts always.
					if got := strings.Contains(delivery.Body, buyer); got != allowed {
						t.Errorf("%s reading a %s delivery: the buyer's e-mail shown %v, want %v", role, env, got, allowed)
					}
					if got := strings.Contains(delivery.Body, `id="payload"`); got != allowed {
						t.Errorf("%s reading a %s delivery: the payload shown %v, want %v", role, env, got, allowed)
					}
					if got := strings.Contains(delivery.Body, `id="payload-withheld"`); got == allowed {
						t.Errorf("%s reading a %s delivery: says the payload is withheld %v", role, env, got)
					}
					if !strings.Contains(delivery.Body, `id="delivery-status" class="status">`) || !strings.Contains(delivery.Body, "order.paid") ||
						!strings.Contains(delivery.Body, "<dt>Attempts</dt><dd>1</dd>") {
						t.Errorf("%s reading a %s delivery: its facts are missing\n%s", role, env, delivery.Body)
					}
					if strings.Contains(ep.Body, buyer) || strings.Contains(list.Body, buyer) {
						t.Errorf("%s: the endpoint or the list shows a payload", role)
					}
				}

				// Every action, as a POST sent by hand.
				token := fmt.Sprintf("%032x", len(role)*10+len(env)) // no page: one made up
				if m := formTokenRe.FindStringSubmatch(list.Body); m != nil {
					token = m[1]
				}
				actions := []struct {
					path string
					form url.Values
				}{
					{h.path, url.Values{"url": {"https://93.184.215.14/edited"}, "description": {"edited by " + string(role)}}},
					{h.path + "/disable", url.Values{}},
					{h.path + "/enable", url.Values{}},
					{h.path + "/rotate-secret", url.Values{}},
					{h.path + "/test", url.Values{}},
					{h.delivery + "/redeliver", url.Values{}},
					{"/cabinet/webhooks", url.Values{"token": {token}, "environment": {env}, "url": {"https://93.184.215.14/new"},
						"description": {"added by " + string(role)}}},
				}
				for _, a := range actions {
					before := fingerprint()
					status, loc, body := b.send(http.MethodPost, a.path, a.form)
					if !allowed {
						if status != http.StatusForbidden || strings.Contains(body, buyer) {
							t.Errorf("%s: POST %s (%s): %d %s, want 403", role, a.path, env, status, loc)
						}
						if fingerprint() != before {
							t.Errorf("%s: POST %s (%s) was refused but changed the data", role, a.path, env)
						}
						continue
					}
					if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/cabinet/webhooks") {
						t.Errorf("%s: POST %s (%s): %d %s, want served\n%.500s", role, a.path, env, status, loc, body)
					}
				}
				if allowed {
					var description string
					if err := s.DB.NewRaw("SELECT description FROM webhook_endpoints WHERE id = ?",
						strings.TrimPrefix(h.path, "/cabinet/webhooks/")).Scan(ctx, &description); err != nil || description != "edited by "+string(role) {
						t.Errorf("%s: the %s endpoint after an allowed edit: %q %v", role, env, description, err)
					}
				}
			}
		})
	}
}

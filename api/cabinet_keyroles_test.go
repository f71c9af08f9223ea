package api_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// keyScopeAllowed is the decision (docs/decisions.md, "A key carries at
// most its maker's rights"), written out here rather than asked of the
// code under test: the owner gives any scope; a developer any scope on a
// sandbox key, and on a production key only catalog:read and
// webhooks:read; finance, support and door make no keys at all.
func keyScopeAllowed(role organizer.Role, env, scope string) bool {
	switch role {
	case organizer.RoleOwner:
		return true
	case organizer.RoleDeveloper:
		return env == apikey.Sandbox || scope == apikey.ScopeCatalogRead || scope == apikey.ScopeWebhooksRead
	}
	return false
}

// offeredScopes reads the scopes the key form offers for a partner key of
// the environment (its checkboxes), and whether it offers a door key there.
func offeredScopes(t *testing.T, body, env string) (scopes []string, door bool) {
	t.Helper()
	for _, m := range regexp.MustCompile(`<input type="checkbox" name="scopes_`+env+`" value="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		scopes = append(scopes, html.UnescapeString(m[1]))
	}
	return scopes, strings.Contains(body, `id="door-`+env+`"`)
}

// TestCabinetKeyScopesFollowTheRole: through the cabinet, every role asks
// for a key of every scope in both environments. A key is made exactly
// when the role may give that scope there, carrying that scope alone; a
// refusal says which scope and who can make the key, and makes nothing.
// The form offers exactly what the role may give, and a forged POST asking
// for a scope the form did not offer (in the form's own field, or the
// generic one) is refused the same way.
func TestCabinetKeyScopesFollowTheRole(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := context.Background()
	company := s.Company(t, "Acme")
	base, _ := outboxInstance(t, s)
	keys := func() int {
		t.Helper()
		var n int
		if err := s.DB.NewRaw("SELECT count(*) FROM api_keys").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	scopesOf := func(key string) []string {
		t.Helper()
		var scopes string
		if err := s.DB.NewRaw("SELECT array_to_string(scopes, ',') FROM api_keys WHERE key_hash = ?", apikey.Hash(key)).Scan(ctx, &scopes); err != nil {
			t.Fatalf("the new key's scopes: %v", err)
		}
		return strings.Split(scopes, ",")
	}

	for _, role := range organizer.Roles {
		t.Run(string(role), func(t *testing.T) {
			b := newBrowserless(t, base, nil)
			b.accept(cabinetUserAs(t, s, base, company, "keys-"+string(role)+"@acme.test", role))
			keysPage := b.get("/cabinet/keys")
			if !role.Can(organizer.PermKeys) {
				if keysPage.Status != http.StatusForbidden {
					t.Fatalf("the keys page as %s: %d, want 403", role, keysPage.Status)
				}
			} else {
				// The form offers what the role may give, and nothing else.
				for _, env := range []string{apikey.Sandbox, apikey.Production} {
					var want []string
					for _, sc := range apikey.PartnerScopes {
						if keyScopeAllowed(role, env, sc) {
							want = append(want, sc)
						}
					}
					got, door := offeredScopes(t, keysPage.Body, env)
					if !slices.Equal(got, want) || door != keyScopeAllowed(role, env, apikey.ScopeCheckin) {
						t.Errorf("the %s form of the %s role offers %v and door key %v; want %v and %v", env, role, got, door, want,
							keyScopeAllowed(role, env, apikey.ScopeCheckin))
					}
				}
			}

			for _, env := range []string{apikey.Sandbox, apikey.Production} {
				for _, scope := range apikey.AllScopes {
					form := url.Values{"environment": {env}, "name": {fmt.Sprintf("%s %s %s", role, env, scope)}, "kind": {"partner"},
						"scopes": {scope}}
					if scope == apikey.ScopeCheckin {
						form.Set("kind", "door")
					}
					before := keys()
					var p page
					if role.Can(organizer.PermKeys) {
						p = b.postKeyForm(form)
					} else {
						// No page, so no token of its own: one made up.
						form.Set("token", fmt.Sprintf("%032x", len(role)+len(env)+len(scope)))
						p = b.post("/cabinet/keys", form)
					}
					switch allowed := keyScopeAllowed(role, env, scope); {
					case allowed:
						key := newKeyOn(t, p)
						if !strings.HasPrefix(key, "tk_"+env+"_") || !slices.Equal(scopesOf(key), []string{scope}) {
							t.Errorf("%s asking a %s key of %s got %s with %v", role, env, scope, key[:14], scopesOf(key))
						}
					case !role.Can(organizer.PermKeys):
						if p.Status != http.StatusForbidden || !strings.Contains(p.Body, "does not allow") {
							t.Errorf("%s asking a %s key of %s: %d, want 403\n%.500s", role, env, scope, p.Status, p.Body)
						}
					default:
						text := html.UnescapeString(p.Body)
						if p.Status != http.StatusForbidden || p.URL.Path != "/cabinet/keys" || !strings.Contains(text, scope) ||
							!strings.Contains(text, "An owner can make this key") || strings.Contains(p.Body, `id="new-key"`) {
							t.Errorf("%s asking a %s key of %s: %d %s, want 403 on the keys page naming it\n%.3000s", role, env, scope, p.Status, p.URL, p.Body)
						}
					}
					if n := keys(); n != before+map[bool]int{true: 1}[keyScopeAllowed(role, env, scope)] {
						t.Errorf("%s asking a %s key of %s: %d keys, %d before", role, env, scope, n, before)
					}
				}
			}
		})
	}

	// A developer sends the form's own production field with scopes it
	// did not offer, beside one it did: refused whole, nothing made.
	dev := newBrowserless(t, base, nil)
	dev.accept(cabinetUserAs(t, s, base, company, "forger@acme.test", organizer.RoleDeveloper))
	before := keys()
	p := dev.postKeyForm(url.Values{"environment": {"production"}, "name": {"forged"}, "kind": {"partner"},
		"scopes_production": {apikey.ScopeCatalogRead, apikey.ScopeOrdersRead, apikey.ScopeOrdersWrite}})
	text := html.UnescapeString(p.Body)
	if p.Status != http.StatusForbidden || !strings.Contains(text, "orders:read, orders:write") || strings.Contains(text, "catalog:read, orders") {
		t.Fatalf("a forged production form: %d\n%.3000s", p.Status, p.Body)
	}
	if n := keys(); n != before {
		t.Fatalf("a refused form made %d keys", n-before)
	}
	// What the form offers it makes; the key reads the catalog and
	// nothing of orders.
	key := newKeyOn(t, dev.postKeyForm(url.Values{"environment": {"production"}, "name": {"catalog"}, "kind": {"partner"},
		"scopes_production": {apikey.ScopeCatalogRead, apikey.ScopeWebhooksRead}, "scopes_sandbox": apikey.PartnerScopes}))
	if got := scopesOf(key); !slices.Equal(got, []string{apikey.ScopeCatalogRead, apikey.ScopeWebhooksRead}) {
		t.Fatalf("the production key's scopes: %v (the sandbox field must not count)", got)
	}
	if res := testenv.Do(t, base, http.MethodGet, "/v1/events", key, ""); res.Status != http.StatusOK {
		t.Fatalf("the developer's production key on the catalog: %d", res.Status)
	}
	expectProblem(t, testenv.Do(t, base, http.MethodGet, "/v1/orders", key, ""), http.StatusForbidden, "insufficient_scope")
}

// TestCabinetKeyFormInBrowser: a developer's key form in Chromium shows
// the chosen environment's scopes only: every partner scope for sandbox;
// for production the two it may give and which ones an owner gives, and no
// production door key. A refused door key answers the form with the
// reason. Both fit 1280 and 390 px (screenshots keys-developer-*.png).
func TestCabinetKeyFormInBrowser(t *testing.T) {
	s := testenv.NewStack(t)
	company := s.Company(t, "Acme")
	base, _ := outboxInstance(t, s)
	ctx := newBrowser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	visible := func(sel string) bool {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).offsetParent !== null`, sel)))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return v
	}
	run("accept as a developer", chromedp.Navigate(cabinetUserAs(t, s, base, company, "dev@acme.test", organizer.RoleDeveloper)),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#create-key")))
	if !visible(`#scope-sandbox-orders\:write`) || visible(`#scope-production-catalog\:read`) || visible("#withheld-production") {
		t.Fatal("the sandbox form does not show the sandbox scopes alone")
	}
	run("choose production", chromedp.Click(chromedp.CSS("#env-production")))
	if visible(`#scope-sandbox-orders\:write`) || !visible(`#scope-production-catalog\:read`) || !visible(`#scope-production-webhooks\:read`) ||
		!visible("#withheld-production") {
		t.Fatal("the production form does not show the production scopes alone, with what an owner gives")
	}
	pageFits(t, ctx, "keys-developer-production", nil)
	run("choose a door key", chromedp.Click(chromedp.CSS("#kind-door")))
	if !visible("#no-door-production") || visible("#door-sandbox") {
		t.Fatal("a production door key is not said to be an owner's")
	}
	res, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS("#create-key")))
	if err != nil || res.Status != http.StatusForbidden {
		t.Fatalf("a production door key as a developer: %v %v", res, err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#message")))
	if err != nil || !strings.Contains(msg, "developer role cannot give a production key the scope checkin") || !strings.Contains(msg, "Nothing was made") {
		t.Fatalf("the refusal says %q (%v)", msg, err)
	}
	if !visible("#no-door-production") {
		t.Fatal("the refused form does not keep production and the door key chosen")
	}
	pageFits(t, ctx, "keys-developer-refused", nil)
}

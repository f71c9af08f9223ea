package organizer

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// TestKeyScopesStayWithinTheRole pins which scopes each role may put on a
// key of each environment: the owner any; a developer any sandbox scope,
// but on a production key only what reaches no buyer, money or door; the
// roles that may not manage keys none.
func TestKeyScopesStayWithinTheRole(t *testing.T) {
	want := map[Role]map[string][]string{
		RoleOwner: {apikey.Sandbox: apikey.AllScopes, apikey.Production: apikey.AllScopes},
		RoleDeveloper: {apikey.Sandbox: apikey.AllScopes,
			apikey.Production: {apikey.ScopeCatalogRead, apikey.ScopeWebhooksRead}},
		RoleFinance: {},
		RoleSupport: {},
		RoleDoor:    {},
	}
	if len(want) != len(Roles) {
		t.Fatalf("the table has %d roles, there are %d", len(want), len(Roles))
	}
	for _, r := range Roles {
		for _, env := range []string{apikey.Sandbox, apikey.Production} {
			for _, s := range apikey.AllScopes {
				allowed := slices.Contains(want[r][env], s)
				if got := r.MayGrantScope(env, s); got != allowed {
					t.Errorf("%s may put %s on a %s key: %v, want %v", r, s, env, got, allowed)
				}
				err := r.GrantScopes(env, []string{s})
				var refused *ScopesRefused
				switch {
				case allowed && err != nil:
					t.Errorf("%s granting %s on %s: %v", r, s, env, err)
				case !allowed && (!errors.As(err, &refused) || !slices.Equal(refused.Scopes, []string{s})):
					t.Errorf("%s granting %s on %s: %v, want ScopesRefused naming it", r, s, env, err)
				}
			}
			if got := r.GrantableScopes(env, apikey.AllScopes); !slices.Equal(got, want[r][env]) {
				t.Errorf("%s's form offers %v on %s, want %v", r, got, env, want[r][env])
			}
		}
	}
	for _, r := range Roles {
		if r.MayGrantScope("staging", apikey.ScopeCatalogRead) || r.MayGrantScope(apikey.Sandbox, "admin") {
			t.Errorf("%s may grant an unknown scope or environment", r)
		}
	}
}

// TestScopesRefusedSaysWhatAndWhy: the refusal the cabinet shows names
// every refused scope, what it would reach, and who can make the key.
func TestScopesRefusedSaysWhatAndWhy(t *testing.T) {
	err := RoleDeveloper.GrantScopes(apikey.Production,
		[]string{apikey.ScopeCatalogRead, apikey.ScopeOrdersRead, apikey.ScopeOrdersWrite, apikey.ScopeCheckin})
	var refused *ScopesRefused
	if !errors.As(err, &refused) || !slices.Equal(refused.Scopes, []string{apikey.ScopeOrdersRead, apikey.ScopeOrdersWrite, apikey.ScopeCheckin}) {
		t.Fatalf("refused: %v", err)
	}
	for _, s := range []string{"developer", "production", "orders:read", "orders:write", "checkin", "buyer", "refunds", "An owner"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the refusal lacks %q: %s", s, err)
		}
	}
	if strings.Contains(err.Error(), "catalog:read") {
		t.Errorf("the refusal names a scope the role may give: %s", err)
	}
}

// TestWebhookRightsFollowTheKeyScopes: managing an environment's webhook
// endpoints is what a webhooks:write key of it does, reading its
// deliveries' payloads what an orders:read key does. Written out: the
// owner both, everywhere; a developer both in sandbox only; the others
// neither (they have no webhooks pages at all).
func TestWebhookRightsFollowTheKeyScopes(t *testing.T) {
	want := map[Role][]string{RoleOwner: {apikey.Sandbox, apikey.Production}, RoleDeveloper: {apikey.Sandbox}}
	for _, r := range Roles {
		for _, env := range []string{apikey.Sandbox, apikey.Production, "staging"} {
			allowed := slices.Contains(want[r], env)
			if got := r.MayManageWebhooks(env); got != allowed {
				t.Errorf("%s may manage %s webhook endpoints: %v, want %v", r, env, got, allowed)
			}
			if got := r.MayReadWebhookPayloads(env); got != allowed {
				t.Errorf("%s may read %s webhook payloads: %v, want %v", r, env, got, allowed)
			}
			u := &User{Role: r}
			if u.MayManageWebhooks(env) != allowed || u.MayReadWebhookPayloads(env) != allowed {
				t.Errorf("the user's view of %s on %s differs from the role's", r, env)
			}
		}
	}
	var nobody *User
	if nobody.MayManageWebhooks(apikey.Sandbox) || nobody.MayReadWebhookPayloads(apikey.Sandbox) {
		t.Error("no user may manage webhooks")
	}
}

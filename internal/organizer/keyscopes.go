package organizer

import (
	"fmt"
	"strings"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// productionScopeNeeds is what a role must be allowed in the cabinet to put
// a scope on a production key: a key carries at most its maker's rights,
// and each scope is weighed by what a key with it reads and does.
var productionScopeNeeds = map[string][]Perm{
	// The events, prices and seat maps every storefront shows its
	// buyers: no buyer, no money.
	apikey.ScopeCatalogRead: nil,
	// Every order of the company with its buyer's name, e-mail and
	// phone, and its tickets' barcodes: the cabinet's orders pages.
	apikey.ScopeOrdersRead: {PermOrders},
	// Holds, orders, confirmed payments (tickets issued), cancels and
	// refunds, whose answers carry the order and its buyer. Selling has
	// no page of its own in the cabinet: only a role that may read
	// orders, cancel and refund (today the owner alone) gives it.
	apikey.ScopeOrdersWrite: {PermOrders, PermCancel, PermRefund},
	// Endpoints and their deliveries' statuses; no payload.
	apikey.ScopeWebhooksRead: {PermWebhooks},
	// An endpoint at any address receives every order with its buyer,
	// and past events can be sent to it again: orders:read by push.
	apikey.ScopeWebhooksWrite: {PermWebhooks, PermOrders},
	// Admits real tickets (a copy let in first turns the holder away)
	// and downloads the door list, whose 13-digit barcodes' hashes are
	// as good as the tickets: the doors' work.
	apikey.ScopeCheckin: {PermCheckIn},
}

// MayGrantScope reports whether the role may put scope on a key of the
// environment env. Making a key at all needs PermKeys. A sandbox key
// reaches test orders only (no real buyer, no money, never e-mailed,
// deleted after a day), so there PermKeys is enough for every scope; a
// production key's scope needs what productionScopeNeeds says. Unknown
// scopes and environments are never granted.
func (r Role) MayGrantScope(env, scope string) bool {
	needs, known := productionScopeNeeds[scope]
	if !known || !r.Can(PermKeys) {
		return false
	}
	switch env {
	case apikey.Sandbox:
		return true
	case apikey.Production:
		for _, p := range needs {
			if !r.Can(p) {
				return false
			}
		}
		return true
	}
	return false
}

// MayManageWebhooks reports whether the role may add, change, disable,
// enable, test, rotate the secret of and redeliver to the webhook
// endpoints of env in the cabinet. An endpoint at any address receives
// every order with its buyer, so managing one is what a webhooks:write key
// of env does: the role must be one that may give that scope there.
func (r Role) MayManageWebhooks(env string) bool {
	return r.Can(PermWebhooks) && r.MayGrantScope(env, apikey.ScopeWebhooksWrite)
}

// MayReadWebhookPayloads reports whether the role may read the bodies of
// env's webhook deliveries: an order's event carries the order with its
// buyer's name, e-mail and phone, what an orders:read key of env reads.
// Without it a delivery's type, status, times and attempts still show.
func (r Role) MayReadWebhookPayloads(env string) bool {
	return r.Can(PermWebhooks) && r.MayGrantScope(env, apikey.ScopeOrdersRead)
}

// GrantableScopes lists the scopes of scopes (in their order) the role
// may put on a key of env: what the key form offers.
func (r Role) GrantableScopes(env string, scopes []string) []string {
	var out []string
	for _, s := range scopes {
		if r.MayGrantScope(env, s) {
			out = append(out, s)
		}
	}
	return out
}

// GrantScopes refuses, with a ScopesRefused naming them, the scopes the
// role may not put on a key of env (apikey.Grantor: the cabinet makes
// every key through it).
func (r Role) GrantScopes(env string, scopes []string) error {
	var refused []string
	for _, s := range scopes {
		if !r.MayGrantScope(env, s) {
			refused = append(refused, s)
		}
	}
	if len(refused) == 0 {
		return nil
	}
	return &ScopesRefused{Role: r, Environment: env, Scopes: refused}
}

// ScopesRefused: the role may not put these scopes on a key of the
// environment; nothing was made.
type ScopesRefused struct {
	Role        Role
	Environment string
	Scopes      []string
}

func (e *ScopesRefused) Error() string {
	var why []string
	for _, s := range e.Scopes {
		if w := scopeReach[s]; w != "" && e.Environment == apikey.Production && e.Role.Can(PermKeys) {
			why = append(why, s+" "+w)
		}
	}
	noun := "the scope"
	if len(e.Scopes) > 1 {
		noun = "the scopes"
	}
	msg := fmt.Sprintf("the %s role cannot give a %s key %s %s: a key carries at most the rights of the role that makes it",
		e.Role, e.Environment, noun, strings.Join(e.Scopes, ", "))
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return msg + ". An owner can make this key"
}

// scopeReach says in a few words what a production key with the scope
// reaches that some roles may not.
var scopeReach = map[string]string{
	apikey.ScopeOrdersRead:    "reads every order's buyer: name, e-mail, phone",
	apikey.ScopeOrdersWrite:   "sells, cancels and refunds orders",
	apikey.ScopeWebhooksWrite: "sends every order and its buyer to an address of its choice",
	apikey.ScopeCheckin:       "admits real tickets at the door",
}

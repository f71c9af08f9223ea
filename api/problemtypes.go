package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/ticketsales/ticketsales/api/reference"
)

// ProblemTypesPath is the page that documents every problem code; a
// problem's type is this path with the code as its fragment
// ("/docs/problems#seat_taken"): a URI reference that a person can open
// and a program can compare (RFC 9457, 3.1.1: a relative reference with
// its full path, resolved against the request's URL).
const ProblemTypesPath = "/docs/problems"

// problemType documents one problem code: the statuses it comes with,
// what it means and what a partner's program or person does about it.
type problemType struct {
	Code     string
	Statuses []int
	Meaning  string
	Do       string
}

// problemTypes is every code a problem may carry, in the order the page
// lists them. The document's enum of codes, each failure status's list of
// codes, every problem's type and the page are made from it.
var problemTypes = []problemType{
	{"malformed_request", []int{400}, "The body is not one JSON value in UTF-8, or a query or header could not be read.",
		"Fix the request; sending it again unchanged fails the same way."},
	{"idempotency_key_required", []int{400}, "A request that changes something came without an `Idempotency-Key` header, or with one longer than 255 characters or not UTF-8.",
		"Send a fresh key (a UUID) with each new operation, and the same key when you retry it."},
	{"api_key_missing", []int{401}, "No `Authorization` header.", "Send `Authorization: Bearer <key>`."},
	{"api_key_malformed", []int{401}, "The `Authorization` header is not `Bearer <key>`, or the key is not shaped `tk_{sandbox|production}_{48 hex}`.",
		"Check how your program reads and sends the key (spaces, quotes, a cut-off value)."},
	{"api_key_unknown", []int{401}, "A well-formed key that is no key of the service: never issued, or revoked.",
		"Ask the organizer for a key; a revoked key never works again."},
	{"seat_map_token_invalid", []int{401}, "On /seat-map/v1: no seat map token, or one this service did not make (malformed, altered, made with a secret it no longer holds), or one whose API key was revoked. API keys are not accepted there.",
		"Get a new token from the shop's server (POST /v1/events/{id}/seat-map-tokens); never put the API key in a page."},
	{"seat_map_token_expired", []int{401}, "On /seat-map/v1: the seat map token is past its `expires_at`.",
		"Get a new token from the shop's server and continue with it."},
	{"unauthenticated", []int{401}, "The request could not be authenticated for another reason.", "Send a valid key."},
	{"insufficient_scope", []int{403}, "The key lacks the scope the operation needs; `required_scope` names it.",
		"Ask the organizer for a key with that scope."},
	{"door_key_elsewhere", []int{403}, "A door key used at another event or gate than the one it was made for.",
		"Use the scanner's own key at its own door."},
	{"seat_map_token_elsewhere", []int{403}, "A seat map token used for another event than the one it was made for.",
		"Make a token for each event the page shows."},
	{"not_found", []int{404}, "No such route, or no such object among your company's.", "Check the id; another company's objects are never found."},
	{"method_not_allowed", []int{405}, "The route exists, not with this method; `Allow` lists those it has.", "Use one of the listed methods."},
	{"not_acceptable", []int{406}, "The `Accept` header allows nothing the route answers.", "Accept `application/json`."},
	{"request_timeout", []int{408}, "The request's body did not arrive within 5 seconds.", "Send the body at once; retry on a healthy connection."},
	{"seat_taken", []int{409}, "Some seats are held or sold by someone else; `unavailable_seats` lists them.",
		"Refresh availability and offer the buyer other seats."},
	{"seat_not_for_sale", []int{409}, "Some seats are allocated to a sales channel your key does not sell in; `unavailable_seats` lists them.",
		"Offer other seats: these will not become free for you (GET /v1/events/{id}/allocation says what you may sell)."},
	{"sales_not_open", []int{409}, "Sales of the event have not opened for your key; `sales_open_at` says when they do.", "Try again at `sales_open_at`."},
	{"sales_closed", []int{409}, "Sales of the event have closed for your key; `sales_closed_at` says when.", "Nothing to retry."},
	{"sold_out", []int{409}, "Not enough tickets left in the categories asked; `unavailable_categories` (or `slot_sold_out`) says which.",
		"Offer fewer tickets or another category or session."},
	{"invalid_state", []int{409}, "The object is not in a state that allows this (a refund of an unpaid order, a confirm of a cancelled one, a payment already applied to another order).",
		"Read the object again and act on its current state."},
	{"order_paid", []int{409}, "The order is paid: it cannot be cancelled.", "Refund its tickets instead."},
	{"reservation_expired", []int{409}, "The reservation's hold ended before the order was made.", "Hold the seats again."},
	{"hold_limit_reached", []int{409}, "An extension would make the hold last longer than a hold may from its creation (60 minutes); `latest_expires_at` says how far it can go.",
		"Extend it to `latest_expires_at` at most, or let the buyer order now; nothing was changed."},
	{"order_expired", []int{409}, "The order's payment window ended before the payment was confirmed.", "Make a new order; return the buyer's payment."},
	{"limit_reached", []int{409}, "A limit of your company's was reached (for example, its webhook endpoints).", "Remove what you no longer use, or ask the operators."},
	{"ticket_checked_in", []int{409}, "A ticket to refund was already admitted at the door.", "Ask the organizer: only they can refund an admitted ticket."},
	{"idempotency_request_in_progress", []int{409}, "A request with the same `Idempotency-Key` is still running.",
		"Retry the same request with the same key after `Retry-After`."},
	{"request_too_large", []int{413}, "The body is larger than 1 MiB.", "Send less: split a large list into several requests."},
	{"unsupported_media_type", []int{415}, "The body is not sent as `application/json`.", "Send `Content-Type: application/json`."},
	{"validation_error", []int{422}, "A member or parameter is missing, unknown or out of bounds; `errors[]` names each one (`location`) and why.",
		"Fix each named member; nothing was done."},
	{"amount_mismatch", []int{422}, "A confirm's `paid_amount` is not the order's `amount`.", "Confirm with the amount the buyer paid for this order; nothing was applied."},
	{"gateway_unavailable", []int{422}, "This deployment has no payment gateway for production orders.",
		"Use `payment: external` and confirm the payment, or ask the operators."},
	{"idempotency_key_reused", []int{422}, "The `Idempotency-Key` was used before with another request.", "Use a fresh key for a new operation."},
	{"rate_limited", []int{429}, "Too many requests from your key (or failed authentications from your address; on /seat-map/v1, requests from your address with one token).",
		"Wait `Retry-After` seconds; the `RateLimit` header tells the budget left."},
	{"client_closed_request", []int{499}, "The client closed the connection before the answer.", "Nothing to do: no one read this answer."},
	{"internal", []int{500}, "The service failed; nothing internal is shown.", "Retry later with the same `Idempotency-Key`; quote `request_id` to support."},
	{"unavailable", []int{503}, "A backing service is unreachable; the detail says whether anything was changed.",
		"Retry after `Retry-After`, with the same `Idempotency-Key`."},
	{"error", nil, "Any other failure, by its HTTP status.", "Act on the status; quote `request_id` to support."},
}

// problemTypeURI is the type of a problem with code.
func problemTypeURI(code string) string { return ProblemTypesPath + "#" + code }

// problemCodes are the codes a problem may carry: the document declares
// them as an enum, so a generated client can switch on them.
var problemCodes = func() []string {
	out := make([]string, len(problemTypes))
	for i, p := range problemTypes {
		out[i] = p.Code
	}
	return out
}()

// codesByStatus says which problem codes each failure status carries; the
// document lists them in that response's description. The generic 401
// (unauthenticated) is left out: the three api_key_ codes say more.
var codesByStatus = func() map[string][]string {
	out := map[string][]string{}
	for _, p := range problemTypes {
		for _, s := range p.Statuses {
			if s == http.StatusUnauthorized && p.Code == "unauthenticated" {
				continue
			}
			key := strconv.Itoa(s)
			if !slices.Contains(out[key], p.Code) {
				out[key] = append(out[key], p.Code)
			}
		}
	}
	return out
}()

// referenceProblemTypes is the table for the page.
func referenceProblemTypes() []reference.ProblemType {
	out := make([]reference.ProblemType, len(problemTypes))
	for i, p := range problemTypes {
		out[i] = reference.ProblemType{Code: p.Code, Statuses: p.Statuses, Meaning: p.Meaning, Do: p.Do}
	}
	return out
}

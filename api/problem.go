package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"ticketsales/api/aggregator"
	"ticketsales/api/request"
	"ticketsales/internal/catalog"
	"ticketsales/internal/sales"
	"ticketsales/internal/states"
	"ticketsales/internal/webhook"
	"ticketsales/store"
)

// Problem is the RFC 9457 problem details body of every error, Huma's model
// extended with a machine-readable code, the request id and the members
// particular errors carry.
type Problem struct {
	Type          string              `json:"type" doc:"A URI reference identifying the problem type."`
	Title         string              `json:"title"`
	Status        int                 `json:"status"`
	Detail        string              `json:"detail,omitempty"`
	Code          string              `json:"code" doc:"Machine-readable error code."`
	RequestID     string              `json:"request_id"`
	Errors        []*huma.ErrorDetail `json:"errors,omitempty" doc:"Field errors of a validation_error."`
	RequiredScope string              `json:"required_scope,omitempty" doc:"The scope an insufficient_scope error lacks."`

	UnavailableSeats []sales.SeatRef `json:"unavailable_seats,omitempty" doc:"The seats a seat_taken error refers to."`
	// The aggregator adapter names seats as its reserve takes them.
	AggUnavailableSeats []string `json:"unavailableSeats,omitempty" doc:"Aggregator adapter: the seats a seat_taken error refers to, as <zone_id>|<seat_id>."`

	UnavailableCategories []int64 `json:"unavailable_categories,omitempty" doc:"The ticket categories a sold_out error refers to."`
	SlotSoldOut           bool    `json:"slot_sold_out,omitempty" doc:"True when the schedule slot's capacity is exhausted."`
	Available             *int    `json:"available,omitempty" doc:"For best_available: free seats left within the request's categories and zones."`

	headers http.Header
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Code, p.Detail) }

// GetStatus makes Problem a huma.StatusError.
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes every problem application/problem+json.
func (p *Problem) ContentType(string) string { return "application/problem+json" }

// GetHeaders adds headers such as WWW-Authenticate or Retry-After.
func (p *Problem) GetHeaders() http.Header { return p.headers }

// codeForStatus names the code of errors the framework raises by status.
var codeForStatus = map[int]string{
	http.StatusBadRequest:            "malformed_request",
	http.StatusUnauthorized:          "unauthenticated",
	http.StatusForbidden:             "insufficient_scope",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusNotAcceptable:         "not_acceptable",
	http.StatusRequestTimeout:        "request_timeout",
	http.StatusRequestEntityTooLarge: "request_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusUnprocessableEntity:   "validation_error",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusInternalServerError:   "internal",
	http.StatusServiceUnavailable:    "unavailable",
}

// newProblem builds a problem for the request in ctx.
func newProblem(ctx context.Context, status int, code, detail string) *Problem {
	if code == "" {
		code = codeForStatus[status]
		if code == "" {
			code = "error"
		}
	}
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail,
		Code: code, RequestID: request.ID(ctx)}
}

// withHeader adds a response header to the problem.
func (p *Problem) withHeader(k, v string) *Problem {
	if p.headers == nil {
		p.headers = http.Header{}
	}
	p.headers.Set(k, v)
	return p
}

// installErrorModel routes every error Huma raises (validation, body parsing,
// handler errors) through Problem, so all carry code and request_id and none
// leaks internals; a handler's error is mapped by fromError.
func installErrorModel(log *slog.Logger) {
	huma.NewErrorWithContext = func(hctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		ctx := context.Background()
		if hctx != nil {
			ctx = hctx.Context()
		}
		if err := errors.Join(errs...); status == http.StatusInternalServerError && err != nil {
			// A handler's error: the one mapping of service errors to
			// problems decides, so handlers just pass errors on.
			var p *Problem
			errors.As(fromError(ctx, log, err), &p)
			// Huma copies headers only from the error the handler
			// returned, not from this mapping of it: a 503's Retry-After
			// would be lost.
			if hctx != nil {
				for k, vs := range p.headers {
					hctx.SetHeader(k, strings.Join(vs, ", "))
				}
			}
			return p
		}
		if status >= 500 {
			log.ErrorContext(ctx, "request failed", "request_id", request.ID(ctx), "status", status, "msg", msg, "err", errors.Join(errs...))
			return newProblem(ctx, status, "", "The service could not complete the request; quote the request_id to support.")
		}
		p := newProblem(ctx, status, "", msg)
		if status == http.StatusUnsupportedMediaType {
			p.Detail = "The body must be JSON: send it with `Content-Type: application/json`."
		}
		for _, err := range errs {
			var d *huma.ErrorDetail
			if errors.As(err, &d) {
				p.Errors = append(p.Errors, d)
			} else if err != nil {
				p.Errors = append(p.Errors, &huma.ErrorDetail{Message: err.Error()})
			}
		}
		for _, d := range p.Errors {
			// A body that is not JSON is not echoed back, nor a large value
			// (a megabyte string, an array nested ten thousand deep that
			// clients' JSON decoders refuse): they may be huge.
			if status == http.StatusBadRequest || status == http.StatusUnsupportedMediaType || !smallValue(d.Value) {
				d.Value = nil
			}
		}
		return p
	}
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return huma.NewErrorWithContext(nil, status, msg, errs...)
	}
}

// maxEchoedValue bounds the JSON size of a field error's echoed value.
const maxEchoedValue = 512

func smallValue(v any) bool {
	if v == nil {
		return true
	}
	b, err := json.Marshal(v)
	return err == nil && len(b) <= maxEchoedValue
}

// fromError maps a service error to a problem: unknown or foreign ids are
// 404, an unreachable dependency 503, anything else 500 (logged, not shown).
func fromError(ctx context.Context, log *slog.Logger, err error) error {
	var p *Problem
	var taken *sales.SeatTakenError
	var aggTaken *aggregator.SeatTakenError
	var invalid *sales.ValidationError
	var state *states.StateError
	var soldOut *states.SoldOutError
	var mismatch *sales.AmountMismatchError
	var capped *webhook.LimitError
	var rated *webhook.RateError
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &taken):
		p := newProblem(ctx, http.StatusConflict, "seat_taken", "Some seats are no longer free: refresh availability and offer others.")
		p.UnavailableSeats = taken.Seats
		return p
	case errors.As(err, &aggTaken):
		p := newProblem(ctx, http.StatusConflict, "seat_taken", "Some seats are no longer free: refresh available-seats and offer others.")
		p.AggUnavailableSeats = aggTaken.Seats
		return p
	case errors.As(err, &invalid):
		p := newProblem(ctx, http.StatusUnprocessableEntity, "validation_error", "validation failed")
		for _, f := range invalid.Fields {
			p.Errors = append(p.Errors, &huma.ErrorDetail{Location: f.Location, Message: f.Message, Value: f.Value})
		}
		return p
	case errors.As(err, &soldOut):
		p := newProblem(ctx, http.StatusConflict, "sold_out", "Not enough tickets left for this order.")
		p.UnavailableCategories, p.SlotSoldOut, p.Available = soldOut.CategoryIDs, soldOut.Slot, soldOut.Available
		if soldOut.Available != nil {
			p.Detail = fmt.Sprintf("No %sseats fit the request; %d free seats are left within its categories and zones.",
				map[bool]string{true: "side-by-side ", false: ""}[soldOut.Together], *soldOut.Available)
		}
		return p
	case errors.As(err, &capped):
		return newProblem(ctx, http.StatusConflict, "limit_reached", fmt.Sprintf("This environment already has %d webhook "+
			"endpoints, the most allowed: delete one it no longer needs before adding another. Nothing was changed.", capped.Max))
	case errors.As(err, &rated):
		wait := max(int(math.Ceil(rated.RetryAfter.Seconds())), 1)
		return newProblem(ctx, http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("At most %d %s per minute per "+
			"environment: the next one is allowed in %d s. Nothing was sent.", rated.PerMinute, rated.What, wait)).
			withHeader("Retry-After", strconv.Itoa(wait))
	case errors.As(err, &mismatch):
		return newProblem(ctx, http.StatusUnprocessableEntity, "amount_mismatch", "paid_amount must equal the order amount; nothing was changed.")
	case errors.Is(err, store.ErrPaymentConflict):
		log.ErrorContext(ctx, "a gateway reported a payment again with other details", "request_id", request.ID(ctx), "err", err)
		return newProblem(ctx, http.StatusConflict, "invalid_state", "This payment is on record with another order or amount; it was not applied.")
	case errors.Is(err, sales.ErrGatewayUnavailable):
		return newProblem(ctx, http.StatusUnprocessableEntity, "gateway_unavailable",
			"This deployment has no payment gateway for production orders: use payment=external and confirm the "+
				"payment, or ask the service's operators to configure a gateway. Sandbox keys use the test gateway. Nothing was changed.")
	case errors.Is(err, sales.ErrOrderExpired):
		return newProblem(ctx, http.StatusConflict, "order_expired", "The order's payment window has closed; its seats were freed.")
	case errors.Is(err, sales.ErrOrderPaid):
		return newProblem(ctx, http.StatusConflict, "order_paid", "A paid order cannot be cancelled; refund it instead.")
	case errors.Is(err, sales.ErrReservationExpired):
		return newProblem(ctx, http.StatusConflict, "reservation_expired", "The reservation's hold has expired; its seats may be taken again.")
	case errors.As(err, &state):
		return newProblem(ctx, http.StatusConflict, "invalid_state", fmt.Sprintf("The %s is %s; that does not allow this request.", state.Entity, state.Status))
	case errors.Is(err, sales.ErrIncomplete):
		log.WarnContext(ctx, "request incomplete", "request_id", request.ID(ctx), "err", err)
		return newProblem(ctx, http.StatusServiceUnavailable, "unavailable",
			"A backing service failed before the request was finished; retry it with the same Idempotency-Key.").
			withHeader("Retry-After", "5")
	case errors.Is(err, sales.ErrUnavailable):
		log.WarnContext(ctx, "dependency unavailable", "request_id", request.ID(ctx), "err", err)
		return newProblem(ctx, http.StatusServiceUnavailable, "unavailable", "A backing service is unreachable and nothing was changed; retry later.").
			withHeader("Retry-After", "5")
	case errors.Is(err, catalog.ErrNoScheme):
		return newProblem(ctx, http.StatusNotFound, "not_found",
			"This event has no seating scheme: it sells general-admission tickets by category (order them by items).")
	case errors.Is(err, store.ErrNotFound):
		return newProblem(ctx, http.StatusNotFound, "not_found", notFoundDetail(err))
	case errors.Is(err, context.Canceled):
		return newProblem(ctx, 499, "client_closed_request", "The client closed the request.")
	case isUnavailable(err):
		log.WarnContext(ctx, "dependency unavailable", "request_id", request.ID(ctx), "err", err)
		return newProblem(ctx, http.StatusServiceUnavailable, "unavailable", "A backing service is unreachable; retry later.").
			withHeader("Retry-After", "5")
	}
	log.ErrorContext(ctx, "request failed", "request_id", request.ID(ctx), "err", err)
	return newProblem(ctx, http.StatusInternalServerError, "internal", "The service could not complete the request; quote the request_id to support.")
}

func notFoundDetail(err error) string {
	return "The resource does not exist or is not visible to this API key."
}

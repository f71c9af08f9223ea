package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/validation"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
)

// UnavailableSeat is a seat a problem refers to. It has the fields of the
// requests' SeatRef but is a schema of its own: answers are open to new
// fields (docs/api.md, Compatibility), requests are not.
type UnavailableSeat struct {
	ZoneID string `json:"zone_id"`
	SeatID string `json:"seat_id"`
}

func unavailableSeats(refs []errs.SeatRef) []UnavailableSeat {
	out := make([]UnavailableSeat, len(refs))
	for i, r := range refs {
		out[i] = UnavailableSeat{ZoneID: r.ZoneID, SeatID: r.SeatID}
	}
	return out
}

// Problem is the RFC 9457 problem details body of every error, Huma's model
// extended with a machine-readable code, the request id and the members
// particular errors carry.
type Problem struct {
	Type          string              `json:"type" doc:"The problem type: /docs/problems#<code>, a reference to the section documenting the code (resolve it against the request URL)."`
	Title         string              `json:"title"`
	Status        int                 `json:"status"`
	Detail        string              `json:"detail,omitempty"`
	Code          string              `json:"code" doc:"Machine-readable error code."`
	RequestID     string              `json:"request_id"`
	Errors        []*huma.ErrorDetail `json:"errors,omitempty" doc:"Field errors of a validation_error."`
	RequiredScope string              `json:"required_scope,omitempty" doc:"The scope an insufficient_scope error lacks."`

	UnavailableSeats []UnavailableSeat `json:"unavailable_seats,omitempty" doc:"The seats a seat_taken or seat_not_for_sale error refers to."`
	// The aggregator adapter names seats as its reserve takes them.
	AggUnavailableSeats []string `json:"unavailableSeats,omitempty" doc:"Aggregator adapter: the seats a seat_taken error refers to, as <zone_id>|<seat_id>."`

	UnavailableCategories []int64 `json:"unavailable_categories,omitempty" doc:"The ticket categories a sold_out error refers to."`
	SlotSoldOut           bool    `json:"slot_sold_out,omitempty" doc:"True when the schedule slot's capacity is exhausted."`
	Available             *int    `json:"available,omitempty" doc:"For best_available: free seats left within the request's categories and zones."`

	SalesOpenAt   *time.Time `json:"sales_open_at,omitempty" doc:"A sales_not_open error: when sales through this key open."`
	SalesClosedAt *time.Time `json:"sales_closed_at,omitempty" doc:"A sales_closed error: when sales through this key closed."`

	LatestExpiresAt *time.Time `json:"latest_expires_at,omitempty" doc:"A hold_limit_reached error: the latest expires_at an extension of the hold may set."`

	ExpectedAmount *pricing.Money `json:"expected_amount,omitempty" doc:"An amount_mismatch error's order amount (and currency): the paid_amount a confirm must name."`

	headers http.Header
}

// TransformSchema keeps the Go SDK's Problem.UnavailableSeats a *[]SeatRef,
// as in release 1.0.0: the items became UnavailableSeat (an open answer
// schema, the same JSON), and a changed generated type would break a
// partner's code at its next `go get` (docs/releasing.md counts it as
// breaking). oapi-codegen reads x-go-type; other generators ignore it.
func (Problem) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	if p := s.Properties["unavailable_seats"]; p != nil {
		p.Extensions = map[string]any{"x-go-type": "[]SeatRef"}
	}
	return s
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
	return &Problem{Type: problemTypeURI(code), Title: http.StatusText(status), Status: status, Detail: detail,
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
			if d.Message == validation.MsgUnexpectedProperty {
				// The location names the member; the value Huma gives is
				// the whole object around it.
				d.Value = nil
				d.Message = "unknown member: names are case-sensitive, see the operation's schema"
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

// fromError maps a service error to a problem: every error of the service
// carries its own (internal/errs); an unreachable dependency is 503, a
// closed request 499, anything else 500 (logged, not shown).
func fromError(ctx context.Context, log *slog.Logger, err error) error {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	var coded errs.Coded
	switch {
	case errors.As(err, &coded):
		return problemOf(ctx, log, err, coded)
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

// problemOf answers a service error with its problem and the members some
// errors carry.
func problemOf(ctx context.Context, log *slog.Logger, err error, coded errs.Coded) *Problem {
	pr := coded.Problem()
	p := newProblem(ctx, pr.Status, pr.Code, pr.Detail)
	if pr.RetryAfter > 0 {
		p.withHeader("Retry-After", strconv.Itoa(int(pr.RetryAfter/time.Second)))
	}
	var taken *errs.SeatTakenError
	var withheld *errs.NotForSaleError
	var window *errs.SalesWindowError
	var invalid *errs.ValidationError
	var soldOut *errs.SoldOutError
	var mismatch *errs.AmountMismatchError
	var holdLimit *errs.HoldLimitError
	switch {
	case errors.As(err, &taken):
		if ri := request.From(ctx); ri != nil && ri.Adapter {
			// The adapter names seats as its reserve takes them.
			p.Detail = "Some seats are no longer free: refresh available-seats and offer others."
			for _, s := range taken.Seats {
				p.AggUnavailableSeats = append(p.AggUnavailableSeats, s.ZoneID+"|"+s.SeatID)
			}
		} else {
			p.UnavailableSeats = unavailableSeats(taken.Seats)
		}
	case errors.As(err, &withheld):
		if ri := request.From(ctx); ri != nil && ri.Adapter {
			for _, s := range withheld.Seats {
				p.AggUnavailableSeats = append(p.AggUnavailableSeats, s.ZoneID+"|"+s.SeatID)
			}
		} else {
			p.UnavailableSeats = unavailableSeats(withheld.Seats)
		}
	case errors.As(err, &window):
		p.SalesOpenAt, p.SalesClosedAt = window.OpensAt, window.ClosedAt
	case errors.As(err, &invalid):
		for _, f := range invalid.Fields {
			p.Errors = append(p.Errors, &huma.ErrorDetail{Location: f.Location, Message: f.Message, Value: f.Value})
		}
	case errors.As(err, &soldOut):
		p.UnavailableCategories, p.SlotSoldOut, p.Available = soldOut.CategoryIDs, soldOut.Slot, soldOut.Available
	case errors.As(err, &mismatch):
		p.ExpectedAmount = &pricing.Money{Amount: mismatch.Amount, Currency: mismatch.Currency}
	case errors.As(err, &holdLimit):
		p.LatestExpiresAt = &holdLimit.Latest
	case errors.Is(err, errs.PaymentConflict):
		log.ErrorContext(ctx, "a gateway reported a payment again with other details", "request_id", request.ID(ctx), "err", err)
	case pr.Status == http.StatusServiceUnavailable:
		log.WarnContext(ctx, "dependency unavailable", "request_id", request.ID(ctx), "err", err)
	}
	return p
}

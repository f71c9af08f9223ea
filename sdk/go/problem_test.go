package ticketsales

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An answer that failed is a *Problem for errors.As, with the fields the
// API sends; a validation error names its fields in the message.
func TestProblemsAreErrors(t *testing.T) {
	ctx := context.Background()
	srv, _ := serve(t, answer{http.StatusUnprocessableEntity, map[string]string{"Content-Type": "application/problem+json"},
		`{"type": "about:blank", "title": "Unprocessable Entity", "status": 422, "code": "validation_error",
		  "detail": "validation failed", "request_id": "req_42",
		  "errors": [{"location": "body.items[0].quantity", "message": "expected number >= 1", "value": 0}]}`})
	c, _ := testClient(t, srv.URL, &Doer{})
	_, err := Check(c.CreateOrderWithResponse(ctx, &CreateOrderParams{}, anOrder))
	var p *Problem
	if !errors.As(fmt.Errorf("buying: %w", err), &p) {
		t.Fatalf("%v (%T) is not a *Problem", err, err)
	}
	if p.Status != 422 || p.Code != ProblemCodeValidationError || p.RequestId != "req_42" || p.Errors == nil || len(*p.Errors) != 1 {
		t.Fatalf("%+v", p)
	}
	want := "ticketsales: 422 validation_error: validation failed; body.items[0].quantity: expected number >= 1 (request req_42)"
	if err.Error() != want {
		t.Fatalf("%q, want %q", err.Error(), want)
	}

	// Something in between answering with a page of its own.
	srv, _ = serve(t, answer{http.StatusBadGateway, map[string]string{"Content-Type": "text/html"}, "<html>bad gateway</html>"})
	c, _ = testClient(t, srv.URL, &Doer{})
	_, err = Check(c.GetOrderWithResponse(ctx, 7))
	if !errors.As(err, &p) || p.Status != 502 || p.Code != ProblemCodeError || p.Detail == nil || !strings.Contains(*p.Detail, "bad gateway") {
		t.Fatalf("%v", err)
	}

	// Success is no error, a 304 neither.
	srv, _ = serve(t, answer{http.StatusOK, nil, fmt.Sprintf(orderJSON, "paid")})
	c, _ = testClient(t, srv.URL, &Doer{})
	if res, err := Check(c.GetOrderWithResponse(ctx, 7)); err != nil || res.JSON200.Data.Status != OrderStatusPaid {
		t.Fatalf("%v", err)
	}
	srv, _ = serve(t, answer{http.StatusNotModified, nil, ""})
	c, _ = testClient(t, srv.URL, &Doer{})
	if _, err := Check(c.GetEventSchemeWithResponse(ctx, 1, nil)); err != nil {
		t.Fatalf("304: %v", err)
	}
}

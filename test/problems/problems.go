// Package problems reads, in unit tests, what the API answers a service
// error with (its errs.Problem) and a validation error's fields.
package problems

import (
	"errors"
	"testing"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// Of is what the partner is answered with for err.
func Of(t testing.TB, err error) errs.Problem {
	t.Helper()
	var c errs.Coded
	if !errors.As(err, &c) {
		t.Fatalf("%v is not an error the API answers with its problem", err)
	}
	return c.Problem()
}

// Fields are the field errors of a 422 validation_error: location → value.
func Fields(t testing.TB, err error) map[string]any {
	t.Helper()
	var verr *errs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("want a validation error, got %v", err)
	}
	if p := Of(t, err); p.Status != 422 || p.Code != "validation_error" {
		t.Fatalf("answered %d %s, want 422 validation_error", p.Status, p.Code)
	}
	out := map[string]any{}
	for _, f := range verr.Fields {
		out[f.Location] = f.Value
	}
	return out
}

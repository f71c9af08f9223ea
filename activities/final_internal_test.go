package activities

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/sdk/temporal"
)

// A violated constraint (bad input or a bug) fails the same way on every
// retry: final makes it non-retryable; other errors pass unchanged.
func TestViolatedConstraintIsFinal(t *testing.T) {
	err := final(fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23505"}))
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != ErrTypeConstraintViolation {
		t.Fatalf("a unique violation: %v, want a non-retryable %s", err, ErrTypeConstraintViolation)
	}
	other := errors.New("connection reset")
	if got := final(other); got != other {
		t.Fatalf("another error: %v", got)
	}
}

package api

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A Postgres that is shutting down or restarting cuts statements with
// errors of classes 08 and 57P, or a connection that ends mid-message:
// partners get 503 with Retry-After (retry later), never a 500.
func TestServerGoingAwayIsUnavailable(t *testing.T) {
	for _, err := range []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		&pgconn.PgError{Code: "08006", Message: "connection failure"},
		fmt.Errorf("hold seats: %w", io.ErrUnexpectedEOF),
	} {
		if !isUnavailable(fmt.Errorf("create order: %w", err)) {
			t.Errorf("%v is not unavailable", err)
		}
	}
	for _, err := range []error{
		&pgconn.PgError{Code: "23505", Message: "duplicate key"},
		&pgconn.PgError{Code: "42P01", Message: "undefined table"},
		errors.New("a bug"),
	} {
		if isUnavailable(err) {
			t.Errorf("%v is unavailable", err)
		}
	}
}

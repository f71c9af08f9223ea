package api

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/api/serviceerror"
)

// isUnavailable tells whether err means Postgres or Temporal could not be
// reached, which the partner should retry (503), rather than a bug (500).
func isUnavailable(err error) bool {
	var connErr *pgconn.ConnectError
	var netErr net.Error
	var pgErr *pgconn.PgError
	var tUnavailable *serviceerror.Unavailable
	var tDeadline *serviceerror.DeadlineExceeded
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &tUnavailable) || errors.As(err, &tDeadline) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		(errors.As(err, &pgErr) && serverGoingAway(pgErr.Code))
}

// serverGoingAway tells the Postgres errors of a server that is shutting
// down, restarting or not accepting connections (classes 08 and 57P):
// the statement did not run, a retry later will.
func serverGoingAway(code string) bool {
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "57P")
}

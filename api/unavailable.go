package api

import (
	"context"
	"database/sql/driver"
	"errors"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/api/serviceerror"
)

// isUnavailable tells whether err means Postgres or Temporal could not be
// reached, which the partner should retry (503), rather than a bug (500).
func isUnavailable(err error) bool {
	var connErr *pgconn.ConnectError
	var netErr net.Error
	var tUnavailable *serviceerror.Unavailable
	var tDeadline *serviceerror.DeadlineExceeded
	return errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &tUnavailable) || errors.As(err, &tDeadline)
}

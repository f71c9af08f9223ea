package app

import (
	"log/slog"

	sdklog "go.temporal.io/sdk/log"
)

// TemporalLogger is the logger a process gives the Temporal SDK: the
// process's own, so the SDK's records go where the service's go and at
// LOG_LEVEL. Without one the SDK writes every level, DEBUG included
// ("NewTimer", "Worker heartbeating configured..."), to stdout: thousands
// of lines a sell-out.
func TemporalLogger(l *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(l)
}

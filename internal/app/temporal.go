package app

import (
	"log/slog"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/ticketsales/ticketsales/internal/config"
)

// TemporalLogger is the logger a process gives the Temporal SDK: the
// process's own, so the SDK's records go where the service's go and at
// LOG_LEVEL. Without one the SDK writes every level, DEBUG included
// ("NewTimer", "Worker heartbeating configured..."), to stdout: thousands
// of lines a sell-out.
func TemporalLogger(l *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(l)
}

// TemporalClientOptions are the options both processes (and the bench's
// stand-ins for them) dial Temporal with: address, namespace, the
// process's logger and metrics, and TEMPORAL_GRPC_COMPRESSION.
func TemporalClientOptions(cfg config.Config, l *slog.Logger, m client.MetricsHandler) client.Options {
	var compression client.GrpcCompression = &client.GrpcCompressionNone{}
	if cfg.TemporalCompression == "gzip" {
		compression = &client.GrpcCompressionGzip{}
	}
	return client.Options{HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace,
		Logger: TemporalLogger(l), MetricsHandler: m,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: compression}}
}

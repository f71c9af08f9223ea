package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

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

// DialTemporal connects to Temporal as the worker needs it, connected
// before it polls: Temporal may still be starting beside it, so the dial
// is tried again every second, for 30 seconds, or until ctx ends.
func DialTemporal(ctx context.Context, cfg config.Config, l *slog.Logger, m client.MetricsHandler) (client.Client, error) {
	for attempt := 0; ; attempt++ {
		c, err := client.DialContext(ctx, TemporalClientOptions(cfg, l, m))
		if err == nil {
			return c, nil
		}
		if attempt >= 30 || ctx.Err() != nil {
			return nil, fmt.Errorf("connect to temporal at %s: %w", cfg.TemporalAddress, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

package app_test

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/ticketsales/ticketsales/internal/app"
	"github.com/ticketsales/ticketsales/internal/config"
)

// records is a slog handler that keeps what reaches it, at a level.
type records struct {
	level slog.Leveler
	mu    *sync.Mutex
	got   *[]slog.Record
}

func newRecords(level slog.Leveler) records {
	return records{level: level, mu: &sync.Mutex{}, got: &[]slog.Record{}}
}

func (r records) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level.Level() }
func (r records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.got = append(*r.got, rec)
	return nil
}
func (r records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r records) WithGroup(string) slog.Handler      { return r }

func (r records) levels() []slog.Level {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []slog.Level
	for _, rec := range *r.got {
		out = append(out, rec.Level)
	}
	return out
}

// TestTemporalLoggerHonoursLogLevel: the Temporal SDK logs at the
// service's LOG_LEVEL. At info its DEBUG lines (a timer per saga step,
// the worker's heartbeat notice) must not reach the log; at debug they do.
func TestTemporalLoggerHonoursLogLevel(t *testing.T) {
	for _, tt := range []struct {
		level     string
		wantDebug bool
	}{{"info", false}, {"warn", false}, {"debug", true}} {
		t.Run(tt.level, func(t *testing.T) {
			t.Setenv("LOG_LEVEL", tt.level)
			cfg, err := config.Load()
			if err != nil {
				t.Fatal(err)
			}
			h := newRecords(cfg.LogLevel)
			sdk := app.TemporalLogger(slog.New(h))
			// The SDK logs through loggers it derives with With (workflow
			// and activity fields), as well as through the one it is given.
			for _, l := range []sdklog.Logger{sdk, sdklog.With(sdk, "Namespace", "default", "TaskQueue", "q")} {
				l.Debug("NewTimer", "TimerID", "1")
				l.Error("workflow task failed", "err", "boom")
			}
			var debug, errs int
			for _, l := range h.levels() {
				switch {
				case l < slog.LevelInfo:
					debug++
				case l >= slog.LevelError:
					errs++
				}
			}
			if tt.wantDebug != (debug > 0) {
				t.Errorf("LOG_LEVEL=%s: %d DEBUG records reached the log, want them: %v", tt.level, debug, tt.wantDebug)
			}
			if errs != 2 {
				t.Errorf("LOG_LEVEL=%s: %d ERROR records, want 2", tt.level, errs)
			}
		})
	}
}

// TestTemporalCompression: the processes dial Temporal without gRPC
// compression unless TEMPORAL_GRPC_COMPRESSION=gzip asks for the SDK's
// gzip; any other value is refused at start.
func TestTemporalCompression(t *testing.T) {
	for _, tt := range []struct {
		set  string
		want client.GrpcCompression
	}{{"", &client.GrpcCompressionNone{}}, {"none", &client.GrpcCompressionNone{}}, {"gzip", &client.GrpcCompressionGzip{}}} {
		t.Setenv("TEMPORAL_GRPC_COMPRESSION", tt.set)
		if tt.set == "" {
			if err := os.Unsetenv("TEMPORAL_GRPC_COMPRESSION"); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := config.Load()
		if err != nil {
			t.Fatal(err)
		}
		got := app.TemporalClientOptions(cfg, slog.Default(), nil).ConnectionOptions.GrpcCompression
		if reflect.TypeOf(got) != reflect.TypeOf(tt.want) {
			t.Errorf("TEMPORAL_GRPC_COMPRESSION=%q: dial with %T, want %T", tt.set, got, tt.want)
		}
	}
	t.Setenv("TEMPORAL_GRPC_COMPRESSION", "zstd")
	if _, err := config.Load(); err == nil || !strings.Contains(err.Error(), "TEMPORAL_GRPC_COMPRESSION") {
		t.Errorf("TEMPORAL_GRPC_COMPRESSION=zstd: %v, want a configuration error naming it", err)
	}
}

package app

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// ServeMetrics serves MetricsMux on addr, a listener of its own for the
// scraper and operators: the public port must not show internals. A
// failure to listen is logged and the process runs on without it. Close
// the returned server to stop it.
func ServeMetrics(addr string, metrics http.Handler, withPprof bool, log *slog.Logger) *http.Server {
	srv := &http.Server{Addr: addr, Handler: MetricsMux(metrics, withPprof), ReadHeaderTimeout: 5 * time.Second}
	// Bound before it returns: whoever reaches the process once it
	// serves its API finds /metrics too.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Warn("metrics server", "addr", addr, "err", err)
		return srv
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server", "addr", addr, "err", err)
		}
	}()
	return srv
}

// MetricsMux serves /metrics and, when pprof is set (DEBUG_PPROF), the
// runtime's profiles under /debug/pprof/: on the metrics listener, which
// only the scraper and operators reach, never on the public port.
func MetricsMux(metrics http.Handler, withPprof bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

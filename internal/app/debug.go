package app

import (
	"net/http"
	"net/http/pprof"
)

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

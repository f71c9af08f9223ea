// Package metrics exposes the service's Prometheus metrics: HTTP requests
// by route and status with latency, seat holds granted and refused, orders
// by status, and the Temporal SDK's client and worker metrics.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// Registry holds every metric of one process.
type Registry struct {
	reg          *prometheus.Registry
	HTTPRequests *prometheus.CounterVec
	HTTPDuration *prometheus.HistogramVec
	Holds        *prometheus.CounterVec
	log          *slog.Logger
}

// New registers the process's metrics.
func New(log *slog.Logger) *Registry {
	r := &Registry{reg: prometheus.NewRegistry(), log: log}
	r.HTTPRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketsales_http_requests_total", Help: "HTTP requests by route, method and status.",
	}, []string{"route", "method", "status"})
	r.HTTPDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "ticketsales_http_request_duration_seconds", Help: "HTTP request latency by route.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route", "method"})
	r.Holds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketsales_holds_total", Help: "Seat hold attempts by result (granted, refused).",
	}, []string{"result"})
	r.reg.MustRegister(r.HTTPRequests, r.HTTPDuration, r.Holds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves the registry in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

// Hold counts a hold decision; nil-safe so services work without metrics.
func (r *Registry) Hold(granted bool) {
	if r == nil {
		return
	}
	if granted {
		r.Holds.WithLabelValues("granted").Inc()
	} else {
		r.Holds.WithLabelValues("refused").Inc()
	}
}

// TemporalHandler reports the Temporal SDK's client and worker metrics
// (named as the SDK documents them: temporal_request, …) into this registry.
func (r *Registry) TemporalHandler() client.MetricsHandler {
	// NewReporter, not Configuration.NewReporter: the latter also mounts a
	// handler on the process-wide default mux, which a second call panics on.
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer:       r.reg,
		Gatherer:         r.reg,
		DefaultTimerType: tallyprom.HistogramTimerType,
		OnRegisterError:  func(err error) { r.log.Warn("temporal metric registration", "err", err) },
	})
	scope, _ := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope))
}

// CollectOrders exports the number of orders by status and environment,
// read from Postgres at scrape time.
func (r *Registry) CollectOrders(db bun.IDB) {
	r.reg.MustRegister(&ordersCollector{db: db, log: r.log, desc: prometheus.NewDesc("ticketsales_orders",
		"Orders by status and environment.", []string{"status", "environment"}, nil)})
}

type ordersCollector struct {
	db   bun.IDB
	log  *slog.Logger
	desc *prometheus.Desc
}

func (c *ordersCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *ordersCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var rows []struct {
		Status string
		IsTest bool
		N      int64
	}
	if err := c.db.NewRaw("SELECT status, is_test, count(*) AS n FROM orders GROUP BY status, is_test").Scan(ctx, &rows); err != nil {
		c.log.Warn("orders metric", "err", err)
		return
	}
	for _, r := range rows {
		env := "production"
		if r.IsTest {
			env = "sandbox"
		}
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(r.N), r.Status, env)
	}
}

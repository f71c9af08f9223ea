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

	"github.com/ticketsales/ticketsales/store"
)

// Registry holds every metric of one process.
type Registry struct {
	reg          *prometheus.Registry
	HTTPRequests *prometheus.CounterVec
	HTTPDuration *prometheus.HistogramVec
	Holds        *prometheus.CounterVec
	// MoneyAlerts counts money the service could not move as it must (a
	// refund out of retries, a payment it could not return): each needs an
	// operator.
	MoneyAlerts *prometheus.CounterVec
	// RequestLogRefused counts request log rows Postgres refused for their
	// own data: each is dropped, the rest of its batch written.
	RequestLogRefused prometheus.Counter
	// RedisFallbacks counts decisions of a limit shared through Redis (a
	// failure budget, or the request rate limits: "rate_limits") that were
	// made in this process's memory: Redis was unreachable.
	RedisFallbacks *prometheus.CounterVec
	log            *slog.Logger
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
	r.MoneyAlerts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketsales_money_alerts_total", Help: "Money that could not be moved as it must, by kind (refund_failed, payment_return_failed, payment_unknown); each needs an operator.",
	}, []string{"kind"})
	r.RequestLogRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ticketsales_request_log_refused_total", Help: "Request log rows Postgres refused for their own data and dropped (the rest of their batch is written).",
	})
	r.RedisFallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ticketsales_redis_fallbacks_total", Help: "Decisions of a limit shared through Redis (failure budgets, rate_limits) made in this process's memory because Redis was unreachable.",
	}, []string{"limit"})
	r.reg.MustRegister(r.HTTPRequests, r.HTTPDuration, r.Holds, r.MoneyAlerts, r.RequestLogRefused, r.RedisFallbacks,
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

// RequestLogRowRefused counts one dropped request log row; nil-safe.
func (r *Registry) RequestLogRowRefused() {
	if r != nil {
		r.RequestLogRefused.Inc()
	}
}

// MoneyAlert counts one money alert of a kind; nil-safe.
func (r *Registry) MoneyAlert(kind string) {
	if r != nil {
		r.MoneyAlerts.WithLabelValues(kind).Inc()
	}
}

// RedisFallback counts one decision of a limit shared through Redis made
// in memory; nil-safe.
func (r *Registry) RedisFallback(limit string) {
	if r != nil {
		r.RedisFallbacks.WithLabelValues(limit).Inc()
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

// CollectOrders exports, read from Postgres at scrape time, the number of
// orders, refunds and gateway payments by status and environment. Refunds
// "failed" and payments "refund_due" staying above zero need an operator.
func (r *Registry) CollectOrders(db bun.IDB) {
	byEnv := []string{"status", "environment"}
	r.reg.MustRegister(&statusCollector{db: db, log: r.log, queries: []statusQuery{
		{prometheus.NewDesc("ticketsales_orders", "Orders by status and environment.", byEnv, nil), store.OrderCounts},
		{prometheus.NewDesc("ticketsales_refunds", "Refunds by status (pending, completed, failed) and environment.", byEnv, nil), store.RefundCounts},
		{prometheus.NewDesc("ticketsales_gateway_payments", "Payments gateways reported, by status (received, applied, refund_due, refunded) and gateway.",
			[]string{"status", "gateway"}, nil), store.PaymentCounts},
	}})
}

type statusQuery struct {
	desc  *prometheus.Desc
	count func(context.Context, bun.IDB) ([]store.StatusCount, error)
}

type statusCollector struct {
	db      bun.IDB
	log     *slog.Logger
	queries []statusQuery
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, q := range c.queries {
		ch <- q.desc
	}
}

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	for _, q := range c.queries {
		rows, err := q.count(ctx, c.db)
		if err != nil {
			c.log.Warn("status metric", "err", err)
			continue
		}
		for _, r := range rows {
			ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(r.N), r.Status, r.Label)
		}
	}
}

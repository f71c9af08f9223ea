package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// metricValue sums the samples of a family whose labels include labels.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

func TestMetricsScrape(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	f.Get(t, "/v1/cities", f.keyA)
	var r reservationBody
	f.reserve(t, f.keyA, "parterre-1-1").Decode(t, &r)
	f.reserve(t, f.keyA, "parterre-1-1") // refused
	f.orderFromReservation(t, f.keyA, r.Data.ID, "external")

	// The public port does not serve the metrics: cmd/api serves the
	// registry on a listener of its own (METRICS_ADDR).
	expectProblem(t, f.Get(t, "/metrics", ""), http.StatusNotFound, "not_found")
	scrape := func() map[string]*dto.MetricFamily {
		rec := httptest.NewRecorder()
		f.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != 200 {
			t.Fatalf("/metrics: %d", rec.Code)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(rec.Body)
		if err != nil {
			t.Fatalf("parse /metrics: %v", err)
		}
		return fams
	}
	// The SDK's metrics reach Prometheus on the next report tick (1 s).
	fams := scrape()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if v, _ := metricValue(fams, "temporal_request_total", nil); v > 0 {
			break
		}
		fams = scrape()
	}
	checks := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"ticketsales_http_requests_total", map[string]string{"route": "GET /v1/cities", "method": "GET", "status": "200"}, 1},
		{"ticketsales_http_requests_total", map[string]string{"route": "POST /v1/reservations", "status": "409"}, 1},
		{"ticketsales_http_request_duration_seconds", map[string]string{"route": "GET /v1/cities"}, 1},
		{"ticketsales_holds_total", map[string]string{"result": "granted"}, 1},
		{"ticketsales_holds_total", map[string]string{"result": "refused"}, 1},
		{"ticketsales_orders", map[string]string{"status": "pending_payment", "environment": "sandbox"}, 1},
		{"temporal_request_total", nil, 1}, // the SDK's client metrics: workflow starts
	}
	for _, c := range checks {
		v, ok := metricValue(fams, c.name, c.labels)
		if !ok || v < c.min {
			t.Errorf("%s%v = %v (present %v), want ≥ %v", c.name, c.labels, v, ok, c.min)
		}
	}
}

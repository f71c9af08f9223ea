package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ticketsales/ticketsales/internal/app"
)

// The metrics listener serves profiles only when DEBUG_PPROF asks for them.
func TestMetricsMuxServesProfilesOnlyWhenAsked(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("up 1\n")) })
	for _, on := range []bool{false, true} {
		srv := httptest.NewServer(app.MetricsMux(metrics, on))
		for path, want := range map[string]int{"/metrics": 200, "/debug/pprof/": map[bool]int{false: 404, true: 200}[on],
			"/debug/pprof/goroutine?debug=1": map[bool]int{false: 404, true: 200}[on]} {
			res, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Errorf("pprof %v: %s answered %d, want %d", on, path, res.StatusCode, want)
			}
		}
		srv.Close()
	}
}

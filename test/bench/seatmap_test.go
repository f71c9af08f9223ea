package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/api/seatmapjs"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// The seat map part: <ticket-seat-map> drawing the 10,000-seat hall of the
// maps' tests (testenv.ZonedHallCatalog(10, 40, 25)) in headless Chromium,
// and what its availability poll costs on the wire.
const (
	seatMapLoads      = 10 // page loads measured at each width, after one cold load
	seatMapPanFrames  = 60 // frames of one drag, one drag after each load
	seatMapIdleFrames = 30 // frames left alone before it
)

var seatMapWidths = []struct {
	name   string
	w, h   int64
	mobile bool
}{{"1280", 1280, 900, false}, {"390", 390, 844, true}}

// Spread is a sample's median, p95 (the nearest lower rank) and maximum, in ms.
type Spread struct {
	Median float64 `json:"median_ms"`
	P95    float64 `json:"p95_ms"`
	Max    float64 `json:"max_ms"`
	N      int     `json:"n"`
}

func spread(ms []float64) Spread {
	d := make([]time.Duration, len(ms))
	for i, v := range ms {
		d[i] = time.Duration(v * float64(time.Millisecond))
	}
	slices.Sort(d)
	return Spread{Median: percentile(d, .5), P95: percentile(d, .95), Max: percentile(d, 1), N: len(d)}
}

// FirstDraw is one page load's timings, in ms from the navigation's start
// (performance.now()).
type FirstDraw struct {
	Connected float64 `json:"connected"` // the element parsed into the page (connected, upgraded)
	Data      float64 `json:"data"`      // the scheme's and availability's answers both received
	Ready     float64 `json:"ready"`     // seatmap:ready: every seat in the DOM, the view fitted
	Painted   float64 `json:"painted"`   // the first frame after ready rendered
	Seats     int     `json:"seats"`
	Fetches   int     `json:"fetches"`
	Error     any     `json:"error"`
}

// SeatMapWidth is what one viewport width measured.
type SeatMapWidth struct {
	NavToReady       Spread `json:"nav_to_ready"`
	NavToPainted     Spread `json:"nav_to_painted"`
	ConnectedToPaint Spread `json:"connected_to_painted"`
	DataToPainted    Spread `json:"data_to_painted"`
	Idle             Spread `json:"idle_frames"`
	Pan              Spread `json:"pan_frames"`
}

// WireBytes is one request's bytes on an HTTP/1.1 connection.
type WireBytes struct {
	Status   int    `json:"status"`
	Request  int64  `json:"request_bytes"`
	Response int64  `json:"response_bytes"` // status line, headers and body as sent
	Body     int64  `json:"body_bytes"`     // the body as sent (gzip when so encoded)
	Encoding string `json:"content_encoding,omitempty"`
}

// seatMapBenchPage is a shop's page with the component reading from the
// service with a seat map token, and a clock: window.bench.
var seatMapBenchPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="ru"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<script>window.bench = {};
document.addEventListener('seatmap:ready', (e) => {
  bench.ready = performance.now(); bench.seats = e.detail.seat_count;
  // A task queued from the next frame's animation callback runs after
  // that frame's style, layout and paint: the seats drawn.
  requestAnimationFrame(() => setTimeout(() => { bench.painted = performance.now(); }));
});
document.addEventListener('seatmap:error', (e) => { bench.error = e.detail; });</script>
<script src="{{.Script}}"></script></head>
<body><main><h1>{{.Title}}</h1>
<ticket-seat-map base-url="{{.Base}}" event-id="{{.Event}}" token="{{.Token}}"></ticket-seat-map>
<script>bench.connected = performance.now();</script>
</main></body></html>`))

const readFirstDraw = `(() => {
  const r = performance.getEntriesByType('resource').filter(e => /\/seat-map\/v1\/events\/[^/]+\/(scheme|availability)$/.test(e.name) && e.startTime < bench.ready);
  return {connected: bench.connected, ready: bench.ready, painted: bench.painted || 0, data: Math.max(0, ...r.map(e => e.responseEnd)),
    fetches: r.length, seats: bench.seats || 0, error: bench.error || null};
})()`

// benchSeatMap measures the map in Chromium at each width, then the bytes
// of its polls. event is the 10,000-seat hall's, key a sandbox key of its
// company (the shop's server's: it makes the seat map tokens).
func benchSeatMap(t *testing.T, s *testenv.Stack, key string, event int64) map[string]any {
	url := s.ProductionLikeAPI(t)
	title := "Гала-концерт «Десять тысяч голосов»"
	token := func() string {
		t.Helper()
		res := testenv.Do(t, url, http.MethodPost, fmt.Sprintf("/v1/events/%d/seat-map-tokens", event), key, `{"ttl_minutes": 30}`)
		var tok struct{ Data struct{ Token string } }
		res.Decode(t, &tok)
		if res.Status != http.StatusCreated || tok.Data.Token == "" {
			t.Fatalf("seat map token: %d %s", res.Status, res.Body)
		}
		return tok.Data.Token
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = seatMapBenchPage.Execute(w, map[string]any{"Title": title, "Script": url + seatmapjs.Path, "Base": url,
			"Event": event, "Token": r.URL.Query().Get("token")})
	}))
	defer page.Close()

	ctx := testenv.Browser(t, 10*time.Minute)
	// One page load: a token of its own (as a shop makes one per page view;
	// the read budget is per token), the first draw's timings.
	load := func() FirstDraw {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(page.URL+"/?token="+token())); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.bench && (bench.painted || bench.error))`,
			chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))); err != nil {
			t.Fatalf("the map never drew: %v", err)
		}
		d, err := chromedp.Run(ctx, chromedp.Evaluate[FirstDraw](readFirstDraw))
		if err != nil || d.Error != nil || d.Seats != 10_000 || d.Fetches != 2 {
			t.Fatalf("first draw: %+v %v", d, err)
		}
		return d
	}
	ua, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.userAgent`))
	version := ""
	if m := regexp.MustCompile(`Chrome/([0-9.]+)`).FindStringSubmatch(ua); m != nil {
		version = m[1]
	}
	out := map[string]any{"seats": 10_000, "loads": seatMapLoads, "chromium": version,
		"gpu": false, "pan_frames_per_load": seatMapPanFrames, "idle_frames_per_load": seatMapIdleFrames}
	widths := map[string]SeatMapWidth{}
	for i, vp := range seatMapWidths {
		var opts []chromedp.EmulateViewportOption
		if vp.mobile {
			opts = append(opts, chromedp.EmulateMobile)
		}
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.w, vp.h, opts...)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			// A fresh browser: no script in its cache, no preflight of the
			// reads cached, nothing compiled.
			out["cold_load"] = load()
			// The user agent string says only the major version.
			if full, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.userAgentData ?
			  navigator.userAgentData.getHighEntropyValues(['uaFullVersion']).then(v => v.uaFullVersion || '') : ''`, chromedp.EvalAwaitPromise)); full != "" {
				out["chromium"] = full
			}
		}
		var ready, painted, connected, data, idle, pan []float64
		for range seatMapLoads {
			d := load()
			ready, painted = append(ready, d.Ready), append(painted, d.Painted)
			connected, data = append(connected, d.Painted-d.Connected), append(data, d.Painted-d.Data)
			time.Sleep(500 * time.Millisecond) // what the load left (a collection) settles
			f, err := testenv.SeatMapPan(ctx, seatMapIdleFrames, seatMapPanFrames, vp.mobile)
			if err != nil {
				t.Fatal(err)
			}
			idle, pan = append(idle, f.Idle...), append(pan, f.Pan...)
		}
		widths[vp.name] = SeatMapWidth{NavToReady: spread(ready), NavToPainted: spread(painted), ConnectedToPaint: spread(connected),
			DataToPainted: spread(data), Idle: spread(idle), Pan: spread(pan)}
	}
	out["widths"] = widths
	// The browser stops before the polls are counted.
	_ = chromedp.Cancel(ctx)
	out["poll"] = seatMapPollBytes(t, url, key, event, token(), page.URL, ua)
	return out
}

// wire counts the bytes its connections carry each way.
type wire struct{ in, out atomic.Int64 }

type countedConn struct {
	net.Conn
	w *wire
}

func (c countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.in.Add(int64(n))
	return n, err
}

func (c countedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.w.out.Add(int64(n))
	return n, err
}

// client is an HTTP/1.1 client whose connections w counts, which leaves
// the body as sent (no transparent gzip).
func (w *wire) client() *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countedConn{c, w}, nil
		}}}
}

// do sends req and reads the whole answer: its bytes each way, and its
// ETag.
func (w *wire) do(t *testing.T, c *http.Client, req *http.Request) (WireBytes, string) {
	t.Helper()
	in, out := w.in.Load(), w.out.Load()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := readAll(res)
	if err != nil {
		t.Fatal(err)
	}
	return WireBytes{Status: res.StatusCode, Request: w.out.Load() - out, Response: w.in.Load() - in, Body: int64(len(body)),
		Encoding: res.Header.Get("Content-Encoding")}, res.Header.Get("ETag")
}

// seatMapPollBytes counts what the component's reads cost on the wire,
// sent as Chromium's fetch sends them from a shop's page (the same
// headers, a user agent as long as the browser's): the first load's
// script, scheme and availability; a poll when nothing changed (304);
// a poll after another buyer held one seat (200, that seat alone), and the
// same poll without since (the whole hall).
func seatMapPollBytes(t *testing.T, url, key string, event int64, token, origin, ua string) map[string]WireBytes {
	var w wire
	c := w.client()
	get := func(path, etag string) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Origin", origin)
		req.Header.Set("Referer", origin+"/")
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		return req
	}
	out := map[string]WireBytes{}
	script := get(seatmapjs.Path, "")
	script.Header.Del("Authorization")
	script.Header.Set("Accept", "*/*")
	out["script"], _ = w.do(t, c, script)
	out["scheme"], _ = w.do(t, c, get(fmt.Sprintf("/seat-map/v1/events/%d/scheme", event), ""))
	avail := fmt.Sprintf("/seat-map/v1/events/%d/availability", event)
	first, etag := w.do(t, c, get(avail, ""))
	out["availability"] = first
	// The component names the availability it holds as since too.
	since := func(etag string) string { return avail + "?since=" + strings.Trim(etag, `"`) }
	same, again := w.do(t, c, get(since(etag), etag))
	if same.Status != http.StatusNotModified || again != etag {
		t.Fatalf("a poll of an unchanged hall: %+v, ETag %q then %q", same, etag, again)
	}
	out["poll_not_modified"] = same
	// Another buyer holds one seat; the next poll that sees it (the cache
	// learns of it by notification) carries that seat alone, where a poll
	// without since carries the whole hall again.
	hold := testenv.Do(t, url, http.MethodPost, "/v1/reservations", key,
		fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "z1", "seat_id": "z1-1-1"}]}`, event), "Idempotency-Key: seatmap-bench-hold")
	if hold.Status != http.StatusCreated {
		t.Fatalf("hold one seat: %d %s", hold.Status, hold.Body)
	}
	// A poll every 250 ms stays inside the token's read budget.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		p, _ := w.do(t, c, get(since(etag), etag))
		if p.Status == http.StatusOK {
			out["poll_one_seat_changed"] = p
			out["poll_one_seat_changed_whole"], _ = w.do(t, c, get(avail, etag))
			break
		}
		if p.Status != http.StatusNotModified || time.Now().After(deadline) {
			t.Fatalf("a poll after one seat was held: %+v", p)
		}
	}
	return out
}

// seatMapTable is the seat map part's figures, for seatmap.md and latest.md.
func seatMapTable(c map[string]any) string {
	var md strings.Builder
	widths := c["widths"].(map[string]SeatMapWidth)
	cold := c["cold_load"].(FirstDraw)
	sp := func(s Spread) string { return fmt.Sprintf("%.0f / %.0f / %.0f", s.Median, s.P95, s.Max) }
	spf := func(s Spread) string { return fmt.Sprintf("%.1f / %.1f / %.1f", s.Median, s.P95, s.Max) }
	w1, w3 := widths["1280"], widths["390"]
	fmt.Fprintf(&md, "The 10,000-seat hall (10 zones of 40 rows of 25 seats, a stage) in `<ticket-seat-map>` on a shop's page, "+
		"reading from the service with a seat map token; headless Chromium %s without GPU (software rendering), 390 px as a phone "+
		"at device scale 1, on the same machine as the stack. Each width: %v page loads, each followed by %v idle frames and a drag "+
		"of %v frames; the browser's first, cold load (nothing cached) apart.\n\n",
		c["chromium"], c["loads"], c["idle_frames_per_load"], c["pan_frames_per_load"])
	md.WriteString("First draw, ms: median / p95 / max.\n\n| from → to | 1280 px | 390 px | cold load, 1280 px |\n|---|---|---|---|\n")
	fmt.Fprintf(&md, "| navigation start → `seatmap:ready` | %s | %s | %.0f |\n", sp(w1.NavToReady), sp(w3.NavToReady), cold.Ready)
	fmt.Fprintf(&md, "| navigation start → the first frame after it painted | %s | %s | %.0f |\n", sp(w1.NavToPainted), sp(w3.NavToPainted), cold.Painted)
	fmt.Fprintf(&md, "| the element connected → painted | %s | %s | %.0f |\n", sp(w1.ConnectedToPaint), sp(w3.ConnectedToPaint), cold.Painted-cold.Connected)
	fmt.Fprintf(&md, "| scheme and availability received → painted (the component's own work) | %s | %s | %.0f |\n\n",
		sp(w1.DataToPainted), sp(w3.DataToPainted), cold.Painted-cold.Data)
	md.WriteString("Frames (gaps between `requestAnimationFrame` timestamps), ms: median / p95 / max.\n\n| | 1280 px | 390 px |\n|---|---|---|\n")
	fmt.Fprintf(&md, "| left alone (%d frames) | %s | %s |\n", w1.Idle.N, spf(w1.Idle), spf(w3.Idle))
	fmt.Fprintf(&md, "| dragged, one pointer move a frame (%d frames) | %s | %s |\n\n", w1.Pan.N, spf(w1.Pan), spf(w3.Pan))
	poll := c["poll"].(map[string]WireBytes)
	md.WriteString("Bytes on the wire (HTTP/1.1, as Chromium's fetch sends the reads: `Accept-Encoding: gzip, deflate, br, zstd`, " +
		"the token, the origin, a browser's user agent).\n\n| request | status | answer: headers + body | of which body | request |\n|---|---|---|---|---|\n")
	for _, r := range []struct{ what, key string }{
		{"poll, nothing changed", "poll_not_modified"}, {"poll, one seat changed (`since`, as the component asks)", "poll_one_seat_changed"},
		{"the same poll without `since` (a proxy that drops it)", "poll_one_seat_changed_whole"},
		{"first load: the script", "script"}, {"first load: the scheme", "scheme"}, {"first load: availability", "availability"},
	} {
		b := poll[r.key]
		enc := ""
		if b.Encoding != "" {
			enc = " " + b.Encoding
		}
		fmt.Fprintf(&md, "| %s | %d%s | %d | %d | %d |\n", r.what, b.Status, enc, b.Response, b.Body, b.Request)
	}
	return md.String()
}

// writeSeatMap writes results/seatmap.{json,md}.
func writeSeatMap(t *testing.T, when time.Time, cores int, c map[string]any) {
	b, _ := json.MarshalIndent(map[string]any{"when": when, "cores": cores, "seatmap": c}, "", "  ")
	if err := os.WriteFile("results/seatmap.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Seat map: first draw, pan frames and poll bytes\n\n%s, %d cores (a shared machine). Regenerate with "+
		"`BENCH=1 BENCH_ONLY=seatmap scripts/test.sh -run TestBench -v ./test/bench/ -timeout 15m`.\n\n", when.Format(time.RFC3339), cores)
	md.WriteString(seatMapTable(c))
	if err := os.WriteFile("results/seatmap.md", []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
}

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// channelRows: a 100 × 100 hall split into 4 channels of 16 rows (1,600
// seats each) and general sale's 36 rows (3,600 seats).
const channelRows, channelCount = 16, 4

// benchChannels compares a 10,000-seat event split across 4 channels and
// general sale with the same event unallocated, in the same run: hold
// latency by keys of every channel and of general sale (each on seats it
// may hold), and availability req/s of all 5 views.
func benchChannels(t *testing.T, s *testenv.Stack, company, split, plain int64) map[string]any {
	ctx := context.Background()
	dist := distribution.New(s.DB, nil, nil, distribution.Settings{})
	general, _ := s.Key(t, company, apikey.Sandbox)
	keys := []string{general}
	for i := 1; i <= channelCount; i++ {
		app := fmt.Sprintf("channel-%d", i)
		key := s.KeyIn(t, company, apikey.Sandbox, app)
		ch, err := store.UpsertChannel(ctx, s.DB, company, app, "Channel "+app)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.SetApplicationChannel(ctx, s.DB, company, apikey.Sandbox, app, ch.ID); err != nil {
			t.Fatal(err)
		}
		from, to := (i-1)*channelRows+1, i*channelRows
		mv, err := dist.AllocateSeats(ctx, company, split, ch.ID, distribution.Selector{Rows: []distribution.RowRange{
			{Zone: "a", From: fmt.Sprint(from), To: fmt.Sprint(to)}}})
		if err != nil || len(mv.Moved) != channelRows*100 {
			t.Fatalf("allocate rows %d-%d: %d moved, %v", from, to, len(mv.Moved), err)
		}
		keys = append(keys, key)
	}
	url := s.ProductionLikeAPI(t)
	conc := 15 // 3 per key
	out := map[string]any{"seats": 10000, "channels": channelCount, "seats_per_channel": channelRows * 100,
		"general_seats": 10000 - channelCount*channelRows*100, "concurrency": conc}

	// Holds: each key on its own rows (general sale's: rows 65..100), one
	// seat a request; the two events take turns, so drifts fall on both.
	next := map[int64][]*atomic.Int64{split: counters(len(keys)), plain: counters(len(keys))}
	var splitLat, plainLat []time.Duration
	var splitFail, plainFail int64
	for range 4 {
		for _, ev := range []int64{split, plain} {
			lat, fails := holdTurn(url, ev, keys, next[ev], conc, benchDur/4)
			if ev == split {
				splitLat, splitFail = append(splitLat, lat...), splitFail+fails
			} else {
				plainLat, plainFail = append(plainLat, lat...), plainFail+fails
			}
		}
	}
	hs, hp := summarise(splitLat, 0, 0, int(splitFail)), summarise(plainLat, 0, 0, int(plainFail))
	out["hold_split"], out["hold_plain"] = hs, hp
	out["hold_p99_ratio"] = ratio(hs.P99ms, hp.P99ms)

	// Availability: each of the 5 views of the split event beside the same
	// key's view of the plain one.
	var avSplit, avPlain sample
	for _, key := range keys {
		h := http.Header{"Authorization": {"Bearer " + key}, "Accept-Encoding": {"gzip"}}
		for range 2 {
			avSplit.add(load(fmt.Sprintf("%s/v1/events/%d/availability", url, split), h, 200, 16, benchDur/10))
			avPlain.add(load(fmt.Sprintf("%s/v1/events/%d/availability", url, plain), h, 200, 16, benchDur/10))
		}
	}
	as, ap := avSplit.summary(), avPlain.summary()
	out["availability_split"], out["availability_plain"] = as, ap
	out["availability_rps_ratio"] = ratio(as.RPS, ap.RPS)
	out["within_10pct"] = hs.P99ms <= 1.1*hp.P99ms && as.RPS >= 0.9*ap.RPS
	return out
}

func counters(n int) []*atomic.Int64 {
	out := make([]*atomic.Int64, n)
	for i := range out {
		out[i] = new(atomic.Int64)
	}
	return out
}

// holdTurn holds seats of the event for d with conc workers spread over
// the keys: key 0 (general sale) on rows 65..100, key i on channel i's
// rows; every hold's latency, and the refusals.
func holdTurn(url string, event int64, keys []string, next []*atomic.Int64, conc int, d time.Duration) ([]time.Duration, int64) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	var lat = make([][]time.Duration, conc)
	var fails atomic.Int64
	done := make(chan struct{})
	for w := range conc {
		go func() {
			defer func() { done <- struct{}{} }()
			k := w % len(keys)
			first, rows := channelCount*channelRows+1, 100-channelCount*channelRows
			if k > 0 {
				first, rows = (k-1)*channelRows+1, channelRows
			}
			for deadline := time.Now().Add(d); time.Now().Before(deadline); {
				n := int(next[k].Add(1) - 1)
				if n >= rows*100 {
					return
				}
				seat := fmt.Sprintf("a-%d-%d", first+n/100, n%100+1)
				body := fmt.Sprintf(`{"event_id": %d, "seats": [{"zone_id": "a", "seat_id": %q}]}`, event, seat)
				req, _ := http.NewRequest(http.MethodPost, url+"/v1/reservations", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+keys[k])
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", fmt.Sprintf("ch-%d-%s", event, seat))
				t0 := time.Now()
				res, err := client.Do(req)
				if err == nil {
					_, _ = readAll(res)
				}
				if err != nil || res.StatusCode != http.StatusCreated {
					fails.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	for range conc {
		<-done
	}
	return slices.Concat(lat...), fails.Load()
}

// channelsTable is the channels part's comparison, for channels.md and
// latest.md.
func channelsTable(c map[string]any) string {
	hs, hp := c["hold_split"].(LoadResult), c["hold_plain"].(LoadResult)
	as, ap := c["availability_split"].(LoadResult), c["availability_plain"].(LoadResult)
	var md strings.Builder
	fmt.Fprintf(&md, "10,000 seats: %v channels of %v seats and general sale's %v, against the same hall with no allocation. "+
		"Holds by keys of every channel and of general sale (concurrency %v, one seat a request, the events taking turns); "+
		"availability read by all 5 views (concurrency 16).\n\n", c["channels"], c["seats_per_channel"], c["general_seats"], c["concurrency"])
	md.WriteString("| | split | unallocated | ratio |\n|---|---|---|---|\n")
	fmt.Fprintf(&md, "| holds p50 / p99 ms | %.2f / %.2f | %.2f / %.2f | p99 %.1f%% |\n", hs.P50ms, hs.P99ms, hp.P50ms, hp.P99ms, 100*num(c, "hold_p99_ratio"))
	fmt.Fprintf(&md, "| holds made (refused) | %d (%d) | %d (%d) | |\n", hs.Requests, hs.Failures, hp.Requests, hp.Failures)
	fmt.Fprintf(&md, "| availability req/s | %.0f | %.0f | %.1f%% |\n", as.RPS, ap.RPS, 100*num(c, "availability_rps_ratio"))
	fmt.Fprintf(&md, "| availability p99 ms | %.2f | %.2f | |\n\nWithin 10%%: %v.\n", as.P99ms, ap.P99ms, c["within_10pct"])
	return md.String()
}

// writeChannels writes results/channels.{json,md}.
func writeChannels(t *testing.T, when time.Time, cores int, c map[string]any) {
	b, _ := json.MarshalIndent(map[string]any{"when": when, "cores": cores, "channels": c}, "", "  ")
	if err := os.WriteFile("results/channels.json", append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# Channels: a split event beside the same event unallocated\n\n%s, %d cores. Regenerate with "+
		"`BENCH=1 BENCH_ONLY=channels scripts/test.sh -run TestBench -v ./test/bench/ -timeout 20m`.\n\n", when.Format(time.RFC3339), cores)
	md.WriteString(channelsTable(c))
	if err := os.WriteFile("results/channels.md", []byte(md.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + md.String())
}

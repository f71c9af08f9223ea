// Package bench measures the service against physical limits on this
// machine: see `make bench` and test/bench/results/latest.md.
package bench

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// LoadResult summarises a closed-loop load run.
type LoadResult struct {
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
	RPS      float64 `json:"rps"`
	P50ms    float64 `json:"p50_ms"`
	P99ms    float64 `json:"p99_ms"`
	BytesPer int64   `json:"bytes_per_response"`
	Failures int     `json:"failures"`
}

func percentile(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return float64(sorted[i].Microseconds()) / 1000
}

func summarise(lat []time.Duration, elapsed time.Duration, bytes int64, failures int) LoadResult {
	slices.Sort(lat)
	r := LoadResult{Requests: len(lat), Seconds: elapsed.Seconds(), Failures: failures,
		P50ms: percentile(lat, .50), P99ms: percentile(lat, .99)}
	if elapsed > 0 {
		r.RPS = float64(len(lat)) / elapsed.Seconds()
	}
	if len(lat) > 0 {
		r.BytesPer = bytes / int64(len(lat))
	}
	return r
}

// sample is the raw outcome of load runs, to be summarised.
type sample struct {
	lat      []time.Duration
	elapsed  time.Duration
	bytes    int64
	failures int
}

func (s *sample) add(o sample) {
	s.lat = append(s.lat, o.lat...)
	s.elapsed += o.elapsed
	s.bytes += o.bytes
	s.failures += o.failures
}

func (s sample) summary() LoadResult { return summarise(s.lat, s.elapsed, s.bytes, s.failures) }

// Load runs conc workers issuing GET url with headers for dur, each
// waiting for its response before the next (closed loop, keep-alive).
func Load(url string, headers http.Header, want int, conc int, dur time.Duration) LoadResult {
	return load(url, headers, want, conc, dur).summary()
}

// Compare loads two servers in turns of dur/rounds each, so that whatever
// else the machine does in the meantime falls on both alike.
func Compare(urlA, urlB string, headers http.Header, want int, conc int, dur time.Duration, rounds int) (a, b LoadResult) {
	var sa, sb sample
	for range rounds {
		sa.add(load(urlA, headers, want, conc, dur/time.Duration(rounds)))
		sb.add(load(urlB, headers, want, conc, dur/time.Duration(rounds)))
	}
	return sa.summary(), sb.summary()
}

func load(url string, headers http.Header, want int, conc int, dur time.Duration) sample {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true}
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	var mu sync.Mutex
	var all []time.Duration
	var bytes int64
	failures := 0
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			var b int64
			fails := 0
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header = headers.Clone()
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					fails++
					continue
				}
				n, _ := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != want {
					fails++
					continue
				}
				lat = append(lat, time.Since(t0))
				b += n
			}
			mu.Lock()
			all = append(all, lat...)
			bytes += b
			failures += fails
			mu.Unlock()
		}()
	}
	wg.Wait()
	return sample{lat: all, elapsed: time.Since(start), bytes: bytes, failures: failures}
}

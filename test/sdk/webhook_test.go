package sdk_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// delivery is one webhook POST as it arrived: the raw body and headers.
type delivery struct {
	body   []byte
	header http.Header
}

// hookReceiver takes the service's webhook deliveries on loopback (a
// sandbox endpoint of a development deployment may name it) and keeps
// them unverified: the SDK under test verifies them.
type hookReceiver struct {
	mu    sync.Mutex
	got   []delivery
	srv   *httptest.Server
	added chan struct{}
}

// subscribeHooks adds an endpoint of the key's application for types
// that delivers to a new receiver, and returns the receiver and the
// endpoint's signing secret.
func subscribeHooks(t *testing.T, base, key string, types ...string) (*hookReceiver, string) {
	t.Helper()
	r := &hookReceiver{added: make(chan struct{}, 100)}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{body: body, header: req.Header.Clone()})
		r.mu.Unlock()
		r.added <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	in, _ := json.Marshal(map[string]any{"url": r.srv.URL + "/hooks", "event_types": types, "description": "quickstart test"})
	req, err := http.NewRequest(http.MethodPost, base+"/v1/webhook-endpoints", bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", rand.Text())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("create a webhook endpoint: %d %s", res.StatusCode, b)
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.Data.Secret == "" {
		t.Fatalf("the endpoint's secret: %v", err)
	}
	return r, out.Data.Secret
}

// ofType waits for the first delivery of an event of type typ (deliveries
// of different events may arrive in any order).
func (r *hookReceiver) ofType(t *testing.T, typ string) delivery {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for seen := 0; ; {
		r.mu.Lock()
		for _, d := range r.got[seen:] {
			var ev struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(d.body, &ev) == nil && ev.Type == typ {
				r.mu.Unlock()
				return d
			}
		}
		seen = len(r.got)
		r.mu.Unlock()
		select {
		case <-r.added:
		case <-deadline:
			t.Fatalf("no %s webhook delivered within 30 s", typ)
		}
	}
}

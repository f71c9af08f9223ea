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

// first waits for the first delivery.
func (r *hookReceiver) first(t *testing.T) delivery {
	t.Helper()
	select {
	case <-r.added:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivered within 30 s")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[0]
}

package webhooks_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/internal/webhooks"
	"github.com/ticketsales/ticketsales/store"
)

// Signatures verify with the specification's reference library, and during
// a rotation with either secret.
func TestSignaturesVerifyWithTheReferenceLibrary(t *testing.T) {
	oldSecret, newSecret := webhooks.NewSecret(), webhooks.NewSecret()
	body := []byte(`{"id":"evt_1","type":"order.paid","data":{"id":42}}`)
	now := time.Now()
	h, err := webhooks.Headers([]string{newSecret, oldSecret}, "evt_1", now, body)
	if err != nil {
		t.Fatal(err)
	}
	header := http.Header{}
	for k, v := range h {
		header.Set(k, v)
	}
	for _, s := range []string{newSecret, oldSecret} {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(body, header); err != nil {
			t.Fatalf("verify: %v (%s)", err, h[webhooks.HeaderSignature])
		}
		// The library's own signature is ours.
		sig, _ := wh.Sign("evt_1", now, body)
		if !strings.Contains(h[webhooks.HeaderSignature], sig) {
			t.Fatalf("library signs %s, we sent %s", sig, h[webhooks.HeaderSignature])
		}
	}
	wh, _ := standardwebhooks.NewWebhook(webhooks.NewSecret())
	if err := wh.Verify(body, header); err == nil {
		t.Fatal("another secret verified")
	}
	tampered := append([]byte{}, body...)
	tampered[10] = 'X'
	wh, _ = standardwebhooks.NewWebhook(newSecret)
	if err := wh.Verify(tampered, header); err == nil {
		t.Fatal("a changed body verified")
	}
}

func TestForbiddenAddresses(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.0.1": true,
		"169.254.169.254": true, "fe80::1": true, "fc00::1": true, "0.0.0.0": true, "::": true, "224.0.0.1": true,
		"100.64.0.1": true, "::ffff:127.0.0.1": true, "::ffff:169.254.169.254": true, "64:ff9b::a9fe:a9fe": true,
		"::127.0.0.1": true, "::ffff:0:a9fe:a9fe": true, "2002:7f00:1::1": true, "2001:0:4136:e378:8000:63bf:3fff:fdd2": true,
		"fec0::1": true, "64:ff9b:1::a9fe:a9fe": true, "255.255.255.255": true,
		"93.184.215.14": false, "8.8.8.8": false, "2606:4700:4700::1111": false,
	} {
		if got := webhooks.Forbidden(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Forbidden(%s) = %v", addr, got)
		}
	}
}

// At delivery time the dialler refuses a forbidden address whatever name
// led to it: a name that resolves to loopback now (DNS rebinding) is
// refused though the name itself passed no check.
func TestDialerRefusesForbiddenAddresses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, p := range []webhooks.Policy{webhooks.PolicyFor(false, true), webhooks.PolicyFor(true, false)} {
		c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Control: p.Control}).DialContext}}
		for _, u := range []string{srv.URL, "http://localhost:" + port} {
			_, err := c.Post(u, "application/json", nil)
			if err == nil || !errors.Is(err, webhooks.ErrForbiddenAddress) {
				t.Fatalf("%+v posting to %s: %v", p, u, err)
			}
		}
	}
	// A sandbox endpoint in development may reach the partner's laptop.
	p := webhooks.PolicyFor(true, true)
	c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Control: p.Control}).DialContext}}
	res, err := c.Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	prod := webhooks.PolicyFor(true, false) // production endpoints, even in development
	for _, u := range []string{"http://93.184.215.14/", "https://user:pw@93.184.215.14/", "https://127.0.0.1/", "https://localhost/",
		"https://api.localhost/", "https://169.254.169.254/", "/relative", "https://93.184.215.14/#frag"} {
		if err := prod.CheckURL(ctx, u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
	if err := prod.CheckURL(ctx, "https://93.184.215.14/hooks?x=1"); err != nil {
		t.Fatal(err)
	}
	sandboxDev := webhooks.PolicyFor(true, true)
	if err := sandboxDev.CheckURL(ctx, "http://127.0.0.1:8080/hooks"); err != nil {
		t.Fatal(err)
	}
	sandboxProd := webhooks.PolicyFor(false, true)
	if err := sandboxProd.CheckURL(ctx, "http://127.0.0.1:8080/hooks"); err == nil {
		t.Fatal("a sandbox endpoint on loopback outside development")
	}
}

// An event whose data cannot be read is retried for a while, then sent with
// its ids only, so it does not hold up the events behind it.
func TestRelaySendsAnUnreadableEventWithItsIDs(t *testing.T) {
	r := &webhooks.Relay{Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Render: func(context.Context, *store.WebhookEvent) (any, error) { return nil, errors.New("cannot read") }}
	order := int64(42)
	fresh := &store.WebhookEvent{ID: "evt_1", Type: states.EventOrderPaid, OrderID: &order, CreatedAt: time.Now()}
	if _, err := webhooks.RenderBody(r, context.Background(), fresh); err == nil {
		t.Fatal("a fresh event went out without its data")
	}
	old := *fresh
	old.CreatedAt = time.Now().Add(-2 * time.Minute)
	b, err := webhooks.RenderBody(r, context.Background(), &old)
	if err != nil || !strings.Contains(string(b), `"data":{"id":42}`) {
		t.Fatalf("%s %v", b, err)
	}
}

package ticketsales

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// signed is a delivery of body signed with each secret at at, as the
// service signs it (the reference library's signer).
func signed(t *testing.T, id string, at time.Time, body string, secrets ...string) http.Header {
	t.Helper()
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	sig := ""
	for _, s := range secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err != nil {
			t.Fatal(err)
		}
		one, err := wh.Sign(id, at, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if sig != "" {
			sig += " "
		}
		sig += one
	}
	h.Set("webhook-signature", sig)
	return h
}

const paidBody = `{"id": "evt_1", "type": "order.paid", "created_at": "2026-11-29T10:00:00Z",
	"data": {"id": 42, "status": "paid", "event_id": 7, "is_test": true, "payment": "external"}, "new_member": 1}`

func TestConstructEventVerifiesAndTypes(t *testing.T) {
	ev, err := ConstructEvent([]byte(paidBody), signed(t, "evt_1", time.Now(), paidBody, testSecret), testSecret)
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_1" || ev.Type != EventOrderPaid || !ev.CreatedAt.Equal(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("event %+v", ev)
	}
	typed, err := ev.Typed()
	if err != nil {
		t.Fatal(err)
	}
	paid, ok := typed.(*OrderPaidEvent)
	if !ok {
		t.Fatalf("order.paid typed as %T", typed)
	}
	if paid.Data.Id != 42 || paid.Data.Status != "paid" || !paid.Data.IsTest || paid.Type != "order.paid" {
		t.Fatalf("typed %+v", paid)
	}
}

func TestConstructEventRefuses(t *testing.T) {
	now := time.Now()
	other := "whsec_" + "dGhlIG90aGVyIGVuZHBvaW50J3Mgc2VjcmV0IGtleQ=="
	for name, c := range map[string]struct {
		body   string
		header http.Header
	}{
		"tampered body": {paidBody + " ", signed(t, "evt_1", now, paidBody, testSecret)},
		"old timestamp": {paidBody, signed(t, "evt_1", now.Add(-6*time.Minute), paidBody, testSecret)},
		"future":        {paidBody, signed(t, "evt_1", now.Add(6*time.Minute), paidBody, testSecret)},
		"wrong secret":  {paidBody, signed(t, "evt_1", now, paidBody, other)},
		"another id":    {paidBody, signed(t, "evt_2", now, paidBody, testSecret)},
		"no headers":    {paidBody, http.Header{}},
	} {
		if _, err := ConstructEvent([]byte(c.body), c.header, testSecret); !errors.Is(err, ErrWebhookSignature) {
			t.Errorf("%s: %v, want ErrWebhookSignature", name, err)
		}
	}
	for _, secret := range []string{"", "whsec_", "whsec_not base64!", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"} {
		if _, err := ConstructEvent([]byte(paidBody), signed(t, "evt_1", now, paidBody, testSecret), secret); err == nil {
			t.Errorf("secret %q taken", secret)
		}
	}
}

// After a rotation the old secret signs beside the new one: either one
// verifies.
func TestConstructEventTakesEitherSignature(t *testing.T) {
	old := "whsec_" + "dGhlIG9sZCBzZWNyZXQgYmVmb3JlIHRoZSByb3RhdGlvbg=="
	h := signed(t, "evt_1", time.Now(), paidBody, old, testSecret)
	for _, s := range []string{old, testSecret} {
		if _, err := ConstructEvent([]byte(paidBody), h, s); err != nil {
			t.Errorf("secret %s: %v", s, err)
		}
	}
}

// The Standard Webhooks specification's test vector: the signer the SDK
// relies on computes it, and ConstructEvent refuses it now as too old.
func TestConstructEventKnownVector(t *testing.T) {
	const id, body, want = "msg_p5jXN8AQM9LWM0D4loKWxJek", `{"test": 2432232314}`, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	at := time.Unix(1614265330, 0)
	h := signed(t, id, at, body, testSecret)
	if got := h.Get("webhook-signature"); got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
	if _, err := ConstructEvent([]byte(body), h, testSecret); !errors.Is(err, ErrWebhookSignature) || !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Fatalf("a 2021 delivery: %v, want too old", err)
	}
}

// An event type this version does not know is the event itself.
func TestTypedUnknownEvent(t *testing.T) {
	body := `{"id": "evt_9", "type": "order.teleported", "created_at": "2026-11-29T10:00:00Z", "data": {"id": 1}}`
	ev, err := ConstructEvent([]byte(body), signed(t, "evt_9", time.Now(), body, testSecret), testSecret)
	if err != nil {
		t.Fatal(err)
	}
	typed, err := ev.Typed()
	if err != nil || typed != ev {
		t.Fatalf("typed %T %v, want the event itself", typed, err)
	}
}

// Every webhook of the document (sdk/openapi.json, beside this module in
// the repository) has its struct, and nothing else does.
func TestWebhookTypesCoverTheDocument(t *testing.T) {
	raw, err := os.ReadFile("../openapi.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("not in the repository (a module download): no document beside it")
	} else if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Webhooks map[string]json.RawMessage `json:"webhooks"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for typ := range doc.Webhooks {
		if webhookTypes[typ] == nil {
			t.Errorf("%s: no struct in webhookTypes", typ)
		}
	}
	if len(doc.Webhooks) != len(webhookTypes) || len(doc.Webhooks) == 0 {
		t.Errorf("the document has %d webhooks, webhookTypes %d", len(doc.Webhooks), len(webhookTypes))
	}
}

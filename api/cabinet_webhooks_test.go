package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The cabinet's webhooks section lists a company's endpoints and each
// one's deliveries with their attempts; another company's are not there.
func TestCabinetShowsWebhookEndpointsAndDeliveries(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	ep := f.subscribe(t, f.keyA, r)
	if res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", ep), f.keyA, ""); res.Status >= 300 {
		t.Fatalf("ping: %d %s", res.Status, res.Body)
	}
	r.await("webhook.test", func(map[string]any) bool { return true })

	a := newBrowserless(t, f.URL, nil)
	a.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "a@a.test"))
	list := a.get("/cabinet/webhooks")
	if list.Status != http.StatusOK || !strings.Contains(list.Body, fmt.Sprintf(`data-endpoint="%d"`, ep)) ||
		!strings.Contains(list.Body, r.URL()) || !strings.Contains(list.Body, "sandbox") {
		t.Fatalf("webhooks page: %d\n%s", list.Status, list.Body)
	}
	// The ping's row (the edit form lists the event types too).
	const pingRow = "<td><code>webhook.test</code></td>"
	var page page
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		page = a.get(fmt.Sprintf("/cabinet/webhooks/%d", ep))
		if strings.Contains(page.Body, pingRow) && strings.Contains(page.Body, `<td class="status">delivered</td>`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoint's page never showed the delivered ping: %d\n%s", page.Status, page.Body)
		}
	}
	if !strings.Contains(page.Body, "HTTP 2") {
		t.Fatalf("the delivery's attempt is not shown:\n%s", page.Body)
	}
	if failed := a.get(fmt.Sprintf("/cabinet/webhooks/%d?status=failed", ep)); strings.Contains(failed.Body, pingRow) {
		t.Fatal("the status filter shows a delivered ping among failed ones")
	}

	var companyB int64
	if err := f.DB.NewRaw("SELECT id FROM companies WHERE id <> ?", f.companyA).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, f.URL, nil)
	b.setPassword(cabinetUser(t, f.Stack, f.URL, companyB, "b@b.test"))
	if p := b.get(fmt.Sprintf("/cabinet/webhooks/%d", ep)); p.Status != http.StatusNotFound {
		t.Fatalf("company B opening A's endpoint: %d", p.Status)
	}
	if p := b.get("/cabinet/webhooks"); strings.Contains(p.Body, fmt.Sprintf(`data-endpoint="%d"`, ep)) || strings.Contains(p.Body, r.URL()) {
		t.Fatal("company B's webhooks page lists A's endpoint")
	}
}

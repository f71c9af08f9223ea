package api_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/config"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/internal/ratelimit"
)

// The cabinet's webhook pages as an organizer uses them: the endpoints a
// page makes are the API's, their secret is shown once, and the actions
// reach a real receiver.

var (
	formTokenRe = regexp.MustCompile(`name="token" value="([0-9a-f]+)"`)
	secretRe    = regexp.MustCompile(`id="new-secret" type="text" readonly value="([^"]+)"`)
	endpointRe  = regexp.MustCompile(`/cabinet/webhooks/(\d+)$`)
)

// signUp follows a sign-in link and sets the password, whatever page the
// role lands on.
func (b *browserless) signUp(link string) {
	b.t.Helper()
	p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	// A role's landing page may be another part's (404 until it is there):
	// signed in is out of the link and the sign-in page.
	if (p.Status != http.StatusOK && p.Status != http.StatusNotFound) || !strings.HasPrefix(p.URL.Path, "/cabinet/") ||
		strings.HasPrefix(p.URL.Path, "/cabinet/link/") || p.URL.Path == "/cabinet/signin" {
		b.t.Fatalf("after setting the password: %d %s %.300s", p.Status, p.URL, p.Body)
	}
}

// createEndpointForm fills in the webhooks page's form and sends it.
func (b *browserless) createEndpointForm(env, u, description string, types ...string) page {
	b.t.Helper()
	list := b.get("/cabinet/webhooks")
	m := formTokenRe.FindStringSubmatch(list.Body)
	if list.Status != http.StatusOK || m == nil {
		b.t.Fatalf("webhooks page without its form: %d %.500s", list.Status, list.Body)
	}
	return b.post("/cabinet/webhooks", url.Values{"token": {m[1]}, "environment": {env}, "url": {u}, "description": {description},
		"event_types": types})
}

// apiEndpoint is the endpoint as the API lists it.
type apiEndpoint struct {
	ID             int64    `json:"id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	EventTypes     []string `json:"event_types"`
	Enabled        bool     `json:"enabled"`
	IsTest         bool     `json:"is_test"`
	Secret         string   `json:"secret"`
	DisabledReason string   `json:"disabled_reason"`
}

func (f *fixture) apiEndpoints(t *testing.T, key string) []apiEndpoint {
	t.Helper()
	var l listBody[apiEndpoint]
	res := f.Get(t, "/v1/webhook-endpoints", key)
	if res.Status != http.StatusOK {
		t.Fatalf("list endpoints: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &l)
	return l.Data
}

// await polls the page until it contains every one of want.
func (b *browserless) await(path string, within time.Duration, want ...string) page {
	b.t.Helper()
	var p page
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		p = b.get(path)
		all := p.Status == http.StatusOK
		for _, w := range want {
			all = all && strings.Contains(p.Body, w)
		}
		if all {
			return p
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s never showed %q: %d\n%s", path, want, p.Status, p.Body)
		}
	}
}

func (r *receiver) postCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.posts
}

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *receiver) setStatus(s int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status = s
}

// Create, see the secret once, test, redeliver, edit, disable, enable:
// each through the cabinet, each seen by the API and by the receiver.
func TestCabinetManagesWebhookEndpoint(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	ctx := context.Background()
	countEndpoints := func() int {
		n, err := f.DB.NewSelect().Table("webhook_endpoints").Where("company_id = ?", f.companyA).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	a := newBrowserless(t, f.URL, nil)
	a.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "a@a.test"))

	// Bad input: the service's messages, 422, nothing made.
	p := a.createEndpointForm("production", "http://127.0.0.1/hooks", "")
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "production endpoints must use https") {
		t.Fatalf("a production http endpoint: %d\n%s", p.Status, p.Body)
	}
	p = a.createEndpointForm("sandbox", r.URL(), "", "order.exploded")
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "Event type order.exploded: unknown event type") {
		t.Fatalf("an unknown event type: %d\n%s", p.Status, p.Body)
	}
	if n := countEndpoints(); n != 0 {
		t.Fatalf("refused forms made %d endpoints", n)
	}

	// Made: the endpoint's page shows the secret once, and the API lists
	// the endpoint with the same fields.
	list := a.get("/cabinet/webhooks")
	token := formTokenRe.FindStringSubmatch(list.Body)[1]
	form := url.Values{"token": {token}, "environment": {"sandbox"}, "url": {r.URL()}, "description": {"box office <receiver>"},
		"event_types": {"order.created", "webhook.test"}}
	p = a.post("/cabinet/webhooks", form)
	m := endpointRe.FindStringSubmatch(p.URL.Path)
	secret := secretRe.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || m == nil || secret == nil || !strings.Contains(p.Body, `id="notice"`) {
		t.Fatalf("after creating: %d %s\n%s", p.Status, p.URL, p.Body)
	}
	endpointPath := p.URL.Path
	r.setSecret(html.UnescapeString(secret[1]))
	if again := a.get(endpointPath); again.Status != http.StatusOK || strings.Contains(again.Body, "new-secret") ||
		strings.Contains(again.Body, secret[1]) || strings.Contains(again.Body, "whsec_") {
		t.Fatalf("a reload shows the secret again: %d\n%s", again.Status, again.Body)
	}
	// The same form sent again (a double click, the back button) adds
	// nothing.
	if twice := a.post("/cabinet/webhooks", form); twice.Status != http.StatusOK || !strings.Contains(twice.Body, "sent already") ||
		strings.Contains(twice.Body, "whsec_") {
		t.Fatalf("the form sent twice: %d\n%s", twice.Status, twice.Body)
	}
	if n := countEndpoints(); n != 1 {
		t.Fatalf("%d endpoints made, want 1", n)
	}
	eps := f.apiEndpoints(t, f.keyA)
	if len(eps) != 1 || fmt.Sprint(eps[0].ID) != m[1] || eps[0].URL != r.URL() || eps[0].Description != "box office <receiver>" ||
		!eps[0].Enabled || !eps[0].IsTest || strings.Join(eps[0].EventTypes, ",") != "order.created,webhook.test" || eps[0].Secret != "" {
		t.Fatalf("the API's view of the endpoint: %+v", eps)
	}
	id := eps[0].ID

	// A test event reaches the receiver, verified with the secret the page
	// showed, and is listed delivered with its payload.
	p = a.post(endpointPath+"/test", nil)
	evt := regexp.MustCompile(`Test event (evt_[0-9a-f]+) sent`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || p.URL.Path != endpointPath || evt == nil {
		t.Fatalf("test event: %d %s\n%s", p.Status, p.URL, p.Body)
	}
	r.await("webhook.test", func(d map[string]any) bool { return fmt.Sprint(d["endpoint_id"]) == fmt.Sprint(id) })
	if r.bad != 0 {
		t.Fatalf("%d deliveries failed verification with the page's secret", r.bad)
	}
	deliveryPath := endpointPath + "/deliveries/" + evt[1]
	a.await(endpointPath, 20*time.Second, `href="`+deliveryPath+`"`, `<td class="status">delivered</td>`)
	d := a.await(deliveryPath, 20*time.Second, `id="delivery-status" class="status">delivered`)
	if !strings.Contains(d.Body, `&#34;type&#34;: &#34;webhook.test&#34;`) || !strings.Contains(d.Body, `&#34;endpoint_id&#34;: `+m[1]) ||
		!strings.Contains(d.Body, "HTTP 200") || !strings.Contains(d.Body, "{&#34;ok&#34;: true}") || strings.Contains(d.Body, `id="next-retry"`) {
		t.Fatalf("the delivery's page:\n%s", d.Body)
	}

	// Redelivery: another attempt, received.
	before := r.postCount()
	p = a.post(deliveryPath+"/redeliver", nil)
	if p.Status != http.StatusOK || p.URL.Path != deliveryPath || !strings.Contains(p.Body, "Sent again") {
		t.Fatalf("redeliver: %d %s\n%s", p.Status, p.URL, p.Body)
	}
	for deadline := time.Now().Add(20 * time.Second); r.postCount() == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the redelivery never reached the receiver")
		}
	}
	a.await(deliveryPath, 20*time.Second, "<dt>Attempts</dt><dd>2</dd>", `class="status">delivered`)

	// Edit: bad input changes nothing; good input is the API's view.
	p = a.post(endpointPath, url.Values{"url": {"not a url"}, "event_types": {"order.paid"}})
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "URL: ") || !strings.Contains(p.Body, "not an absolute URL") ||
		!strings.Contains(p.Body, `value="not a url"`) {
		t.Fatalf("a bad URL: %d\n%s", p.Status, p.Body)
	}
	if e := f.apiEndpoints(t, f.keyA)[0]; e.URL != r.URL() || strings.Join(e.EventTypes, ",") != "order.created,webhook.test" {
		t.Fatalf("a refused edit changed the endpoint: %+v", e)
	}
	p = a.post(endpointPath, url.Values{"url": {r.URL()}, "description": {"edited"}, "event_types": {"order.created"}})
	if p.Status != http.StatusOK || p.URL.Path != endpointPath || !strings.Contains(p.Body, "Endpoint saved.") {
		t.Fatalf("edit: %d %s\n%s", p.Status, p.URL, p.Body)
	}
	if e := f.apiEndpoints(t, f.keyA)[0]; e.Description != "edited" || strings.Join(e.EventTypes, ",") != "order.created" {
		t.Fatalf("the API's view after the edit: %+v", e)
	}

	// Disabled: it says why, gets no test event and no delivery.
	p = a.post(endpointPath+"/disable", nil)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "disabled in the cabinet by its owner") {
		t.Fatalf("disable: %d\n%s", p.Status, p.Body)
	}
	if e := f.apiEndpoints(t, f.keyA)[0]; e.Enabled || e.DisabledReason != "disabled in the cabinet by its owner" {
		t.Fatalf("the API's view of the disabled endpoint: %+v", e)
	}
	if l := a.get("/cabinet/webhooks"); !strings.Contains(l.Body, "disabled in the cabinet by its owner") {
		t.Fatalf("the list does not say why the endpoint is disabled:\n%s", l.Body)
	}
	// Refused with a notice on the endpoint's page (a reload repeats nothing).
	if p := a.post(endpointPath+"/test", nil); p.Status != http.StatusOK || p.URL.Path != endpointPath || !strings.Contains(p.Body, "is disabled") {
		t.Fatalf("test event to a disabled endpoint: %d\n%s", p.Status, p.Body)
	}
	quiet := f.paidOrder(t, f.keyA, "parterre-3-5")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM webhook_events WHERE order_id = ? AND type = 'order.created' AND dispatched_at IS NOT NULL",
			quiet).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the order's event was never dispatched")
		}
	}
	var deliveries int
	if err := f.DB.NewRaw(`SELECT count(*) FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
		WHERE d.endpoint_id = ? AND e.order_id = ?`, id, quiet).Scan(ctx, &deliveries); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 || strings.Contains(strings.Join(r.types(), ","), "order.created") {
		t.Fatalf("a disabled endpoint got %d deliveries; received %v", deliveries, r.types())
	}

	// Enabled again: new events arrive.
	p = a.post(endpointPath+"/enable", nil)
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "Endpoint enabled") {
		t.Fatalf("enable: %d\n%s", p.Status, p.Body)
	}
	if e := f.apiEndpoints(t, f.keyA)[0]; !e.Enabled || e.DisabledReason != "" {
		t.Fatalf("the API's view of the enabled endpoint: %+v", e)
	}
	heard := f.paidOrder(t, f.keyA, "parterre-3-6")
	r.await("order.created", idIs(heard))

	// Rotation: the new secret is shown once and verifies at once.
	p = a.post(endpointPath+"/rotate-secret", nil)
	rotated := secretRe.FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || rotated == nil || rotated[1] == secret[1] {
		t.Fatalf("rotate: %d\n%s", p.Status, p.Body)
	}
	if again := a.get(endpointPath); strings.Contains(again.Body, "whsec_") {
		t.Fatal("a reload shows the rotated secret again")
	}
	r.setSecret(html.UnescapeString(rotated[1]))
	before = len(r.types())
	a.post(endpointPath+"/test", nil)
	for deadline := time.Now().Add(20 * time.Second); len(r.types()) == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no test event verified with the rotated secret")
		}
	}
}

// A receiver answering 500: the endpoint is shown failing (since when, the
// last error) and the delivery's next retry; the per-minute caps answer a
// clear 429 page and send nothing more.
func TestCabinetWebhookFailingEndpointAndCaps(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	r.setStatus(http.StatusInternalServerError)
	ep := f.subscribe(t, f.keyA, r)
	// Another instance of the deployment with the caps on: one endpoint
	// per environment, one test event and one redelivery a minute.
	base, _ := f.Instance(t, func(c *config.Config) {
		c.WebhookEndpointsMax, c.WebhookTestsPerMinute, c.WebhookRedeliveriesPerMinute = 1, 1, 1
	}, api.ProcessOptions{Limiter: ratelimit.NewMemory()})
	a := newBrowserless(t, base, nil)
	a.signUp(cabinetUser(t, f.Stack, base, f.companyA, "a@a.test"))
	endpointPath := fmt.Sprintf("/cabinet/webhooks/%d", ep)

	p := a.post(endpointPath+"/test", nil)
	evt := regexp.MustCompile(`Test event (evt_[0-9a-f]+) sent`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || evt == nil {
		t.Fatalf("test event: %d\n%s", p.Status, p.Body)
	}
	list := a.await("/cabinet/webhooks", 20*time.Second, `badge failing`, "last: HTTP 500")
	if !strings.Contains(list.Body, "failing</span> since 20") {
		t.Fatalf("the list does not say since when the endpoint fails:\n%s", list.Body)
	}
	a.await(endpointPath, 5*time.Second, `badge failing`, "last: HTTP 500")
	deliveryPath := endpointPath + "/deliveries/" + evt[1]
	d := a.await(deliveryPath, 5*time.Second, `id="delivery-status" class="status">pending`, `id="next-retry"`, "HTTP 500")
	if !regexp.MustCompile(`id="next-retry">20\d\d-\d\d-\d\d \d\d:\d\d:\d\d UTC`).MatchString(d.Body) {
		t.Fatalf("the next retry's time:\n%s", d.Body)
	}

	// The caps: the second test event and the second redelivery of the
	// minute are refused with a clear page, and nothing is sent.
	countPings := func() int {
		var n int
		if err := f.DB.NewRaw("SELECT count(*) FROM webhook_events WHERE endpoint_id = ?", ep).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	p = a.post(endpointPath+"/test", nil)
	if p.Status != http.StatusOK || p.URL.Path != endpointPath || !strings.Contains(p.Body, "At most 1 test events per minute") ||
		countPings() != 1 {
		t.Fatalf("a second test event in the minute: %d (%d events)\n%s", p.Status, countPings(), p.Body)
	}
	if p = a.post(deliveryPath+"/redeliver", nil); p.Status != http.StatusOK || !strings.Contains(p.Body, "Sent again") {
		t.Fatalf("redeliver: %d\n%s", p.Status, p.Body)
	}
	p = a.post(deliveryPath+"/redeliver", nil)
	if p.Status != http.StatusOK || p.URL.Path != deliveryPath || !strings.Contains(p.Body, "At most 1 redeliveries per minute") {
		t.Fatalf("a second redelivery in the minute: %d\n%s", p.Status, p.Body)
	}
	// One endpoint more than the environment's cap: 409, the API's words,
	// nothing made.
	p = a.createEndpointForm("sandbox", r.URL(), "one too many")
	if p.Status != http.StatusConflict || !strings.Contains(p.Body, "already has 1 webhook endpoints") || strings.Contains(p.Body, "whsec_") {
		t.Fatalf("an endpoint past the cap: %d\n%s", p.Status, p.Body)
	}
	if n := len(f.apiEndpoints(t, f.keyA)); n != 1 {
		t.Fatalf("%d sandbox endpoints after a refused one", n)
	}
}

// Who may manage webhooks: owners and developers; finance, support and door
// get 403 and change nothing; another company's endpoint and delivery are
// 404, for reading and for every action.
func TestCabinetWebhookPermissions(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	ep := f.subscribe(t, f.keyA, r)
	res := f.Do(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", ep), f.keyA, "")
	var sent struct {
		Data struct {
			EventID string `json:"event_id"`
		} `json:"data"`
	}
	res.Decode(t, &sent)
	r.await("webhook.test", func(map[string]any) bool { return true })
	endpointPath := fmt.Sprintf("/cabinet/webhooks/%d", ep)
	deliveryPath := endpointPath + "/deliveries/" + sent.Data.EventID

	dev := newBrowserless(t, f.URL, nil)
	dev.signUp(cabinetUserAs(t, f.Stack, f.URL, f.companyA, "dev@a.test", organizer.RoleDeveloper))
	if p := dev.await(deliveryPath, 20*time.Second, "delivered"); !strings.Contains(p.Body, "webhook.test") {
		t.Fatalf("a developer on the delivery's page:\n%s", p.Body)
	}
	if p := dev.createEndpointForm("sandbox", r.URL(), "by the developer"); p.Status != http.StatusOK || !strings.Contains(p.Body, "whsec_") {
		t.Fatalf("a developer adding an endpoint: %d\n%s", p.Status, p.Body)
	}

	for _, role := range []organizer.Role{organizer.RoleFinance, organizer.RoleSupport, organizer.RoleDoor} {
		b := newBrowserless(t, f.URL, nil)
		b.signUp(cabinetUserAs(t, f.Stack, f.URL, f.companyA, string(role)+"@a.test", role))
		for _, path := range []string{"/cabinet/webhooks", endpointPath, deliveryPath} {
			if p := b.get(path); p.Status != http.StatusForbidden {
				t.Errorf("%s: GET %s: %d, want 403", role, path, p.Status)
			}
		}
		for _, path := range []string{"/cabinet/webhooks", endpointPath, endpointPath + "/disable", endpointPath + "/test",
			endpointPath + "/rotate-secret", deliveryPath + "/redeliver"} {
			if p := b.post(path, url.Values{"url": {"https://93.184.215.14/x"}, "environment": {"sandbox"}}); p.Status != http.StatusForbidden {
				t.Errorf("%s: POST %s: %d, want 403", role, path, p.Status)
			}
		}
	}

	var companyB int64
	if err := f.DB.NewRaw("SELECT company_id FROM events WHERE id = ?", f.foreignID).Scan(context.Background(), &companyB); err != nil {
		t.Fatal(err)
	}
	b := newBrowserless(t, f.URL, nil)
	b.signUp(cabinetUser(t, f.Stack, f.URL, companyB, "b@b.test"))
	for _, path := range []string{endpointPath, deliveryPath, "/cabinet/webhooks/999999999", endpointPath + "/deliveries/evt_nope"} {
		if p := b.get(path); p.Status != http.StatusNotFound {
			t.Errorf("company B: GET %s: %d, want 404", path, p.Status)
		}
	}
	for _, path := range []string{endpointPath, endpointPath + "/disable", endpointPath + "/enable", endpointPath + "/test",
		endpointPath + "/rotate-secret", deliveryPath + "/redeliver"} {
		if p := b.post(path, url.Values{"url": {"https://93.184.215.14/x"}}); p.Status != http.StatusNotFound {
			t.Errorf("company B: POST %s: %d, want 404", path, p.Status)
		}
	}
	e := f.apiEndpoints(t, f.keyA)[0]
	if e.ID != ep || !e.Enabled || e.URL != r.URL() {
		t.Fatalf("A's endpoint after the refused actions: %+v", e)
	}
	// The secret still verifies: a rotation by B or a role without the
	// permission would have failed this.
	before := r.postCount()
	f.Do(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/test", ep), f.keyA, "")
	for deadline := time.Now().Add(20 * time.Second); r.postCount() == before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("A's endpoint stopped verifying (%d unverifiable POSTs)", r.bad)
		}
	}
}

// In Chromium: add an endpoint, send a test event, and find its delivery
// delivered with its payload; no page scrolls sideways at 1280 or 390 px.
func TestCabinetWebhooksInChromium(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)
	r := newReceiver(t)
	ctx, run := f.ownerInBrowser(t, "chromium@a.test")
	run("add an endpoint", chromedp.Navigate(f.URL+"/cabinet/webhooks"), chromedp.WaitVisible(chromedp.CSS("#create-endpoint")),
		chromedp.SendKeys(chromedp.CSS("#endpoint-url"), r.URL()),
		chromedp.SendKeys(chromedp.CSS("#endpoint-description"), "Box office receiver"),
		chromedp.Click(chromedp.CSS("#create-endpoint")), chromedp.WaitVisible(chromedp.CSS("#secret-card")))
	secret, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#new-secret")))
	if err != nil || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the secret in Chromium: %q %v", secret, err)
	}
	r.setSecret(secret)
	measure := func(name string) { t.Helper(); pageFits(t, ctx, "webhooks-"+name, nil) }
	measure("created")
	run("send a test event", chromedp.Click(chromedp.CSS("#send-test")))
	// The page before the click has a notice of its own (the endpoint
	// added): wait for the one the test event's redirect brings.
	var notice string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		notice, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('#notice') || {}).textContent || ''`))
		if err == nil && strings.Contains(notice, "Test event evt_") || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || !strings.Contains(notice, "Test event evt_") {
		t.Fatalf("the notice after sending a test event: %q %v", notice, err)
	}
	r.await("webhook.test", func(map[string]any) bool { return true })
	var status string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		run("reload the endpoint", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#deliveries")))
		status, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('#deliveries td.status') || {}).textContent || ''`))
		if err == nil && status == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test event's delivery is %q (%v)", status, err)
		}
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#new-secret').length`)); err != nil || n != 0 {
		t.Fatalf("the secret is shown again after a reload (%d, %v)", n, err)
	}
	measure("endpoint")
	run("open the delivery", chromedp.Click(chromedp.CSS("#deliveries tbody a")), chromedp.WaitVisible(chromedp.CSS("#payload")))
	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#delivery-status")))
	if err != nil || strings.TrimSpace(got) != "delivered" {
		t.Fatalf("the delivery's status in Chromium: %q %v", got, err)
	}
	payload, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#payload")))
	if err != nil || !strings.Contains(payload, `"type": "webhook.test"`) || !strings.Contains(payload, "\n  ") {
		t.Fatalf("the payload in Chromium: %q %v", payload, err)
	}
	measure("delivery")
	run("open the list", chromedp.Navigate(f.URL+"/cabinet/webhooks"), chromedp.WaitVisible(chromedp.CSS("#endpoints")))
	measure("list")
}

// A double click on the create form: ten POSTs of one form token at once
// make exactly one endpoint, and each lands on its page.
func TestCabinetWebhookFormRaceMakesOneEndpoint(t *testing.T) {
	f := newFixture(t)
	r := newReceiver(t)
	a := newBrowserless(t, f.URL, nil)
	a.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "a@a.test"))
	list := a.get("/cabinet/webhooks")
	m := formTokenRe.FindStringSubmatch(list.Body)
	if m == nil {
		t.Fatalf("no form token:\n%s", list.Body)
	}
	form := url.Values{"token": {m[1]}, "environment": {"sandbox"}, "url": {r.URL()}, "description": {"twice"}}.Encode()
	var wg sync.WaitGroup
	landed := make([]string, 10)
	for i := range landed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, f.URL+"/cabinet/webhooks", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := a.c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			landed[i] = fmt.Sprintf("%d %s", res.StatusCode, res.Request.URL.Path)
		}()
	}
	wg.Wait()
	var ids []int64
	if err := f.DB.NewSelect().Table("webhook_endpoints").Column("id").Where("company_id = ?", f.companyA).
		Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 {
		t.Fatalf("%d endpoints made by one form sent 10 times at once; responses %v", len(ids), landed)
	}
	for _, l := range landed {
		if l != fmt.Sprintf("200 /cabinet/webhooks/%d", ids[0]) && l != "200 /cabinet/webhooks" {
			t.Errorf("a submission ended at %s", l)
		}
	}
}

// A double click on "Rotate secret": one rotation, so the secret it
// replaced keeps its overlap; another rotation within the overlap is
// refused and says why; a page shows only the current secret.
func TestCabinetWebhookRotateRaceRotatesOnce(t *testing.T) {
	f := newFixture(t)
	r := newReceiver(t)
	a := newBrowserless(t, f.URL, nil)
	a.setPassword(cabinetUser(t, f.Stack, f.URL, f.companyA, "a@a.test"))
	p := a.createEndpointForm("sandbox", r.URL(), "rotated")
	m := endpointRe.FindStringSubmatch(p.URL.Path)
	if m == nil {
		t.Fatalf("after creating: %d %s", p.Status, p.URL)
	}
	endpointPath := p.URL.Path
	ctx := context.Background()
	secrets := func() (cur, prev string) {
		var row struct {
			Secret         string  `bun:"secret"`
			PreviousSecret *string `bun:"previous_secret"`
		}
		if err := f.DB.NewSelect().Table("webhook_endpoints").Column("secret", "previous_secret").Where("id = ?", m[1]).
			Scan(ctx, &row); err != nil {
			t.Fatal(err)
		}
		if row.PreviousSecret != nil {
			prev = *row.PreviousSecret
		}
		return row.Secret, prev
	}
	s0, _ := secrets()

	var wg sync.WaitGroup
	bodies := make([]string, 2)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, f.URL+endpointPath+"/rotate-secret", nil)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			res, err := a.c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var b bytes.Buffer
			_, _ = b.ReadFrom(res.Body)
			bodies[i] = b.String()
		}()
	}
	wg.Wait()
	cur, prev := secrets()
	if cur == s0 || prev != s0 {
		t.Fatalf("after two rotations at once: the previous secret is not the first one (rotated twice, or never)")
	}
	for _, b := range bodies {
		if s := secretRe.FindStringSubmatch(b); s != nil && html.UnescapeString(s[1]) != cur {
			t.Fatal("a page shows a secret that no longer signs")
		}
	}

	// Another rotation within the overlap: refused, said, nothing changed.
	p = a.post(endpointPath+"/rotate-secret", nil)
	if p.Status != http.StatusOK || p.URL.Path != endpointPath || !strings.Contains(p.Body, "Not rotated again") ||
		strings.Contains(p.Body, "whsec_") {
		t.Fatalf("a rotation within the overlap: %d %s\n%s", p.Status, p.URL, p.Body)
	}
	if c, pr := secrets(); c != cur || pr != s0 {
		t.Fatal("a refused rotation changed the secrets")
	}
}

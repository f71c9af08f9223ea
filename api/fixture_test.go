package api_test

// The api tests' shared fixture: the stack with the demo catalog, the
// bodies the tests decode, and the steps many tests take (hold, order,
// pay, refund; the aggregator's calls; a webhook receiver; a cabinet
// session; a browser). What one test file alone uses stays in that
// file.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/ticketsales/ticketsales/api"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/organizer"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// fixture: company A with the demo catalog (3 published events, 1 draft),
// company B with one event of its own.
type fixture struct {
	*testenv.Stack
	keyA, keyB string
	companyA   int64
	ids        map[string]int64 // slug → event id of company A
	foreignID  int64            // company B's event
}

func newFixture(t *testing.T, opts ...testenv.Options) *fixture {
	t.Helper()
	s := testenv.NewStack(t, opts...)
	f := &fixture{Stack: s, ids: map[string]int64{}}
	f.companyA = s.Company(t, "A")
	s.Import(t, f.companyA, catalogfile.Demo(time.Now()))
	companyB := s.Company(t, "B")
	s.Import(t, companyB, []byte(`{"cities": [{"ref": "spb", "name": "Saint Petersburg"}],
	  "venues": [{"ref": "club", "name": "Club", "city": "spb", "timezone": "Europe/Moscow"}],
	  "events": [{"ref": "gig", "title": "Gig", "slug": "gig", "status": "published", "starts_at": "2030-01-01T20:00:00+03:00",
	    "venue": "club", "fee": {"mode": "included", "rate_bp": 500, "min_fee": 0},
	    "categories": [{"ref": "ga", "name": "GA", "price": 1000, "capacity": 10}]}]}`))
	f.keyA, _ = s.Key(t, f.companyA, apikey.Sandbox)
	f.keyB, _ = s.Key(t, companyB, apikey.Production)
	rows, err := s.DB.QueryContext(context.Background(), "SELECT id, slug, company_id FROM events")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, company int64
		var slug string
		if err := rows.Scan(&id, &slug, &company); err != nil {
			t.Fatal(err)
		}
		if company == f.companyA {
			f.ids[slug] = id
		} else {
			f.foreignID = id
		}
	}
	return f
}

type listBody[T any] struct {
	Data      []T    `json:"data"`
	RequestID string `json:"request_id"`
	Meta      struct {
		CurrentPage int `json:"current_page"`
		PerPage     int `json:"per_page"`
		Total       int `json:"total"`
		LastPage    int `json:"last_page"`
	} `json:"meta"`
}

type problem struct {
	Type          string `json:"type"`
	Status        int    `json:"status"`
	Code          string `json:"code"`
	Detail        string `json:"detail"`
	RequestID     string `json:"request_id"`
	RequiredScope string `json:"required_scope"`
	Errors        []struct {
		Location string `json:"location"`
	} `json:"errors"`
}

func expectProblem(t *testing.T, res *testenv.Response, status int, code string) problem {
	t.Helper()
	if res.Status != status {
		t.Fatalf("want %d %s, got %d %s", status, code, res.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("want application/problem+json, got %q", ct)
	}
	var p problem
	res.Decode(t, &p)
	if p.Code != code || p.Status != status {
		t.Fatalf("want code %q status %d, got %+v", code, status, p)
	}
	if p.RequestID == "" || p.RequestID != res.Header.Get("X-Request-Id") {
		t.Fatalf("problem request_id %q must equal X-Request-Id %q", p.RequestID, res.Header.Get("X-Request-Id"))
	}
	// Its type links to the code's documentation.
	if p.Type != api.ProblemTypesPath+"#"+code {
		t.Fatalf("problem type %q, want %s#%s", p.Type, api.ProblemTypesPath, code)
	}
	return p
}

type category struct {
	ID             int64  `json:"id"`
	Name           string `json:"name"`
	CommissionMode string `json:"commission_mode"`
	Price          struct{ Amount int64 }
	ServiceFee     struct{ Amount int64 }  `json:"service_fee"`
	PriceTotal     *struct{ Amount int64 } `json:"price_total"`
	Available      *int                    `json:"available"`
}

type availability struct {
	Data struct {
		Version string
		Seats   []struct {
			SeatID           string `json:"seat_id"`
			ZoneID           string `json:"zone_id"`
			Status           string
			TicketCategoryID int64 `json:"ticket_category_id"`
			Price            struct{ Amount int64 }
		}
	}
}

func seatStatus(a availability, id string) string {
	for _, s := range a.Data.Seats {
		if s.SeatID == id {
			return s.Status
		}
	}
	return "missing"
}

// seatStatusOn reads a swan-lake seat's status from the api at url.
func (f *fixture) seatStatusOn(t *testing.T, url, seat string) string {
	t.Helper()
	res := testenv.Do(t, url, http.MethodGet, fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"]), f.keyA, "")
	var a availability
	res.Decode(t, &a)
	return seatStatus(a, seat)
}

// awaitSeatStatus polls until the seat leaves status from, for up to 5 s,
// and returns what it shows then.
func (f *fixture) awaitSeatStatus(t *testing.T, url, seat, from string) string {
	t.Helper()
	st := f.seatStatusOn(t, url, seat)
	for deadline := time.Now().Add(5 * time.Second); st == from && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		st = f.seatStatusOn(t, url, seat)
	}
	return st
}

type reservation struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	EventID   int64     `json:"event_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Seats     []struct {
		SeatID           string `json:"seat_id"`
		ZoneID           string `json:"zone_id"`
		Label            string `json:"label"`
		TicketCategoryID int64  `json:"ticket_category_id"`
		Price            struct{ Amount int64 }
	} `json:"seats"`
	Total      struct{ Amount int64 } `json:"total"`
	ServiceFee struct{ Amount int64 } `json:"service_fee"`
	TotalToPay struct{ Amount int64 } `json:"total_to_pay"`
}

type reservationBody struct {
	Data      reservation `json:"data"`
	RequestID string      `json:"request_id"`
}

func seatsJSON(ids ...string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		zone := id[:strings.Index(id, "-")]
		parts[i] = fmt.Sprintf(`{"zone_id": %q, "seat_id": %q}`, zone, id)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func idemKey(t *testing.T) string {
	return fmt.Sprintf("Idempotency-Key: %s-%d", t.Name(), time.Now().UnixNano())
}

func (f *fixture) reserve(t *testing.T, key string, seats ...string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/reservations", key,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, f.ids["swan-lake"], seatsJSON(seats...)), idemKey(t))
}

func (f *fixture) seatStates(t *testing.T) map[string]string {
	t.Helper()
	res := f.Get(t, fmt.Sprintf("/v1/events/%d/availability", f.ids["swan-lake"]), f.keyA)
	var a availability
	res.Decode(t, &a)
	out := map[string]string{}
	for _, s := range a.Data.Seats {
		out[s.SeatID] = s.Status
	}
	return out
}

// countWorkflows waits until visibility counts want workflows for the
// query, then checks the count holds.
func countWorkflows(t *testing.T, s *testenv.Stack, query string, want int64) {
	t.Helper()
	var got int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res, err := s.Temporal.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{Query: query + " AND TaskQueue = '" + s.TaskQueue + "'"})
		if err != nil {
			t.Fatalf("count workflows: %v", err)
		}
		if got = res.GetCount(); got >= want {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	res, err := s.Temporal.CountWorkflow(context.Background(), &workflowservice.CountWorkflowExecutionsRequest{Query: query + " AND TaskQueue = '" + s.TaskQueue + "'"})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetCount() != want {
		t.Fatalf("%s: want %d workflows, found %d", query, want, res.GetCount())
	}
}

type order struct {
	ID           int64   `json:"id"`
	Status       string  `json:"status"`
	CancelReason *string `json:"cancel_reason"`
	Payment      string  `json:"payment"`
	PaymentURL   string  `json:"payment_url"`
	IsTest       bool    `json:"is_test"`
	Amount       struct {
		Amount   int64
		Currency string
	} `json:"amount"`
	ServiceFee struct{ Amount int64 } `json:"service_fee"`
	Total      struct{ Amount int64 } `json:"total"`
	ExpiresAt  time.Time              `json:"expires_at"`
	PaidAt     *time.Time             `json:"paid_at"`
	PaymentID  *string                `json:"payment_id"`
}

type orderBody struct {
	Data order `json:"data"`
}

type ticket struct {
	ID      int64  `json:"id"`
	Number  string `json:"number"`
	Barcode string `json:"barcode"`
	Status  string `json:"status"`
	IsTest  bool   `json:"is_test"`
	Seat    *struct {
		ZoneID string `json:"zone_id"`
		SeatID string `json:"seat_id"`
		Label  string `json:"label"`
	} `json:"seat"`
	Price    struct{ Amount int64 } `json:"price"`
	OrderURL string                 `json:"order_url"`
}

const customer = `{"email": "anna@example.com", "first_name": "Anna", "last_name": "Pavlova", "phone": "+7 999 123-45-67"}`

func (f *fixture) orderFromReservation(t *testing.T, key, reservationID, payment string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": %q}`,
		f.ids["swan-lake"], reservationID, customer, payment), idemKey(t))
}

func (f *fixture) confirm(t *testing.T, key string, id, amount int64) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", id), key,
		fmt.Sprintf(`{"external_payment_id": "ext-%d", "paid_amount": %d}`, id, amount), idemKey(t))
}

// paidOrder runs reserve → order (external) → confirm with key and returns
// the order id.
func (f *fixture) paidOrder(t *testing.T, key string, seats ...string) int64 {
	t.Helper()
	o := f.externalOrder(t, key, seats...)
	if res := f.confirm(t, key, o.ID, o.Amount.Amount); res.Status != 200 {
		t.Fatalf("confirm: %d %s", res.Status, res.Body)
	}
	return o.ID
}

// externalOrder reserves seats with key and orders them with
// payment=external, awaiting the partner's confirm.
func (f *fixture) externalOrder(t *testing.T, key string, seats ...string) order {
	t.Helper()
	var r reservationBody
	if res := f.reserve(t, key, seats...); res.Status != http.StatusCreated {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &r)
	}
	var ob orderBody
	if res := f.orderFromReservation(t, key, r.Data.ID, "external"); res.Status != http.StatusCreated {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &ob)
	}
	return ob.Data
}

// gatewayOrder reserves a seat and orders it with payment=gateway.
func (f *fixture) gatewayOrder(t *testing.T, key, seat string) order {
	t.Helper()
	var r reservationBody
	if res := f.reserve(t, key, seat); res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	} else {
		res.Decode(t, &r)
	}
	var ob orderBody
	res := f.orderFromReservation(t, key, r.Data.ID, "gateway")
	if res.Status != 201 {
		t.Fatalf("gateway order: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &ob)
	return ob.Data
}

// payOnTestGateway presses a button of the test gateway's page.
// payOnTestGateway clicks Pay or Decline as a partner's automated test
// does: the 303 and the page it leads to are both answers the document
// declares.
func payOnTestGateway(t *testing.T, paymentURL, action string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(http.MethodPost, paymentURL, strings.NewReader(url.Values{"action": {action}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := testenv.Send(c, req)
	if err != nil || res.Status != http.StatusSeeOther {
		t.Fatalf("%s on the payment page: %v %v", action, res, err)
	}
	page, err := url.Parse(paymentURL)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := page.Parse(res.Header.Get("Location"))
	if err != nil || loc.Path != page.Path {
		t.Fatalf("303 Location %q, want the payment page %s", res.Header.Get("Location"), page.Path)
	}
	if res := testenv.Do(t, loc.Scheme+"://"+loc.Host, http.MethodGet, loc.RequestURI(), "", ""); res.Status != http.StatusOK ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the payment page after %s: %d %v", action, res.Status, res.Header)
	}
}

func (f *fixture) awaitOrderStatus(t *testing.T, key string, id int64, want string) order {
	t.Helper()
	var o orderBody
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		f.Get(t, fmt.Sprintf("/v1/orders/%d", id), key).Decode(t, &o)
		if o.Data.Status == want || time.Now().After(deadline) {
			break
		}
	}
	if o.Data.Status != want {
		t.Fatalf("order %d is %s, want %s", id, o.Data.Status, want)
	}
	return o.Data
}

func (f *fixture) orderStatus2(t *testing.T, key string, id int64) order {
	t.Helper()
	var ob orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", id), key).Decode(t, &ob)
	return ob.Data
}

type refundBody struct {
	Data struct {
		ID              string `json:"id"`
		Status          string `json:"status"`
		MoneyReturnedBy string `json:"money_returned_by"`
		OrderStatus     string `json:"order_status"`
		Amount          struct{ Amount int64 }
		Tickets         []ticket `json:"tickets"`
	} `json:"data"`
}

func (f *fixture) refund(t *testing.T, orderID int64, ticketIDs ...int64) *testenv.Response {
	t.Helper()
	body := `{"reason": "buyer cannot come"}`
	if len(ticketIDs) > 0 {
		ids := make([]string, len(ticketIDs))
		for i, id := range ticketIDs {
			ids[i] = fmt.Sprint(id)
		}
		body = `{"ticket_ids": [` + strings.Join(ids, ",") + `], "reason": "partial"}`
	}
	return f.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", orderID), f.keyA, body, idemKey(t))
}

func (f *fixture) tickets(t *testing.T, orderID int64) []ticket {
	t.Helper()
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", orderID), f.keyA).Decode(t, &tb)
	return tb.Data
}

func (f *fixture) orderStatus(t *testing.T, id int64) order {
	t.Helper()
	var ob orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", id), f.keyA).Decode(t, &ob)
	return ob.Data
}

type aggOrder struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
	Amount  struct {
		Value    int64  `json:"value"`
		Currency string `json:"currency"`
	} `json:"amount"`
	ExternalOrderID string `json:"externalOrderId"`
	Tickets         []struct {
		Barcode, Sector, Row, Seat string
	} `json:"tickets"`
	Seats []struct {
		ID, Sector, Row, Seat string
	} `json:"seats"`
}

func (f *fixture) aggReserve(t *testing.T, seats ...string) *testenv.Response {
	t.Helper()
	quoted := make([]string, len(seats))
	for i, s := range seats {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return f.Do(t, http.MethodPost, "/aggregator/v1/reserve", f.keyA,
		fmt.Sprintf(`{"sessionId": "%d", "seats": [%s], "ttl": 900}`, f.ids["swan-lake"], strings.Join(quoted, ",")))
}

func (f *fixture) aggGet(t *testing.T, id string) aggOrder {
	t.Helper()
	var o aggOrder
	res := f.Get(t, "/aggregator/v1/orders/"+id, f.keyA)
	if res.Status != 200 {
		t.Fatalf("aggregator order %s: %d %s", id, res.Status, res.Body)
	}
	res.Decode(t, &o)
	return o
}

func (f *fixture) aggConfirm(t *testing.T, orderID, paymentID string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/aggregator/v1/orders/"+orderID+"/confirm", f.keyA,
		fmt.Sprintf(`{"customer": {"email": "ivan@example.com", "name": "Ivan Petrov"}, "paymentId": %q}`, paymentID))
}

// receivedEvent is a webhook body as a partner reads it.
type receivedEvent struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// receiver is a partner's endpoint: it verifies each delivery with the
// Standard Webhooks reference verifier (not the service's signing code)
// and keeps events by id, as a receiver that dedupes does.
type receiver struct {
	t      *testing.T
	addr   string
	secret string
	mu     sync.Mutex
	byID   map[string]receivedEvent
	order  []string
	posts  int // every verified POST, repeats included
	bad    int // POSTs that failed verification
	srv    *http.Server
	status int // the answer to give (200 unless set)
}

func (r *receiver) URL() string { return "http://" + r.addr + "/hooks" }

func (r *receiver) serve(ln net.Listener) {
	r.srv = &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
}

// down stops listening: connections are refused.
func (r *receiver) down() {
	if r.srv != nil {
		_ = r.srv.Close()
		r.srv = nil
	}
}

// up listens again on the same address.
func (r *receiver) up() {
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ {
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("listen again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(r.secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if c, err := webhookContract(); err != nil {
		r.t.Errorf("the document's webhooks: %v", err)
	} else if err := c.Check(body); err != nil {
		r.t.Error(err) // delivered all the same: the test goes on to what it checks
	}
	var ev receivedEvent
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID != req.Header.Get("webhook-id") {
		r.bad++
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	r.posts++
	if r.status != http.StatusOK {
		w.WriteHeader(r.status)
		return
	}
	if _, seen := r.byID[ev.ID]; !seen {
		r.byID[ev.ID] = ev
		r.order = append(r.order, ev.ID)
	}
	_, _ = w.Write([]byte(`{"ok": true}`))
}

// await waits until an event of the type whose data matches arrives.
func (r *receiver) await(typ string, match func(data map[string]any) bool) receivedEvent {
	r.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		for _, id := range r.order {
			ev := r.byID[id]
			var data map[string]any
			dec := json.NewDecoder(strings.NewReader(string(ev.Data)))
			dec.UseNumber() // ids are large
			_ = dec.Decode(&data)
			if ev.Type == typ && match(data) {
				r.mu.Unlock()
				return ev
			}
		}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.t.Fatalf("no %s event arrived; got %d events, %d unverifiable POSTs", typ, len(r.order), r.bad)
	return receivedEvent{}
}

func (r *receiver) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range r.order {
		out = append(out, r.byID[id].Type)
	}
	return out
}

// webhookContract checks every body a receiver verifies against the
// document's webhook of its type (the document as the service serves it,
// built once without a database): a delivery the document does not
// describe fails the test that received it.
var webhookContract = sync.OnceValues(func() (*testenv.WebhookContract, error) {
	spec, err := json.Marshal(api.New(api.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).API.OpenAPI())
	if err != nil {
		return nil, err
	}
	return testenv.NewWebhookContract(spec)
})

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, byID: map[string]receivedEvent{}, status: http.StatusOK}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(func() { r.down() })
	return r
}

type endpointBody struct {
	Data struct {
		ID             int64    `json:"id"`
		URL            string   `json:"url"`
		Secret         string   `json:"secret"`
		EventTypes     []string `json:"event_types"`
		Enabled        bool     `json:"enabled"`
		DisabledReason string   `json:"disabled_reason"`
	} `json:"data"`
}

func (f *fixture) createEndpoint(t *testing.T, key, body string) *testenv.Response {
	t.Helper()
	return f.Do(t, http.MethodPost, "/v1/webhook-endpoints", key, body, idemKey(t))
}

// subscribe adds an endpoint for the receiver and gives it the secret.
func (f *fixture) subscribe(t *testing.T, key string, r *receiver, types ...string) int64 {
	t.Helper()
	list, _ := json.Marshal(types)
	if types == nil {
		list = []byte("[]")
	}
	res := f.createEndpoint(t, key, fmt.Sprintf(`{"url": %q, "event_types": %s, "description": "test receiver"}`, r.URL(), list))
	if res.Status != http.StatusCreated {
		t.Fatalf("create endpoint: %d %s", res.Status, res.Body)
	}
	var e endpointBody
	res.Decode(t, &e)
	if !strings.HasPrefix(e.Data.Secret, "whsec_") {
		t.Fatalf("secret %q", e.Data.Secret)
	}
	r.mu.Lock()
	r.secret = e.Data.Secret
	r.mu.Unlock()
	return e.Data.ID
}

const cabinetPassword = "correct horse battery"

// cabinetUser creates a cabinet user of the company and returns the
// absolute one-time sign-in link.
func cabinetUser(t *testing.T, s *testenv.Stack, base string, company int64, email string) string {
	t.Helper()
	return cabinetUserAs(t, s, base, company, email, organizer.RoleOwner)
}

// cabinetUserAs is cabinetUser with a role other than owner.
func cabinetUserAs(t *testing.T, s *testenv.Stack, base string, company int64, email string, role organizer.Role) string {
	t.Helper()
	_, path, err := organizer.New(s.DB, nil, organizer.Limits{}).CreateUser(context.Background(), company, email, role)
	if err != nil {
		t.Fatal(err)
	}
	return base + path
}

type page struct {
	Status int
	URL    *url.URL
	Body   string
	Header http.Header
}

// browserless is a cabinet session driven with net/http, as a browser
// would, with a cookie jar; its requests send no Origin or Sec-Fetch-Site
// unless a test adds them.
type browserless struct {
	t    *testing.T
	c    *http.Client
	base string
}

func (b *browserless) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return page{Status: res.StatusCode, URL: res.Request.URL, Body: string(body), Header: res.Header}
}

func (b *browserless) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.abs(path), nil)
	return b.do(req)
}

func (b *browserless) post(path string, form url.Values, headers ...string) page {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.abs(path), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return b.do(req)
}

// ownerInBrowser opens a Chromium signed in as a new owner of company A
// (email), on the report; run runs a named step of actions in it, failing
// the test with the step's name.
func (f *fixture) ownerInBrowser(t *testing.T, email string) (context.Context, func(step string, actions ...chromedp.Action[chromedp.Void])) {
	t.Helper()
	ctx := newBrowser(t, 2*time.Minute)
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	run("set the password", chromedp.Navigate(cabinetUser(t, f.Stack, f.URL, f.companyA, email)),
		chromedp.WaitVisible(chromedp.CSS("#password")),
		chromedp.SendKeys(chromedp.CSS("#password"), cabinetPassword), chromedp.SendKeys(chromedp.CSS("#password_again"), cabinetPassword),
		chromedp.Click(chromedp.CSS("#set-password")), chromedp.WaitVisible(chromedp.CSS("#totals")))
	return ctx, run
}

// postKeyForm sends the keys page's create form as a person would: with
// the one-time token the page gave.
func (b *browserless) postKeyForm(form url.Values, headers ...string) page {
	b.t.Helper()
	return b.post("/cabinet/keys", b.withKeyFormToken(form), headers...)
}

// withKeyFormToken is form with the token of a freshly opened keys page.
func (b *browserless) withKeyFormToken(form url.Values) url.Values {
	b.t.Helper()
	m := formTokenRe.FindStringSubmatch(b.get("/cabinet/keys").Body)
	if m == nil {
		b.t.Fatal("the keys page has no form token")
	}
	out := url.Values{"token": {m[1]}}
	for k, v := range form {
		out[k] = v
	}
	return out
}

func (b *browserless) abs(path string) string {
	if strings.HasPrefix(path, "http") {
		return path
	}
	return b.base + path
}

// setPassword follows a sign-in link and sets the password: the user is
// then signed in, on the report.
func (b *browserless) setPassword(link string) {
	b.t.Helper()
	if p := b.get(link); p.Status != 200 || !strings.Contains(p.Body, "Set your password") {
		b.t.Fatalf("sign-in link page: %d %.300s", p.Status, p.Body)
	}
	p := b.post(link, url.Values{"password": {cabinetPassword}, "password_again": {cabinetPassword}})
	if p.Status != 200 || p.URL.Path != "/cabinet/report" {
		b.t.Fatalf("after setting the password: %d %s %.300s", p.Status, p.URL, p.Body)
	}
}

func (b *browserless) signIn(email, password string) page {
	b.t.Helper()
	return b.post("/cabinet/signin", url.Values{"email": {email}, "password": {password}})
}

func newBrowserless(t *testing.T, base string, tr http.RoundTripper) *browserless {
	jar, _ := cookiejar.New(nil)
	if tr == nil {
		tr = http.DefaultTransport
	}
	return &browserless{t: t, base: base, c: &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute}}
}

// signInFrom posts a sign-in as if from addr and returns the status.
func signInFrom(t *testing.T, base, addr, email, password string) int {
	req, _ := http.NewRequest(http.MethodPost, base+"/cabinet/signin",
		strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", addr)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if (res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable) && res.Header.Get("Retry-After") == "" {
		t.Errorf("%d without Retry-After", res.StatusCode)
	}
	return res.StatusCode
}

// syncBuffer collects output written from another goroutine.
type syncBuffer = testenv.SyncBuffer

// newBrowser is testenv.Browser: headless Chromium, a tab whose actions
// all end within timeout.
func newBrowser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	return testenv.Browser(t, timeout)
}

// distinctColours counts the colours of a grid of about 100x100 pixels
// spread over img.
func distinctColours(img image.Image) int {
	b := img.Bounds()
	dx, dy := max(1, b.Dx()/100), max(1, b.Dy()/100)
	seen := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += dy {
		for x := b.Min.X; x < b.Max.X; x += dx {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// pageWidths are the viewports a cabinet page must fit: a desktop's and a
// phone's.
var pageWidths = []struct {
	name string
	w, h int64
	opts []chromedp.EmulateViewportOption
}{{"desktop", 1280, 900, nil}, {"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}}}

// pageFits measures the page the tab shows at a desktop's and a phone's
// width: at each the page must not scroll sideways, its width compared with
// the window's and with the device's (a phone's layout viewport widens to
// the content, so the window alone can hide an overflow), and check, if
// any, must pass. A full-page screenshot of each width goes to
// .data/artifacts/cabinet/<name>-desktop.png and <name>-phone.png and must
// not be blank. The tab is left at desktop width.
func pageFits(t *testing.T, ctx context.Context, name string, check func(t *testing.T, width int64)) {
	t.Helper()
	pageFitsIn(t, ctx, "cabinet", name, check)
}

// pageFitsIn is pageFits with the screenshots in .data/artifacts/<dir>.
func pageFitsIn(t *testing.T, ctx context.Context, dir, name string, check func(t *testing.T, width int64)) {
	t.Helper()
	dir = filepath.Join("..", ".data", "artifacts", dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, vp := range pageWidths {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.w, vp.h, vp.opts...)); err != nil {
			t.Fatalf("%s: %s width: %v", name, vp.name, err)
		}
		over, err := chromedp.Run(ctx, chromedp.Evaluate[int64](fmt.Sprintf(
			`Math.max(document.documentElement.scrollWidth - window.innerWidth, document.documentElement.scrollWidth - %d)`, vp.w)))
		if err != nil || over > 1 {
			t.Fatalf("the %s page scrolls sideways at %d px: %d px too wide (%v)", name, vp.w, over, err)
		}
		if check != nil {
			check(t, vp.w)
		}
		if v := testenv.AxeViolations(t, ctx); len(v) > 0 {
			t.Errorf("the %s page at %d px breaks WCAG A/AA rules:\n%s", name, vp.w, strings.Join(v, "\n"))
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot of %s at %d px: %v", name, vp.w, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+vp.name+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil || distinctColours(img) <= 10 {
			t.Fatalf("the %s screenshot of %s is blank (%v)", vp.name, name, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("%s: back to desktop width: %v", name, err)
	}
}

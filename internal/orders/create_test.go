package orders

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/holds"
	"github.com/ticketsales/ticketsales/internal/payment"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

var (
	sandbox    = &apikey.Principal{KeyID: 1, CompanyID: 1, Environment: apikey.Sandbox}
	production = &apikey.Principal{KeyID: 2, CompanyID: 1, Environment: apikey.Production}
)

// createWithoutStore runs CreateOrder on a service with no database, no
// holds and no Temporal: an input refused before anything is read or
// written comes back as an error; one that gets further fails the test.
func createWithoutStore(t *testing.T, st Settings, p *apikey.Principal, in CreateOrderInput) (err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%+v went on to read the store: %v", in, r)
		}
	}()
	_, err = (&Service{Settings: st}).CreateOrder(context.Background(), p, in)
	if err == nil {
		t.Fatalf("%+v was accepted", in)
	}
	return err
}

// A create that names neither a reservation nor items, or both, or an
// unknown payment, is refused with every problem at once, before anything
// is read or written.
func TestCreateOrderRefusesBadInputFirst(t *testing.T) {
	items := []Item{{TicketCategoryID: 1, Quantity: 2}}
	for _, c := range []struct {
		name string
		in   CreateOrderInput
		want string // the field errors
	}{
		{"neither reservation_id nor items", CreateOrderInput{EventID: 1, Payment: "external"}, "map[body:<nil>]"},
		{"both", CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Items: items, Payment: "external"}, "map[body.items:<nil>]"},
		{"an unknown payment", CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Payment: "card"}, "map[body.payment:card]"},
		{"neither, and no payment", CreateOrderInput{EventID: 1}, "map[body:<nil> body.payment:]"},
	} {
		err := createWithoutStore(t, Settings{}, sandbox, c.in)
		if got := fmt.Sprint(problems.Fields(t, err)); got != c.want {
			t.Errorf("%s: field errors %s, want %s", c.name, got, c.want)
		}
	}
}

// payment=gateway on a production key of a deployment without a gateway
// for production is refused with 422 gateway_unavailable before anything
// is read or written.
func TestCreateOrderWithoutAGatewayChangesNothing(t *testing.T) {
	st := Settings{Gateways: payment.Set{payment.Test: &payment.TestGateway{}}}
	err := createWithoutStore(t, st, production, CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Payment: "gateway"})
	if p := problems.Of(t, err); !errors.Is(err, errs.GatewayUnavailable) || p.Status != 422 || p.Code != "gateway_unavailable" {
		t.Errorf("answered %d %s: %v", p.Status, p.Code, err)
	}
}

// Sandbox orders pay on the test gateway, never on the hosted one; real
// money goes to the hosted gateway, and to the test gateway only where it
// is allowed for production (APP_ENV=development); else the order is
// refused with gateway_unavailable.
func TestGatewayFor(t *testing.T) {
	test, hosted := &payment.TestGateway{}, &payment.HostedGateway{}
	both := payment.Set{payment.Test: test, payment.Hosted: hosted}
	for _, c := range []struct {
		name        string
		p           *apikey.Principal
		set         payment.Set
		testForProd bool
		want        string // "": gateway_unavailable
	}{
		{"sandbox", sandbox, both, false, payment.Test},
		{"sandbox without the test gateway", sandbox, payment.Set{payment.Hosted: hosted}, true, ""},
		{"production", production, both, false, payment.Hosted},
		{"production in development", production, both, true, payment.Hosted},
		{"production without the hosted gateway", production, payment.Set{payment.Test: test}, false, ""},
		{"production in development without the hosted gateway", production, payment.Set{payment.Test: test}, true, payment.Test},
		{"production in development without gateways", production, payment.Set{}, true, ""},
	} {
		s := &Service{Settings: Settings{Gateways: c.set, TestGatewayForProduction: c.testForProd}}
		got, err := s.gatewayFor(c.p)
		switch {
		case c.want == "" && !errors.Is(err, errs.GatewayUnavailable):
			t.Errorf("%s: %q, %v; want gateway_unavailable", c.name, got, err)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %s", c.name, got, err, c.want)
		}
	}
}

// An event with a seating scheme is not ordered by items: its seats are
// held first and ordered by reservation_id.
func TestItemsOfAnEventWithSeats(t *testing.T) {
	scheme := int64(1)
	sale := &holds.Sale{Event: &store.Event{ID: 1, SchemeID: &scheme}, Prices: map[int64]int64{10: 5000}}
	_, err := (&Service{}).itemsOf(context.Background(), sale, CreateOrderInput{Items: []Item{{TicketCategoryID: 10, Quantity: 1}}})
	if _, ok := problems.Fields(t, err)["body.items"]; !ok {
		t.Errorf("items of an event with seats: %v", err)
	}
}

// Items are priced at the event's current prices; a category the event
// does not sell, a category listed twice and more than 20 tickets in all
// are each named.
func TestWantedItems(t *testing.T) {
	sale := &holds.Sale{Event: &store.Event{ID: 1}, Prices: map[int64]int64{10: 5000, 11: 3000}}
	verr := &errs.ValidationError{}
	want := wantedItems(sale, []Item{{TicketCategoryID: 10, Quantity: 12}, {TicketCategoryID: 11, Quantity: 8}}, verr)
	if verr.OrNil() != nil || fmt.Sprint(want) != "[{10 12 5000} {11 8 3000}]" {
		t.Errorf("20 tickets of two categories: %v, %v", want, verr)
	}
	for _, c := range []struct {
		name  string
		items []Item
		want  string
	}{
		{"a category of another event", []Item{{TicketCategoryID: 10, Quantity: 1}, {TicketCategoryID: 99, Quantity: 1}},
			"map[body.items[1].ticket_category_id:99]"},
		{"a category twice", []Item{{TicketCategoryID: 10, Quantity: 1}, {TicketCategoryID: 10, Quantity: 1}},
			"map[body.items[1].ticket_category_id:10]"},
		{"21 tickets", []Item{{TicketCategoryID: 10, Quantity: 20}, {TicketCategoryID: 11, Quantity: 1}},
			"map[body.items:21]"},
	} {
		verr := &errs.ValidationError{}
		wantedItems(sale, c.items, verr)
		if got := fmt.Sprint(problems.Fields(t, verr.OrNil())); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

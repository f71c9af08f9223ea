package orders

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
		{"neither reservation_id nor items", CreateOrderInput{EventID: 1, Payment: "external", Customer: anna}, "map[body:<nil>]"},
		{"both", CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Items: items, Payment: "external", Customer: anna}, "map[body.items:<nil>]"},
		{"an unknown payment", CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Payment: "card", Customer: anna}, "map[body.payment:card]"},
		{"neither, and no payment", CreateOrderInput{EventID: 1, Customer: anna}, "map[body:<nil> body.payment:]"},
	} {
		err := createWithoutStore(t, Settings{}, sandbox, c.in)
		if got := fmt.Sprint(problems.Fields(t, err)); got != c.want {
			t.Errorf("%s: field errors %s, want %s", c.name, got, c.want)
		}
	}
}

var anna = Customer{Email: "anna@example.com", FirstName: "Анна", LastName: "Павлова", Phone: "+7 999 123-45-67"}

// The bounds of an order's request hold whoever calls CreateOrder, not
// only behind the API's schema: a quantity of 0 or less, more than 20
// tickets of an item or more than 20 items, a buyer whose e-mail or name
// could start a new e-mail header, a name longer than 100 characters, an
// over-long reservation id. Each is refused before anything is read.
func TestCreateOrderChecksItsBounds(t *testing.T) {
	order := func(items []Item, c Customer) CreateOrderInput {
		return CreateOrderInput{EventID: 1, Items: items, Payment: "external", Customer: c}
	}
	with := func(edit func(*Customer)) Customer { c := anna; edit(&c); return c }
	many := make([]Item, MaxItems+1)
	for i := range many {
		many[i] = Item{TicketCategoryID: int64(i + 1), Quantity: 1}
	}
	for _, c := range []struct {
		name  string
		in    CreateOrderInput
		field string
	}{
		{"a quantity of -3", order([]Item{{TicketCategoryID: 1, Quantity: -3}}, anna), "body.items[0].quantity"},
		{"a quantity of 0", order([]Item{{TicketCategoryID: 1, Quantity: 1}, {TicketCategoryID: 2}}, anna), "body.items[1].quantity"},
		{"24 tickets of an item", order([]Item{{TicketCategoryID: 1, Quantity: 24}}, anna), "body.items[0].quantity"},
		{"21 items", order(many, anna), "body.items"},
		{"an e-mail with a line break", order(nil, with(func(c *Customer) { c.Email = "anna@example.com\r\nBcc: all@example.com" })), "body.customer.email"},
		{"an e-mail with a display name", order(nil, with(func(c *Customer) { c.Email = "Anna <anna@example.com>" })), "body.customer.email"},
		{"an e-mail of 255 bytes", order(nil, with(func(c *Customer) { c.Email = strings.Repeat("a", 243) + "@example.com" })), "body.customer.email"},
		{"a first name with a line break", order(nil, with(func(c *Customer) { c.FirstName = "Анна\nBcc: x" })), "body.customer.first_name"},
		{"a last name of 101 letters", order(nil, with(func(c *Customer) { c.LastName = strings.Repeat("Я", 101) })), "body.customer.last_name"},
		{"no last name", order(nil, with(func(c *Customer) { c.LastName = "" })), "body.customer.last_name"},
		{"a phone of letters", order(nil, with(func(c *Customer) { c.Phone = "call me" })), "body.customer.phone"},
		{"a reservation id of 65 characters", CreateOrderInput{EventID: 1, ReservationID: strings.Repeat("r", 65), Payment: "external", Customer: anna}, "body.reservation_id"},
	} {
		fields := problems.Fields(t, createWithoutStore(t, Settings{}, sandbox, c.in))
		if _, ok := fields[c.field]; !ok {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, fields, c.field)
		}
	}
	// The longest allowed values pass the bounds (they fail later, on the
	// missing store).
	long := with(func(c *Customer) {
		c.Email = strings.Repeat("a", 242) + "@example.com"
		c.FirstName, c.LastName, c.Phone = strings.Repeat("Я", 100), "Д'Артаньян-Петрова", ""
	})
	verr := &errs.ValidationError{}
	long.Check("body.customer", verr)
	checkItems([]Item{{TicketCategoryID: 1, Quantity: 20}}, verr)
	if err := verr.OrNil(); err != nil {
		t.Errorf("the longest allowed buyer and item: %v", err)
	}
}

// payment=gateway on a production key of a deployment without a gateway
// for production is refused with 422 gateway_unavailable before anything
// is read or written.
func TestCreateOrderWithoutAGatewayChangesNothing(t *testing.T) {
	st := Settings{Gateways: payment.Set{payment.Test: &payment.TestGateway{}}}
	err := createWithoutStore(t, st, production, CreateOrderInput{EventID: 1, ReservationID: "rsv_1", Payment: "gateway", Customer: anna})
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

// A buyer's e-mail is one plain address: real ones pass (spaces around it,
// as a phone's autofill leaves them, are dropped first), a name, a
// comment, a space or a line break inside does not.
func TestPlainAddress(t *testing.T) {
	for _, s := range []string{"anna@example.com", "Anna@Example.com", "o'connor@example.ie", `"anna"@example.com`,
		"анна@пример.рф", "a.b+tickets@sub.example.co.uk"} {
		if !PlainAddress(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "Anna <anna@example.com>", "anna@example.com (Anna)", "anna@example.com\r\nBcc: x@example.com",
		`"an na"@example.com`, "anna@example.com anna2@example.com", "anna", strings.Repeat("a", 243) + "@example.com"} {
		if PlainAddress(s) {
			t.Errorf("%q accepted", s)
		}
	}
	if c := (Customer{Email: " anna@example.com\n", FirstName: " Анна", LastName: "Павлова ", Phone: "+7 999 123-45-67 "}).Trimmed(); c.Email != "anna@example.com" ||
		c.FirstName != "Анна" || c.LastName != "Павлова" || c.Phone != "+7 999 123-45-67" {
		t.Errorf("trimmed: %+v", c)
	}
}

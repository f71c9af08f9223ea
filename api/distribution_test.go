package api_test

// Distribution through the real API: channels of applications, seats and
// quantities allocated to them, windows, releases (docs/decisions.md,
// "Channels and allocations").

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// channels is a fixture with two channels of company A: "reseller" (its
// application "shop") and "agg" (its application "aggregator"); the
// fixture's own key (application "test") sells in general sale.
type channels struct {
	*fixture
	dist                  *distribution.Service
	reseller, agg         int64
	resellerKey, aggKey   string
	generalKey            string
	swan, standup, expoID int64
}

func newChannels(t *testing.T) *channels {
	t.Helper()
	f := newFixture(t)
	c := &channels{fixture: f, dist: distribution.New(f.DB, nil, nil, distribution.Settings{}), generalKey: f.keyA,
		swan: f.ids["swan-lake"], standup: f.ids["standup"], expoID: f.ids["expo"]}
	ctx := context.Background()
	c.resellerKey = f.KeyIn(t, f.companyA, apikey.Sandbox, "shop")
	c.aggKey = f.KeyIn(t, f.companyA, apikey.Sandbox, "aggregator")
	for _, ch := range []struct {
		ref, name, app string
		id             *int64
	}{{"reseller", "Реселлер «Билеты Урала»", "shop", &c.reseller}, {"agg", "Агрегатор", "aggregator", &c.agg}} {
		made, err := store.UpsertChannel(ctx, f.DB, f.companyA, ch.ref, ch.name)
		if err != nil {
			t.Fatal(err)
		}
		*ch.id = made.ID
		if _, err := store.SetApplicationChannel(ctx, f.DB, f.companyA, apikey.Sandbox, ch.app, made.ID); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *channels) allocate(t *testing.T, channel int64, sel distribution.Selector) store.SeatMove {
	t.Helper()
	mv, err := c.dist.AllocateSeats(context.Background(), c.companyA, c.swan, channel, sel)
	if err != nil {
		t.Fatal(err)
	}
	return mv
}

func (c *channels) seatsOf(t *testing.T, key string) map[string]string {
	t.Helper()
	var a availability
	c.Get(t, fmt.Sprintf("/v1/events/%d/availability", c.swan), key).Decode(t, &a)
	out := map[string]string{}
	for _, s := range a.Data.Seats {
		out[s.SeatID] = s.Status
	}
	return out
}

func (c *channels) holdAs(t *testing.T, key string, seats ...string) *testenv.Response {
	t.Helper()
	return c.Do(t, http.MethodPost, "/v1/reservations", key,
		fmt.Sprintf(`{"event_id": %d, "seats": %s}`, c.swan, seatsJSON(seats...)), idemKey(t))
}

type shareBody struct {
	Data struct {
		Channel *struct {
			ID  int64
			Ref string
		}
		Window struct {
			StartsAt *time.Time `json:"starts_at"`
			EndsAt   time.Time  `json:"ends_at"`
			Open     bool
		}
		Allocation *struct {
			Seats      store.SeatCounts
			Categories []distribution.QuotaView
		}
		GeneralSale struct {
			Seats      store.SeatCounts
			Categories []distribution.CategoryLeft
		} `json:"general_sale"`
	}
}

func (c *channels) share(t *testing.T, key string, event int64) shareBody {
	t.Helper()
	var b shareBody
	res := c.Get(t, fmt.Sprintf("/v1/events/%d/allocation", event), key)
	if res.Status != http.StatusOK {
		t.Fatalf("allocation: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &b)
	return b
}

// Seats allocated to a channel are held and sold only through its keys;
// others do not see them and are refused with seat_not_for_sale.
func TestAllocatedSeatsSellOnlyThroughTheirChannel(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	mv := c.allocate(t, c.reseller, distribution.Selector{Rows: []distribution.RowRange{{Zone: "parterre", From: "1", To: "1"}},
		SeatIDs: []string{"balcony-1-1"}})
	if len(mv.Moved) != 31 || len(mv.Left) != 0 {
		t.Fatalf("allocated %d seats (left %v), want row 1 of the stalls and one balcony seat", len(mv.Moved), mv.Left)
	}

	general, reseller, agg := c.seatsOf(t, c.generalKey), c.seatsOf(t, c.resellerKey), c.seatsOf(t, c.aggKey)
	if _, shown := general["parterre-1-5"]; shown {
		t.Error("general sale sees a seat allocated to the reseller")
	}
	if _, shown := agg["balcony-1-1"]; shown {
		t.Error("another channel sees a seat allocated to the reseller")
	}
	if reseller["parterre-1-5"] != "free" || reseller["parterre-2-5"] != "free" || len(reseller) != 96 {
		t.Errorf("the reseller sees %d seats (parterre-1-5 %q), want all 96, its own and general sale's", len(reseller), reseller["parterre-1-5"])
	}
	if len(general) != 96-31 {
		t.Errorf("general sale sees %d seats, want %d", len(general), 96-31)
	}

	p := expectProblem(t, c.holdAs(t, c.generalKey, "parterre-1-5", "parterre-2-5"), http.StatusConflict, "seat_not_for_sale")
	if p.Detail == "" {
		t.Error("the refusal says nothing")
	}
	expectProblem(t, c.holdAs(t, c.aggKey, "balcony-1-1"), http.StatusConflict, "seat_not_for_sale")
	if st := c.seatStates(t)["parterre-2-5"]; st != "free" {
		t.Errorf("a refused hold left parterre-2-5 %s", st)
	}
	res := c.holdAs(t, c.resellerKey, "parterre-1-5", "parterre-2-5")
	if res.Status != http.StatusCreated {
		t.Fatalf("the reseller holds its own seat and a general one: %d %s", res.Status, res.Body)
	}

	// Best available for general sale never picks the reseller's row 1.
	var r reservationBody
	best := c.Do(t, http.MethodPost, "/v1/reservations", c.generalKey,
		fmt.Sprintf(`{"event_id": %d, "best_available": {"quantity": 4, "ticket_category_ids": [%d]}}`, c.swan, c.category(t, "Stalls")), idemKey(t))
	best.Decode(t, &r)
	for _, s := range r.Data.Seats {
		if s.SeatID[:len("parterre-1-")] == "parterre-1-" {
			t.Errorf("general sale's best available picked the reseller's %s", s.SeatID)
		}
	}

	sh := c.share(t, c.resellerKey, c.swan)
	if sh.Data.Channel == nil || sh.Data.Channel.Ref != "reseller" || sh.Data.Allocation == nil {
		t.Fatalf("the reseller's share names no channel or allocation: %+v", sh.Data)
	}
	if got := sh.Data.Allocation.Seats; got.Allocated != 31 || got.Held != 1 || got.Left != 30 || got.Sold != 0 {
		t.Errorf("the reseller's seats: %+v, want 31 allocated, 1 held, 30 left", got)
	}
	if g := c.share(t, c.generalKey, c.swan); g.Data.Channel != nil || g.Data.Allocation != nil || g.Data.GeneralSale.Seats.Allocated != 65 {
		t.Errorf("general sale's share: %+v", g.Data)
	}
}

func (c *channels) category(t *testing.T, name string) int64 {
	t.Helper()
	var cats struct{ Data []category }
	c.Get(t, fmt.Sprintf("/v1/events/%d/categories", c.swan), c.generalKey).Decode(t, &cats)
	for _, k := range cats.Data {
		if k.Name == name {
			return k.ID
		}
	}
	t.Fatalf("no category %q", name)
	return 0
}

// A channel's window: a presale before general sale, and a stop before
// the doors; outside it, holds are refused saying when sales open.
func TestChannelWindows(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	ctx := context.Background()
	now := time.Now()
	opens := now.Add(72 * time.Hour).Truncate(time.Second)
	if err := store.SetGeneralSale(ctx, c.DB, c.companyA, c.swan, window.Window{Start: &opens}); err != nil {
		t.Fatal(err)
	}
	presale := now.Add(-time.Hour)
	if err := c.dist.SetTerms(ctx, c.companyA, c.swan, c.reseller, window.Window{Start: &presale}, nil); err != nil {
		t.Fatal(err)
	}
	stopped := now.Add(-time.Minute)
	if err := c.dist.SetTerms(ctx, c.companyA, c.swan, c.agg, window.Window{End: &stopped}, nil); err != nil {
		t.Fatal(err)
	}
	c.awaitSaleFresh(t)

	var p struct {
		Code        string
		SalesOpenAt *time.Time `json:"sales_open_at"`
		Closed      *time.Time `json:"sales_closed_at"`
	}
	res := c.holdAs(t, c.generalKey, "parterre-2-1")
	expectProblem(t, res, http.StatusConflict, "sales_not_open")
	res.Decode(t, &p)
	if p.SalesOpenAt == nil || !p.SalesOpenAt.Equal(opens) {
		t.Errorf("sales_not_open says sales open at %v, want %v", p.SalesOpenAt, opens)
	}
	if res := c.holdAs(t, c.resellerKey, "parterre-2-1"); res.Status != http.StatusCreated {
		t.Fatalf("the presale channel holds a week early: %d %s", res.Status, res.Body)
	}
	res = c.holdAs(t, c.aggKey, "parterre-2-2")
	expectProblem(t, res, http.StatusConflict, "sales_closed")
	// Orders by items are held to the same window.
	res = c.Do(t, http.MethodPost, "/v1/orders", c.generalKey, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": 1}],
		"customer": {"email": "a@example.com", "first_name": "Анна", "last_name": "Петрова", "phone": "+79990000000"}, "payment": "external"}`,
		c.standup, c.gaCategory(t)), idemKey(t))
	if res.Status != http.StatusCreated {
		t.Fatalf("general sale of another event is open: %d %s", res.Status, res.Body)
	}
	if sh := c.share(t, c.generalKey, c.swan); sh.Data.Window.Open || sh.Data.Window.StartsAt == nil || !sh.Data.Window.StartsAt.Equal(opens) {
		t.Errorf("general sale's window reads %+v, want closed until %v", sh.Data.Window, opens)
	}
	if sh := c.share(t, c.resellerKey, c.swan); !sh.Data.Window.Open {
		t.Errorf("the presale's window reads closed: %+v", sh.Data.Window)
	}
}

// awaitSaleFresh waits out the api's sale cache, which keeps windows for
// its TTL.
func (c *channels) awaitSaleFresh(t *testing.T) {
	time.Sleep(1100 * time.Millisecond)
}

func (c *channels) gaCategory(t *testing.T) int64 {
	t.Helper()
	var cats struct{ Data []category }
	c.Get(t, fmt.Sprintf("/v1/events/%d/categories", c.standup), c.generalKey).Decode(t, &cats)
	return cats.Data[0].ID
}

// Quantities of a general-admission category allocated to a channel are
// ordered only through it; general sale gets sold_out once what is left
// is the channel's; a cancel gives them back to the channel.
func TestQuotasOfGeneralAdmission(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	ctx := context.Background()
	ga := c.gaCategory(t)
	if _, err := c.dist.SetQuota(ctx, c.companyA, c.standup, c.reseller, ga, nil, 150); err != nil {
		t.Fatal(err)
	}
	orderBy := func(key string, n int) *testenv.Response {
		return c.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "items": [{"ticket_category_id": %d, "quantity": %d}],
			"customer": {"email": "a@example.com", "first_name": "Анна", "last_name": "Петрова", "phone": "+79990000000"}, "payment": "external"}`,
			c.standup, ga, n), idemKey(t))
	}
	for i := 0; i < 2; i++ {
		if res := orderBy(c.generalKey, 20); res.Status != http.StatusCreated {
			t.Fatalf("general sale order %d: %d %s", i, res.Status, res.Body)
		}
	}
	res := orderBy(c.generalKey, 20)
	expectProblem(t, res, http.StatusConflict, "sold_out")
	if res := orderBy(c.aggKey, 11); res.Status != http.StatusConflict {
		t.Fatalf("another channel took the reseller's quota: %d %s", res.Status, res.Body)
	}
	if res := orderBy(c.generalKey, 10); res.Status != http.StatusCreated {
		t.Fatalf("the last 10 of general sale: %d %s", res.Status, res.Body)
	}
	var o struct{ Data order }
	got := orderBy(c.resellerKey, 20)
	if got.Status != http.StatusCreated {
		t.Fatalf("the reseller orders from its quota: %d %s", got.Status, got.Body)
	}
	got.Decode(t, &o)
	sh := c.share(t, c.resellerKey, c.standup)
	if sh.Data.Allocation == nil || len(sh.Data.Allocation.Categories) != 1 {
		t.Fatalf("the reseller's share: %+v", sh.Data)
	}
	if q := sh.Data.Allocation.Categories[0]; q.Allocated != 150 || q.Held != 20 || q.Left != 130 {
		t.Errorf("the reseller's quota: %+v, want 150 allocated, 20 held, 130 left", q)
	}
	if res := c.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", o.Data.ID), c.resellerKey, ""); res.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", res.Status, res.Body)
	}
	if q := c.share(t, c.resellerKey, c.standup).Data.Allocation.Categories[0]; q.Left != 150 || q.Held != 0 {
		t.Errorf("after the cancel the quota reads %+v, want all 150 left", q)
	}
	if g := c.share(t, c.generalKey, c.standup).Data.GeneralSale.Categories; len(g) != 1 || g[0].Left != 0 {
		t.Errorf("general sale's left: %+v, want 0", g)
	}
}

// Releasing gives the unsold rest back to general sale at once; what the
// channel holds stays held, and a hold that lapses afterwards returns to
// general sale, not to the channel.
func TestReleaseReturnsTheRestToGeneralSale(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	c.StartWorker(t)
	ctx := context.Background()
	c.allocate(t, c.reseller, distribution.Selector{Zones: []string{"balcony"}})
	res := c.holdAs(t, c.resellerKey, "balcony-1-1")
	if res.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", res.Status, res.Body)
	}
	paid := c.paidOrder(t, c.resellerKey, "balcony-1-2")
	part, err := c.dist.Release(ctx, c.companyA, store.Release{EventID: c.swan, ChannelID: c.reseller, SeatIDs: []string{"balcony-1-3"}})
	if err != nil || len(part.Seats) != 1 {
		t.Fatalf("partial release: %+v %v", part, err)
	}
	if res := c.holdAs(t, c.generalKey, "balcony-1-3"); res.Status != http.StatusCreated {
		t.Fatalf("general sale holds a released seat: %d %s", res.Status, res.Body)
	}
	expectProblem(t, c.holdAs(t, c.generalKey, "balcony-1-4"), http.StatusConflict, "seat_not_for_sale")
	whole, err := c.dist.Release(ctx, c.companyA, store.Release{EventID: c.swan, ChannelID: c.reseller, Whole: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Seats) != 4 { // 4, 5, 6 free and 1 held
		t.Errorf("the whole release moved %v, want the 3 free seats and the held one", whole.Seats)
	}
	if res := c.holdAs(t, c.generalKey, "balcony-1-4"); res.Status != http.StatusCreated {
		t.Fatalf("general sale holds a seat released as a whole: %d %s", res.Status, res.Body)
	}
	// A refund of the seat the channel sold returns it to general sale:
	// the channel is done.
	if res := c.refundAs(t, c.resellerKey, paid); res.Status != http.StatusOK && res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	if res := c.holdAs(t, c.generalKey, "balcony-1-2"); res.Status != http.StatusCreated {
		t.Fatalf("general sale holds a refunded seat of a released channel: %d %s", res.Status, res.Body)
	}
}

func (c *channels) refundAs(t *testing.T, key string, orderID int64) *testenv.Response {
	t.Helper()
	return c.Do(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", orderID), key, `{"reason": "возврат"}`, idemKey(t))
}

// The aggregator adapter answers per channel too: its available seats
// leave out other channels' seats, its reserve refuses them with
// seat_not_for_sale, and its allocation says what it may sell.
func TestAggregatorSeesItsChannel(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	c.allocate(t, c.reseller, distribution.Selector{Zones: []string{"balcony"}})
	c.allocate(t, c.agg, distribution.Selector{Rows: []distribution.RowRange{{Zone: "parterre", From: "3", To: "3"}}})
	var seats []struct {
		ID string `json:"id"`
	}
	c.Get(t, fmt.Sprintf("/aggregator/v1/sessions/%d/available-seats", c.swan), c.aggKey).Decode(t, &seats)
	ids := map[string]bool{}
	for _, s := range seats {
		ids[s.ID] = true
	}
	if len(seats) != 90 || ids["balcony|balcony-1-1"] || !ids["parterre|parterre-3-7"] {
		t.Errorf("the aggregator sees %d seats (balcony-1-1 %v, its own parterre-3-7 %v), want 90 without the reseller's balcony",
			len(seats), ids["balcony|balcony-1-1"], ids["parterre|parterre-3-7"])
	}
	res := c.Do(t, http.MethodPost, "/aggregator/v1/reserve", c.aggKey,
		fmt.Sprintf(`{"sessionId": "%d", "seats": ["balcony|balcony-1-2"], "ttl": 900}`, c.swan))
	expectProblem(t, res, http.StatusConflict, "seat_not_for_sale")
	var p struct {
		Seats []string `json:"unavailableSeats"`
	}
	res.Decode(t, &p)
	if len(p.Seats) != 1 || p.Seats[0] != "balcony|balcony-1-2" {
		t.Errorf("the refusal names %v, want balcony|balcony-1-2", p.Seats)
	}
	res = c.Do(t, http.MethodPost, "/aggregator/v1/reserve", c.generalKey,
		fmt.Sprintf(`{"sessionId": "%d", "quantity": 4, "ttl": 900}`, c.swan))
	var r struct {
		OrderID string `json:"orderId"`
	}
	if res.Status != http.StatusCreated {
		t.Fatalf("general sale reserves by quantity: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &r)
	var held []string
	if err := c.DB.NewRaw("SELECT seat_id FROM event_seats WHERE hold_id = ?", r.OrderID).Scan(context.Background(), &held); err != nil {
		t.Fatal(err)
	}
	for _, s := range held {
		if s[:len("parterre-3-")] == "parterre-3-" || s[:len("balcony")] == "balcony" {
			t.Errorf("general sale's reserve by quantity took the channels' %s", s)
		}
	}
	var share struct {
		Channel    *struct{ Ref string }
		Allocation *struct{ Seats store.SeatCounts }
	}
	c.Get(t, fmt.Sprintf("/aggregator/v1/sessions/%d/allocation", c.swan), c.aggKey).Decode(t, &share)
	if share.Channel == nil || share.Channel.Ref != "agg" || share.Allocation == nil || share.Allocation.Seats.Allocated != 30 {
		t.Errorf("the aggregator's allocation: %+v", share)
	}
}

// A seat whose hold ends, or whose ticket is refunded, returns to the
// allocation it came from: the channel sells it again, general sale
// still cannot — the sandbox check of a reseller's presale, end to end.
func TestFreedSeatsReturnToTheirAllocation(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	c.StartWorker(t)
	c.allocate(t, c.reseller, distribution.Selector{SeatIDs: []string{"parterre-2-10", "parterre-2-11"}})
	var r reservationBody
	res := c.holdAs(t, c.resellerKey, "parterre-2-10")
	if res.Status != http.StatusCreated {
		t.Fatalf("hold: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &r)
	if res := c.Do(t, http.MethodDelete, "/v1/reservations/"+r.Data.ID, c.resellerKey, ""); res.Status != http.StatusOK {
		t.Fatalf("release the hold: %d %s", res.Status, res.Body)
	}
	expectProblem(t, c.holdAs(t, c.generalKey, "parterre-2-10"), http.StatusConflict, "seat_not_for_sale")
	paid := c.paidOrder(t, c.resellerKey, "parterre-2-11")
	ts := c.tickets(t, paid)
	if len(ts) != 1 {
		t.Fatalf("tickets: %+v", ts)
	}
	if res := c.refundAs(t, c.resellerKey, paid); res.Status != http.StatusOK && res.Status != http.StatusCreated {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	expectProblem(t, c.holdAs(t, c.generalKey, "parterre-2-11"), http.StatusConflict, "seat_not_for_sale")
	if res := c.holdAs(t, c.resellerKey, "parterre-2-10", "parterre-2-11"); res.Status != http.StatusCreated {
		t.Fatalf("the reseller sells both again: %d %s", res.Status, res.Body)
	}
}

// price_from leaves out what is not for sale to the caller: with every
// balcony seat (the cheaper category) allocated to the reseller, general
// sale's lowest price is the stalls', the reseller's the balcony's.
func TestPriceFromIsTheCallersOwn(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	priceFrom := func(key string) int64 {
		t.Helper()
		var events struct {
			Data []struct {
				ID        int64                   `json:"id"`
				PriceFrom *struct{ Amount int64 } `json:"price_from"`
			}
		}
		c.Get(t, "/v1/events", key).Decode(t, &events)
		for _, e := range events.Data {
			if e.ID == c.swan && e.PriceFrom != nil {
				return e.PriceFrom.Amount
			}
		}
		t.Fatalf("swan-lake has no price_from for the key")
		return 0
	}
	if got := priceFrom(c.generalKey); got != 150000 {
		t.Fatalf("before any allocation price_from is %d, want the balcony's 150000", got)
	}
	c.allocate(t, c.reseller, distribution.Selector{Zones: []string{"balcony"}})
	if got := priceFrom(c.generalKey); got != 300000 {
		t.Errorf("general sale's price_from is %d, want the stalls' 300000: the balcony is the reseller's", got)
	}
	if got := priceFrom(c.aggKey); got != 300000 {
		t.Errorf("another channel's price_from is %d, want 300000", got)
	}
	if got := priceFrom(c.resellerKey); got != 150000 {
		t.Errorf("the reseller's price_from is %d, want its balcony's 150000", got)
	}
}

// A scheduled event's quantities are allocated per session: a session's
// quota is kept out of general sale's share of that session only.
func TestQuotasOfASession(t *testing.T) {
	t.Parallel()
	c := newChannels(t)
	ctx := context.Background()
	var cats struct{ Data []category }
	c.Get(t, fmt.Sprintf("/v1/events/%d/categories", c.expoID), c.generalKey).Decode(t, &cats)
	adult := cats.Data[0].ID
	var sessions struct {
		Data []struct {
			ID int64 `json:"id"`
		}
	}
	c.Get(t, fmt.Sprintf("/v1/sessions?filter.event_id=%d", c.expoID), c.generalKey).Decode(t, &sessions)
	if len(sessions.Data) != 2 {
		t.Fatalf("expo sessions: %+v", sessions.Data)
	}
	first, second := sessions.Data[0].ID, sessions.Data[1].ID
	if _, err := c.dist.SetQuota(ctx, c.companyA, c.expoID, c.reseller, adult, &first, 30); err != nil {
		t.Fatal(err)
	}
	orderIn := func(key string, slot int64, n int) *testenv.Response {
		return c.Do(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "schedule_slot_id": %d,
			"items": [{"ticket_category_id": %d, "quantity": %d}],
			"customer": {"email": "ivan@example.com", "first_name": "Иван", "last_name": "Смирнов", "phone": "+79990000001"}, "payment": "external"}`,
			c.expoID, slot, adult, n), idemKey(t))
	}
	if res := orderIn(c.generalKey, first, 20); res.Status != http.StatusCreated {
		t.Fatalf("general sale's 20 of the first session: %d %s", res.Status, res.Body)
	}
	res := orderIn(c.generalKey, first, 1)
	expectProblem(t, res, http.StatusConflict, "sold_out")
	var p struct {
		SlotSoldOut bool `json:"slot_sold_out"`
		Detail      string
	}
	res.Decode(t, &p)
	if !p.SlotSoldOut {
		t.Errorf("the refusal does not name the session: %+v", p)
	}
	if res := orderIn(c.aggKey, first, 1); res.Status != http.StatusConflict {
		t.Fatalf("another channel took the reseller's session quota: %d %s", res.Status, res.Body)
	}
	for i := 0; i < 2; i++ {
		if res := orderIn(c.resellerKey, first, 15); res.Status != http.StatusCreated {
			t.Fatalf("the reseller's quota, order %d: %d %s", i, res.Status, res.Body)
		}
	}
	expectProblem(t, orderIn(c.resellerKey, first, 1), http.StatusConflict, "sold_out")
	if res := orderIn(c.generalKey, second, 20); res.Status != http.StatusCreated {
		t.Fatalf("the second session is all general sale's: %d %s", res.Status, res.Body)
	}
	sh := c.share(t, c.resellerKey, c.expoID)
	if sh.Data.Allocation == nil || len(sh.Data.Allocation.Categories) != 1 {
		t.Fatalf("the reseller's share: %+v", sh.Data)
	}
	if q := sh.Data.Allocation.Categories[0]; q.SessionID == nil || *q.SessionID != first || q.Allocated != 30 || q.Held != 30 || q.Left != 0 {
		t.Errorf("the reseller's session quota: %+v", q)
	}
}

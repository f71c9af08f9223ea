package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/report"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// reportFixture writes orders, tickets and refunds straight into the
// tables, so the test knows every sum the report must find without the
// report's own SQL.
type reportFixture struct {
	*demo
	t   *testing.T
	seq int
}

type fixtureSale struct {
	key      int64
	test     bool
	channel  string
	event    int64
	cats     []int64 // one ticket per entry
	prices   []int64
	fee      int64
	paidAt   time.Time
	orderID  int64
	tickets  []int64
	currency string
	included bool  // fee inside the prices: amount = Σ prices
	session  int64 // a scheduled event's session (schedule_slot_id)
}

// sale stores a paid order with its tickets.
func (f *reportFixture) sale(s *fixtureSale) {
	f.t.Helper()
	ctx := context.Background()
	var total int64
	for _, p := range s.prices {
		total += p
	}
	amount := total + s.fee
	if s.included {
		amount = total
	}
	var session *int64
	if s.session != 0 {
		session = &s.session
	}
	err := f.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at, channel, schedule_slot_id)
		SELECT a.company_id, k.id, ?, ?, 'paid', 'external', 'RUB', ?, ?, ?, 'b@x.test', 'B', 'C', '', '\x01', ?, ?, ?, ?
		FROM api_keys k JOIN applications a ON a.id = k.application_id WHERE k.id = ? RETURNING id`,
		s.test, s.event, total, s.fee, amount, s.paidAt, s.paidAt, s.channel, session, s.key).Scan(ctx, &s.orderID)
	if err != nil {
		f.t.Fatal(err)
	}
	for i, c := range s.cats {
		f.seq++
		if _, err := f.DB.NewRaw(`INSERT INTO order_items (order_id, position, category_id, price) VALUES (?, ?, ?, ?)`,
			s.orderID, i, c, s.prices[i]).Exec(ctx); err != nil {
			f.t.Fatal(err)
		}
		var id int64
		if err := f.DB.NewRaw(`INSERT INTO tickets (order_id, position, number, barcode) VALUES (?, ?, ?, ?) RETURNING id`,
			s.orderID, i, fmt.Sprintf("T-%d", f.seq), fmt.Sprintf("%013d", f.seq)).Scan(ctx, &id); err != nil {
			f.t.Fatal(err)
		}
		s.tickets = append(s.tickets, id)
	}
}

// refund stores a refund of some of the sale's tickets (by index).
func (f *reportFixture) refund(s *fixtureSale, amount int64, status string, at time.Time, idx ...int) {
	f.t.Helper()
	ctx := context.Background()
	f.seq++
	id := fmt.Sprintf("rf-%d", f.seq)
	var completed *time.Time
	if status == "completed" {
		completed = &at
	}
	if _, err := f.DB.NewRaw(`INSERT INTO refunds (id, order_id, amount, money_returned_by, status, created_at, completed_at)
		VALUES (?, ?, ?, 'external', ?, ?, ?)`, id, s.orderID, amount, status, at, completed).Exec(ctx); err != nil {
		f.t.Fatal(err)
	}
	for _, i := range idx {
		if _, err := f.DB.NewRaw(`INSERT INTO refund_tickets (refund_id, ticket_id) VALUES (?, ?)`, id, s.tickets[i]).Exec(ctx); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *reportFixture) category(event int64, ref string) int64 {
	f.t.Helper()
	var id int64
	if err := f.DB.NewRaw("SELECT id FROM ticket_categories WHERE event_id = ? AND ref = ?", event, ref).Scan(context.Background(), &id); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// TestSalesReportSumsOrdersAndRefunds: every figure of the report equals
// the sum of the production orders and completed refunds it covers; sandbox
// orders, pending refunds, sales outside the range and another company's
// orders change nothing.
func TestSalesReportSumsOrdersAndRefunds(t *testing.T) {
	ctx := context.Background()
	f := &reportFixture{demo: newDemo(t), t: t}
	swan, standup := f.eventID(t, "swan-lake"), f.eventID(t, "standup")
	stalls, balcony, ga := f.category(swan, "stalls"), f.category(swan, "balcony"), f.category(standup, "ga")
	_, prodKey := f.Key(t, f.company, "production")
	_, aggKey := f.Key(t, f.company, "production")
	day1 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	day3 := day1.AddDate(0, 0, 2)

	a := &fixtureSale{key: prodKey, channel: "api", event: swan, cats: []int64{stalls, stalls, balcony},
		prices: []int64{300000, 300000, 150000}, fee: 75000, paidAt: day1}
	b := &fixtureSale{key: aggKey, channel: "aggregator", event: swan, cats: []int64{balcony},
		prices: []int64{150000}, fee: 15000, paidAt: day2}
	c := &fixtureSale{key: prodKey, channel: "api", event: standup, cats: []int64{ga, ga},
		prices: []int64{120000, 120000}, fee: 0, paidAt: day2.Add(3 * time.Hour)}
	before := &fixtureSale{key: prodKey, channel: "api", event: standup, cats: []int64{ga},
		prices: []int64{120000}, paidAt: day1.AddDate(0, 0, -5)}
	for _, s := range []*fixtureSale{a, b, c, before} {
		f.sale(s)
	}
	f.refund(a, 300000, "completed", day3, 0)      // one stalls ticket back, in the range
	f.refund(c, 120000, "pending", day3, 1)        // not completed: not counted
	f.refund(before, 120000, "completed", day2, 0) // a refund in the range of a sale before it

	from, to := day1.Truncate(24*time.Hour), day3.Truncate(24*time.Hour).AddDate(0, 0, 1)
	filter := store.ReportFilter{CompanyID: f.company, From: from, To: to}
	rep, err := store.GetSalesReport(ctx, f.DB, filter)
	if err != nil {
		t.Fatal(err)
	}

	// The totals, by hand from the fixture.
	want := store.SalesFigures{
		TicketsSold: 3 + 1 + 2, TicketsRefunded: 1 + 1, Orders: 3,
		FaceValue:         750000 + 150000 + 240000,
		ServiceFees:       75000 + 15000,
		Gross:             (750000 + 75000) + (150000 + 15000) + 240000,
		FaceValueRefunded: 300000 + 120000,
		Refunds:           300000 + 120000,
		FeesKept:          75000 + 15000, // partial refunds: the service keeps its fees
	}
	want.TicketsNet = want.TicketsSold - want.TicketsRefunded
	want.NetToOrganizer = want.Gross - want.Refunds - want.FeesKept
	if rep.Total != want {
		t.Fatalf("totals\n got %+v\nwant %+v", rep.Total, want)
	}

	// Every breakdown adds up to the totals.
	var byEvent, byChannel, byDay store.SalesFigures
	for _, e := range rep.Events {
		byEvent = add(byEvent, e.SalesFigures)
	}
	for _, c := range rep.Channels {
		byChannel = add(byChannel, c.SalesFigures)
	}
	for _, d := range rep.Days {
		byDay = add(byDay, d.SalesFigures)
	}
	for name, got := range map[string]store.SalesFigures{"events": byEvent, "channels": byChannel, "days": byDay} {
		if got != want {
			t.Errorf("Σ %s = %+v, want %+v", name, got, want)
		}
	}
	if len(rep.Events) != 2 || rep.Events[0].EventID != swan && rep.Events[1].EventID != swan {
		t.Fatalf("events: %+v", rep.Events)
	}
	for _, e := range rep.Events {
		if e.EventID == swan && (e.TicketsSold != 4 || e.TicketsRefunded != 1 || e.Gross != 825000+165000 || e.Refunds != 300000) {
			t.Errorf("swan lake: %+v", e)
		}
	}
	// Channels: the aggregator's key apart from the /v1 key.
	var agg *store.ChannelSales
	for i := range rep.Channels {
		if rep.Channels[i].Channel == "aggregator" {
			agg = &rep.Channels[i]
		}
	}
	if len(rep.Channels) != 2 || agg == nil || agg.APIKeyID != aggKey || agg.Gross != 165000 || agg.TicketsSold != 1 {
		t.Fatalf("channels: %+v", rep.Channels)
	}
	// Days: three days, sales on the first two, refunds on the second and third.
	if len(rep.Days) != 3 || rep.Days[0].Day != "2026-11-01" || rep.Days[2].Day != "2026-11-03" || rep.Days[0].Gross != 825000 || rep.Days[1].Gross != 165000+240000 || rep.Days[1].Refunds != 120000 ||
		rep.Days[2].Refunds != 300000 {
		t.Fatalf("days: %+v", rep.Days)
	}
	// Categories: tickets and face value.
	cats := map[int64]store.CategorySales{}
	for _, c := range rep.Categories {
		cats[c.CategoryID] = c
	}
	if s := cats[stalls]; s.TicketsSold != 2 || s.TicketsRefunded != 1 || s.TicketsNet != 1 || s.FaceValueSold != 600000 || s.FaceValueRefund != 300000 {
		t.Errorf("stalls: %+v", s)
	}
	if s := cats[balcony]; s.TicketsSold != 2 || s.TicketsRefunded != 0 || s.FaceValueSold != 300000 {
		t.Errorf("balcony: %+v", s)
	}
	if s := cats[ga]; s.TicketsSold != 2 || s.TicketsRefunded != 1 || s.FaceValueSold != 240000 {
		t.Errorf("standing: %+v", s)
	}

	// One event only.
	one, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company, EventID: standup, From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if one.Total.TicketsSold != 2 || one.Total.Refunds != 120000 || len(one.Events) != 1 {
		t.Fatalf("standup only: %+v", one.Total)
	}

	// A sandbox sale and its refund change nothing.
	_, sandboxKey := f.Key(t, f.company, "sandbox")
	sb := &fixtureSale{key: sandboxKey, test: true, channel: "api", event: swan, cats: []int64{stalls, balcony},
		prices: []int64{300000, 150000}, fee: 45000, paidAt: day2}
	f.sale(sb)
	f.refund(sb, 150000, "completed", day3, 1)
	again, err := store.GetSalesReport(ctx, f.DB, filter)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, rep) {
		t.Fatalf("a sandbox order changed the report:\n%+v\n%+v", again, rep)
	}

	// Another company's report sees none of it, and its own sales stay its own.
	other := f.Company(t, "B")
	f.Import(t, other, catalogfile.Demo(time.Now()))
	_, otherKey := f.Key(t, other, "production")
	var otherSwan int64
	if err := f.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND ref = 'swan-lake'", other).Scan(ctx, &otherSwan); err != nil {
		t.Fatal(err)
	}
	empty, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: other})
	if err != nil {
		t.Fatal(err)
	}
	if empty.Total != (store.SalesFigures{}) || len(empty.Events)+len(empty.Channels)+len(empty.Days)+len(empty.Categories) != 0 {
		t.Fatalf("another company's report: %+v", empty)
	}
	f.sale(&fixtureSale{key: otherKey, channel: "api", event: otherSwan, cats: []int64{f.category(otherSwan, "balcony")},
		prices: []int64{150000}, paidAt: day2})
	mine, err := store.GetSalesReport(ctx, f.DB, filter)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mine, rep) {
		t.Fatalf("another company's sale changed this company's report")
	}
	// An event id of another company gives an empty report.
	cross, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company, EventID: otherSwan})
	if err != nil {
		t.Fatal(err)
	}
	if cross.Total != (store.SalesFigures{}) {
		t.Fatalf("another company's event in this company's report: %+v", cross.Total)
	}
}

func add(a, b store.SalesFigures) store.SalesFigures {
	return store.SalesFigures{TicketsSold: a.TicketsSold + b.TicketsSold, TicketsRefunded: a.TicketsRefunded + b.TicketsRefunded,
		TicketsNet: a.TicketsNet + b.TicketsNet, Orders: a.Orders + b.Orders, FaceValue: a.FaceValue + b.FaceValue,
		ServiceFees: a.ServiceFees + b.ServiceFees, FeesInPrice: a.FeesInPrice + b.FeesInPrice, Gross: a.Gross + b.Gross,
		FaceValueRefunded: a.FaceValueRefunded + b.FaceValueRefunded, FeeRefunded: a.FeeRefunded + b.FeeRefunded,
		Refunds: a.Refunds + b.Refunds, FeesReturned: a.FeesReturned + b.FeesReturned, FeesKept: a.FeesKept + b.FeesKept,
		NetToOrganizer: a.NetToOrganizer + b.NetToOrganizer}
}

// status sets the sale's order status, as its refunds left it.
func (f *reportFixture) status(s *fixtureSale, status string) {
	f.t.Helper()
	if _, err := f.DB.NewRaw("UPDATE orders SET status = ? WHERE id = ?", status, s.orderID).Exec(context.Background()); err != nil {
		f.t.Fatal(err)
	}
}

// TestSalesReportWhatTheOrganizerEarns: in both fee modes, with a partial
// and a whole refund, the report splits the money as it moved: face value
// and fee sold and refunded, the fees the service keeps (all of a partly
// refunded order's, none of an order refunded whole, and a fee inside the
// prices only once all of its order's refunds completed) and the net to the
// organizer; a scheduled event has a row per session.
func TestSalesReportWhatTheOrganizerEarns(t *testing.T) {
	ctx := context.Background()
	f := &reportFixture{demo: newDemo(t), t: t}
	swan, standup, expo := f.eventID(t, "swan-lake"), f.eventID(t, "standup"), f.eventID(t, "expo")
	stalls, ga, adult := f.category(swan, "stalls"), f.category(standup, "ga"), f.category(expo, "adult")
	var sessions []int64
	if err := f.DB.NewRaw("SELECT id FROM sessions WHERE event_id = ? ORDER BY starts_at", expo).Scan(ctx, &sessions); err != nil || len(sessions) != 2 {
		t.Fatalf("expo's sessions: %v %v", sessions, err)
	}
	_, key := f.Key(t, f.company, "production")
	_, aggKey := f.Key(t, f.company, "production")
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	later := at.Add(2 * time.Hour)

	// Separate fee, refunded whole in two steps: a ticket (its price), then
	// the last one (its price and the whole fee).
	s1 := &fixtureSale{key: key, channel: "api", event: swan, cats: []int64{stalls, stalls}, prices: []int64{300000, 300000}, fee: 60000, paidAt: at}
	// Included fee, one of three tickets refunded: the service keeps its fee.
	s2 := &fixtureSale{key: key, channel: "api", event: standup, cats: []int64{ga, ga, ga}, prices: []int64{120000, 120000, 120000},
		fee: 36000, included: true, paidAt: at}
	// Included fee, refunded whole: the buyer gets every kopeck back.
	s3 := &fixtureSale{key: key, channel: "api", event: standup, cats: []int64{ga, ga}, prices: []int64{120000, 120000},
		fee: 24000, included: true, paidAt: at}
	// Included fee, refunded whole, its first refund still pending.
	s4 := &fixtureSale{key: key, channel: "api", event: standup, cats: []int64{ga, ga}, prices: []int64{120000, 120000},
		fee: 24000, included: true, paidAt: at}
	// Two sessions of the scheduled exhibition, one sold by the aggregator.
	s5 := &fixtureSale{key: aggKey, channel: "aggregator", event: expo, cats: []int64{adult}, prices: []int64{50000}, fee: 5000,
		session: sessions[0], paidAt: at}
	s6 := &fixtureSale{key: key, channel: "api", event: expo, cats: []int64{adult, adult}, prices: []int64{50000, 50000}, fee: 10000,
		session: sessions[1], paidAt: at}
	for _, s := range []*fixtureSale{s1, s2, s3, s4, s5, s6} {
		f.sale(s)
	}
	f.refund(s1, 300000, "completed", later, 0)
	f.refund(s1, 300000+60000, "completed", later.Add(time.Minute), 1)
	f.status(s1, "refunded")
	f.refund(s2, 120000, "completed", later, 2)
	f.status(s2, "partially_refunded")
	f.refund(s3, 120000, "completed", later, 0)
	f.refund(s3, 120000, "completed", later.Add(time.Minute), 1)
	f.status(s3, "refunded")
	f.refund(s4, 120000, "pending", later, 0)
	f.refund(s4, 120000, "completed", later.Add(time.Minute), 1)
	f.status(s4, "refunded")
	f.refund(s6, 50000, "completed", later, 0)
	f.status(s6, "partially_refunded")

	day := store.ReportFilter{CompanyID: f.company, From: time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 6, 11, 0, 0, 0, 0, time.UTC)}
	rep, err := store.GetSalesReport(ctx, f.DB, day)
	if err != nil {
		t.Fatal(err)
	}
	// Each order by hand: face value, fee, fee inside, paid; face value
	// refunded, fee refunded, fees given back.
	type money struct{ face, fee, inside, gross, faceBack, feeBack, returned int64 }
	orders := map[string]money{
		"s1": {600000, 60000, 0, 660000, 600000, 60000, 60000},
		"s2": {360000, 36000, 36000, 360000, 120000, 0, 0},
		"s3": {240000, 24000, 24000, 240000, 240000, 0, 24000},
		"s4": {240000, 24000, 24000, 240000, 120000, 0, 0}, // a refund pending: not all back yet
		"s5": {50000, 5000, 0, 55000, 0, 0, 0},
		"s6": {100000, 10000, 0, 110000, 50000, 0, 0},
	}
	var want store.SalesFigures
	for _, m := range orders {
		want.FaceValue += m.face
		want.ServiceFees += m.fee
		want.FeesInPrice += m.inside
		want.Gross += m.gross
		want.FaceValueRefunded += m.faceBack
		want.FeeRefunded += m.feeBack
		want.Refunds += m.faceBack + m.feeBack
		want.FeesReturned += m.returned
	}
	want.TicketsSold, want.TicketsRefunded, want.TicketsNet, want.Orders = 2+3+2+2+1+2, 2+1+2+1+1, 12-7, 6
	want.FeesKept = want.ServiceFees - want.FeesReturned
	// What the organizer earns, order by order: s1 and s3 nothing (refunded
	// whole); s2 the prices kept less the fee inside them; s4 the ticket not
	// yet refunded less its fee, until the pending refund completes; s5, s6
	// the prices kept (their fees were on top).
	want.NetToOrganizer = 0 + (360000 - 120000 - 36000) + 0 + (240000 - 120000 - 24000) + 50000 + (100000 - 50000)
	if rep.Total != want {
		t.Fatalf("totals\n got %+v\nwant %+v", rep.Total, want)
	}
	if want.NetToOrganizer != want.Gross-want.Refunds-want.FeesKept || want.Gross != want.FaceValue+want.ServiceFees-want.FeesInPrice {
		t.Fatal("the figures' identities do not hold")
	}
	// Per event, and per session of the scheduled one.
	var byEvent store.SalesFigures
	for _, e := range rep.Events {
		byEvent = add(byEvent, e.SalesFigures)
		if e.EventID != expo && len(e.Sessions) != 0 {
			t.Errorf("%s has sessions: %+v", e.Title, e.Sessions)
		}
		if e.EventID != expo {
			continue
		}
		if len(e.Sessions) != 2 || e.Sessions[0].SessionID != sessions[0] || e.Sessions[1].SessionID != sessions[1] {
			t.Fatalf("expo's sessions: %+v", e.Sessions)
		}
		s0, s1 := e.Sessions[0], e.Sessions[1]
		if s0.TicketsSold != 1 || s0.Gross != 55000 || s0.NetToOrganizer != 50000 || s1.TicketsSold != 2 || s1.TicketsRefunded != 1 ||
			s1.Gross != 110000 || s1.Refunds != 50000 || s1.NetToOrganizer != 50000 || add(s0.SalesFigures, s1.SalesFigures) != e.SalesFigures {
			t.Errorf("expo's sessions: %+v", e.Sessions)
		}
		if e.TimeZone != "Europe/Moscow" || s0.StartsAt.Location().String() != "Europe/Moscow" {
			t.Errorf("expo's times are not in its venue's zone: %s %v", e.TimeZone, s0.StartsAt)
		}
	}
	if byEvent != want {
		t.Errorf("Σ events = %+v, want %+v", byEvent, want)
	}
	for _, c := range rep.Channels {
		if c.Channel == "aggregator" && (c.Gross != 55000 || c.ServiceFees != 5000 || c.FeesKept != 5000 || c.NetToOrganizer != 50000) {
			t.Errorf("the aggregator's channel: %+v", c)
		}
	}
	if rep.Currency != "RUB" || rep.TimeZone != "UTC" {
		t.Errorf("currency %q, zone %q", rep.Currency, rep.TimeZone)
	}

	// The pending refund completes: s4's money is all back, and so is its fee.
	if _, err := f.DB.NewRaw("UPDATE refunds SET status = 'completed', completed_at = ? WHERE order_id = ? AND status = 'pending'",
		later.Add(time.Hour), s4.orderID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := store.GetSalesReport(ctx, f.DB, day)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Total; got.FeesReturned != want.FeesReturned+24000 || got.Refunds != want.Refunds+120000 ||
		got.NetToOrganizer != want.NetToOrganizer-(240000-120000-24000) {
		t.Fatalf("after s4's last refund: %+v", got)
	}
}

// TestSalesReportDaysInTheCompanysZone: a sale at 22:30 UTC is on the next
// day in Moscow (+03, no DST); in Berlin the day DST begins is 23 hours
// long and its bounds are its local midnights.
func TestSalesReportDaysInTheCompanysZone(t *testing.T) {
	ctx := context.Background()
	f := &reportFixture{demo: newDemo(t), t: t}
	standup := f.eventID(t, "standup")
	ga := f.category(standup, "ga")
	_, key := f.Key(t, f.company, "production")
	sell := func(at time.Time) {
		f.sale(&fixtureSale{key: key, channel: "api", event: standup, cats: []int64{ga}, prices: []int64{120000}, paidAt: at})
	}
	days := func(rep *store.SalesReport) map[string]int64 {
		m := map[string]int64{}
		for _, d := range rep.Days {
			m[d.Day] = d.Orders
		}
		return m
	}

	sell(time.Date(2026, 11, 2, 22, 30, 0, 0, time.UTC))
	moscow, _ := time.LoadLocation("Europe/Moscow")
	f3 := store.ReportFilter{CompanyID: f.company, TimeZone: "Europe/Moscow",
		From: time.Date(2026, 11, 3, 0, 0, 0, 0, moscow), To: time.Date(2026, 11, 4, 0, 0, 0, 0, moscow)}
	rep, err := store.GetSalesReport(ctx, f.DB, f3)
	if err != nil {
		t.Fatal(err)
	}
	if got := days(rep); rep.Total.Orders != 1 || len(got) != 1 || got["2026-11-03"] != 1 || rep.TimeZone != "Europe/Moscow" {
		t.Fatalf("Moscow's 3 November: %v (total %d orders)", got, rep.Total.Orders)
	}
	utc, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company,
		From: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if got := days(utc); got["2026-11-02"] != 1 {
		t.Fatalf("UTC's 2 November: %v", got)
	}

	// Berlin: 29 March 2026 runs from 23:00 UTC the day before (CET) to
	// 22:00 UTC (CEST).
	for _, at := range []time.Time{
		time.Date(2026, 3, 28, 22, 59, 0, 0, time.UTC), // 23:59 on the 28th
		time.Date(2026, 3, 28, 23, 0, 0, 0, time.UTC),  // 00:00 on the 29th
		time.Date(2026, 3, 29, 21, 59, 0, 0, time.UTC), // 23:59 on the 29th, summer time
		time.Date(2026, 3, 29, 22, 0, 0, 0, time.UTC),  // 00:00 on the 30th
	} {
		sell(at)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	from, to := time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), time.Date(2026, 3, 30, 0, 0, 0, 0, berlin)
	if to.Sub(from) != 23*time.Hour {
		t.Fatalf("Berlin's 29 March is %v long", to.Sub(from))
	}
	rep, err = store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company, TimeZone: "Europe/Berlin", From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if got := days(rep); rep.Total.Orders != 2 || len(got) != 1 || got["2026-03-29"] != 2 {
		t.Fatalf("Berlin's 29 March: %v", got)
	}
	open, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company, TimeZone: "Europe/Berlin",
		From: time.Date(2026, 3, 1, 0, 0, 0, 0, berlin), To: time.Date(2026, 4, 1, 0, 0, 0, 0, berlin)})
	if err != nil {
		t.Fatal(err)
	}
	if got := days(open); len(got) != 3 || got["2026-03-28"] != 1 || got["2026-03-29"] != 2 || got["2026-03-30"] != 1 {
		t.Fatalf("Berlin's March: %v", got)
	}

	// Santiago: DST begins at midnight on 6 September 2026, so the 6th
	// starts at 01:00 −03 (04:00 UTC); 23:30 −04 is still the 5th.
	sell(time.Date(2026, 9, 6, 3, 30, 0, 0, time.UTC)) // 23:30 on the 5th
	sell(time.Date(2026, 9, 6, 4, 30, 0, 0, time.UTC)) // 01:30 on the 6th
	santiago, err := report.LoadZone("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	sixth := time.Date(2026, 9, 6, 0, 0, 0, 0, time.UTC)
	fs := store.ReportFilter{CompanyID: f.company}
	report.Days(&fs, sixth, sixth, santiago)
	if rep, err = store.GetSalesReport(ctx, f.DB, fs); err != nil {
		t.Fatal(err)
	}
	if got := days(rep); rep.Total.Orders != 1 || len(got) != 1 || got["2026-09-06"] != 1 || report.FirstDay(fs) != sixth {
		t.Fatalf("Santiago's 6 September: %v (total %d orders, first day %v)", got, rep.Total.Orders, report.FirstDay(fs))
	}
}

// BenchmarkReportSales runs the whole report (five queries in one snapshot)
// over 20,000 paid production orders of 3 tickets each, 2,000 refunds and as
// many sandbox orders.
func BenchmarkReportSales(b *testing.B) {
	ctx := context.Background()
	s := &testenv.Stack{}
	s.DB, _ = testenv.DB(b)
	company := s.Company(b, "A")
	s.Import(b, company, catalogfile.Demo(time.Now()))
	_, prod := s.Key(b, company, "production")
	_, sandbox := s.Key(b, company, "sandbox")
	for _, q := range []string{
		`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at, channel)
		SELECT ?0, CASE WHEN g % 10 = 0 THEN ?2 ELSE ?1 END, g % 10 = 0, e.id, 'paid', 'external', 'RUB', 300000, 30000, 330000,
			'b@x.test', 'B', 'C', '', '\x01', now(), now() - (g % 60) * interval '1 day', CASE WHEN g % 3 = 0 THEN 'aggregator' ELSE 'api' END
		FROM generate_series(1, 22000) g JOIN events e ON e.company_id = ?0 AND e.ref = 'swan-lake'`,
		`INSERT INTO order_items (order_id, position, category_id, price)
		SELECT o.id, p, c.id, 100000 FROM orders o CROSS JOIN generate_series(0, 2) p
		JOIN ticket_categories c ON c.event_id = o.event_id AND c.ref = 'stalls'`,
		`INSERT INTO tickets (order_id, position, number, barcode)
		SELECT order_id, position, 'T-' || order_id || '-' || position, lpad((order_id * 3 + position)::text, 13, '0') FROM order_items`,
		`INSERT INTO refunds (id, order_id, amount, money_returned_by, status, completed_at)
		SELECT 'rf-' || id, id, 100000, 'external', 'completed', paid_at + interval '1 hour' FROM orders WHERE id % 11 = 0`,
		`INSERT INTO refund_tickets (refund_id, ticket_id) SELECT 'rf-' || t.order_id, t.id FROM tickets t WHERE t.order_id % 11 = 0 AND t.position = 0`,
		`ANALYZE`,
	} {
		if _, err := s.DB.NewRaw(q, company, prod, sandbox).Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	f := store.ReportFilter{CompanyID: company, From: time.Now().AddDate(0, 0, -30), To: time.Now().AddDate(0, 0, 1)}
	b.ResetTimer()
	for b.Loop() {
		rep, err := store.GetSalesReport(ctx, s.DB, f)
		if err != nil {
			b.Fatal(err)
		}
		if rep.Total.TicketsSold == 0 {
			b.Fatal("empty report")
		}
	}
}

// TestSalesReportRefusesMixedCurrencies: a report over events of two
// currencies is refused with the currencies named, not summed; one event's
// report is in its own currency.
func TestSalesReportRefusesMixedCurrencies(t *testing.T) {
	ctx := context.Background()
	f := &reportFixture{demo: newDemo(t), t: t}
	standup := f.eventID(t, "standup")
	if _, err := f.DB.NewRaw("UPDATE events SET currency = 'USD' WHERE id = ?", standup).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company})
	var mixed *store.MixedCurrenciesError
	if !errors.As(err, &mixed) || !reflect.DeepEqual(mixed.Currencies, []string{"RUB", "USD"}) {
		t.Fatalf("a report over RUB and USD events: %v", err)
	}
	for id, want := range map[int64]string{standup: "USD", f.eventID(t, "swan-lake"): "RUB"} {
		rep, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company, EventID: id})
		if err != nil || rep.Currency != want {
			t.Fatalf("event %d's report: %v, currency %v, want %s", id, err, rep, want)
		}
	}
}

// TestSalesReportSessionRowsAddUp: a scheduled event's orders that name no
// session (schedule_slot_id NULL) get a row of their own, last, so the
// session rows add up to the event's; an event without sessions has no
// session rows.
func TestSalesReportSessionRowsAddUp(t *testing.T) {
	ctx := context.Background()
	f := &reportFixture{demo: newDemo(t), t: t}
	swan, expo := f.eventID(t, "swan-lake"), f.eventID(t, "expo")
	stalls, adult := f.category(swan, "stalls"), f.category(expo, "adult")
	var sessions []int64
	if err := f.DB.NewRaw("SELECT id FROM sessions WHERE event_id = ? ORDER BY starts_at", expo).Scan(ctx, &sessions); err != nil || len(sessions) != 2 {
		t.Fatalf("expo's sessions: %v %v", sessions, err)
	}
	_, key := f.Key(t, f.company, "production")
	at := time.Date(2026, 6, 10, 9, 0, 0, 0, time.UTC)
	for _, s := range []*fixtureSale{
		{key: key, channel: "api", event: expo, cats: []int64{adult}, prices: []int64{50000}, fee: 5000, session: sessions[0], paidAt: at},
		{key: key, channel: "api", event: expo, cats: []int64{adult, adult}, prices: []int64{50000, 50000}, fee: 10000, session: sessions[1], paidAt: at},
		{key: key, channel: "api", event: expo, cats: []int64{adult, adult, adult}, prices: []int64{50000, 50000, 50000}, fee: 15000, paidAt: at},
		{key: key, channel: "api", event: swan, cats: []int64{stalls}, prices: []int64{300000}, fee: 30000, paidAt: at},
	} {
		f.sale(s)
	}
	rep, err := store.GetSalesReport(ctx, f.DB, store.ReportFilter{CompanyID: f.company})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Events {
		switch e.EventID {
		case swan:
			if len(e.Sessions) != 0 {
				t.Errorf("Swan Lake has session rows: %+v", e.Sessions)
			}
		case expo:
			if len(e.Sessions) != 3 || e.Sessions[2].SessionID != 0 || e.Sessions[2].TicketsSold != 3 || e.Sessions[2].Orders != 1 {
				t.Fatalf("expo's session rows: %+v", e.Sessions)
			}
			var sum store.SalesFigures
			for _, s := range e.Sessions {
				sum = add(sum, s.SalesFigures)
			}
			if sum != e.SalesFigures {
				t.Fatalf("expo's session rows add up to %+v, the event is %+v", sum, e.SalesFigures)
			}
		}
	}
}

// TestSetCompanyTimezoneRefusesUnknown: a name Postgres does not know is
// an UnknownTimezoneError (SQLSTATE 22023), and nothing changes.
func TestSetCompanyTimezoneRefusesUnknown(t *testing.T) {
	ctx := context.Background()
	d := newDemo(t)
	err := store.SetCompanyTimezone(ctx, d.DB, d.company, "Mars/Olympus")
	var unknown *store.UnknownTimezoneError
	if !errors.As(err, &unknown) || unknown.Name != "Mars/Olympus" {
		t.Fatalf("an unknown zone: %v", err)
	}
	if tz, err := store.GetCompanyTimezone(ctx, d.DB, d.company); err != nil || tz != "UTC" {
		t.Fatalf("the zone after a refused one: %q %v", tz, err)
	}
}

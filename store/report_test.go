package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"ticketsales/internal/catalog/catalogfile"
	"ticketsales/store"
	"ticketsales/test/testenv"
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
}

// sale stores a paid order with its tickets.
func (f *reportFixture) sale(s *fixtureSale) {
	f.t.Helper()
	ctx := context.Background()
	var total int64
	for _, p := range s.prices {
		total += p
	}
	err := f.DB.NewRaw(`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at, channel)
		SELECT a.company_id, k.id, ?, ?, 'paid', 'external', 'RUB', ?, ?, ?, 'b@x.test', 'B', 'C', '', '\x01', ?, ?, ?
		FROM api_keys k JOIN applications a ON a.id = k.application_id WHERE k.id = ? RETURNING id`,
		s.test, s.event, total, s.fee, total+s.fee, s.paidAt, s.paidAt, s.channel, s.key).Scan(ctx, &s.orderID)
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
		Gross:       (750000 + 75000) + (150000 + 15000) + 240000,
		ServiceFees: 75000 + 15000,
		Refunds:     300000 + 120000,
	}
	want.TicketsNet = want.TicketsSold - want.TicketsRefunded
	want.NetRevenue = want.Gross - want.Refunds
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
	if len(rep.Days) != 3 || rep.Days[0].Gross != 825000 || rep.Days[1].Gross != 165000+240000 || rep.Days[1].Refunds != 120000 ||
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
		TicketsNet: a.TicketsNet + b.TicketsNet, Orders: a.Orders + b.Orders, Gross: a.Gross + b.Gross,
		ServiceFees: a.ServiceFees + b.ServiceFees, Refunds: a.Refunds + b.Refunds, NetRevenue: a.NetRevenue + b.NetRevenue}
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

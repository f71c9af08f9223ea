package store_test

import (
	"context"
	"testing"

	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// hallHalfwayThrough is the 10,000-seat hall (10 zones × 40 rows × 25)
// as an organizer's map finds it during an on-sale: a third sold (each
// seat its own order and ticket, every other one admitted at the door), a
// fifth held (some of the holds expired), zone z2 allocated to a channel
// and zone z3 to a channel that released its allocation as a whole.
func hallHalfwayThrough(tb testing.TB) (s *testenv.Stack, event, channel, released int64) {
	tb.Helper()
	ctx := context.Background()
	s = &testenv.Stack{}
	s.DB, _ = testenv.DB(tb)
	company := s.Company(tb, "Arena")
	s.Import(tb, company, testenv.ZonedHallCatalog(10, 40, 25))
	_, key := s.Key(tb, company, "production")
	if err := s.DB.NewRaw("SELECT id FROM events WHERE company_id = ? AND slug = 'hall'", company).Scan(ctx, &event); err != nil {
		tb.Fatal(err)
	}
	for _, ref := range []string{"kassy", "done"} {
		var id int64
		if err := s.DB.NewRaw("INSERT INTO channels (company_id, ref, name) VALUES (?, ?, ?) RETURNING id", company, ref, "Канал "+ref).Scan(ctx, &id); err != nil {
			tb.Fatal(err)
		}
		if _, err := s.DB.ExecContext(ctx, "INSERT INTO channel_events (event_id, channel_id) VALUES (?, ?)", event, id); err != nil {
			tb.Fatal(err)
		}
		if ref == "kassy" {
			channel = id
		} else {
			released = id
		}
	}
	for _, q := range []string{
		`UPDATE event_seats SET channel_id = ?2 WHERE event_id = ?0 AND zone_id = 'z2'`,
		`UPDATE event_seats SET channel_id = ?3 WHERE event_id = ?0 AND zone_id = 'z3'`,
		`UPDATE channel_events SET released_at = now() WHERE event_id = ?0 AND channel_id = ?3`,
		`INSERT INTO orders (company_id, api_key_id, is_test, event_id, status, payment, currency, total, service_fee, amount,
			customer_email, customer_first_name, customer_last_name, customer_phone, access_token_hash, expires_at, paid_at, channel, metadata)
		SELECT e.company_id, ?1, false, e.id, 'paid', 'external', 'RUB', 500000, 0, 500000,
			'buyer' || s.pos || '@x.test', 'Мария', 'Иванова', '', '\x01', now(), now(), 'api', jsonb_build_object('seat', s.seat_id)
		FROM event_seats s JOIN events e ON e.id = s.event_id WHERE s.event_id = ?0 AND s.pos % 3 = 0`,
		`INSERT INTO order_items (order_id, position, category_id, seat_id, price)
		SELECT o.id, 0, s.category_id, s.seat_id, 500000 FROM orders o JOIN event_seats s ON s.event_id = o.event_id AND s.seat_id = o.metadata->>'seat'
		WHERE o.event_id = ?0`,
		`INSERT INTO tickets (order_id, position, number, barcode, checked_in_at)
		SELECT i.order_id, i.position, 'T-' || i.order_id, lpad(i.order_id::text, 13, '0'), CASE WHEN i.order_id % 2 = 0 THEN now() END
		FROM order_items i JOIN orders o ON o.id = i.order_id WHERE o.event_id = ?0`,
		`UPDATE event_seats s SET state = 'sold', order_id = o.id, version = s.version + 1
		FROM orders o WHERE o.event_id = ?0 AND s.event_id = ?0 AND s.seat_id = o.metadata->>'seat'`,
		`UPDATE event_seats SET state = 'held', hold_id = 'h' || pos, version = version + 1,
			hold_expires_at = now() + CASE WHEN pos % 10 = 1 THEN interval '10 minutes' ELSE interval '-1 minute' END
		WHERE event_id = ?0 AND pos % 5 = 1 AND state = 'free'`,
		`ANALYZE event_seats, orders, order_items, tickets, channel_events`,
	} {
		if _, err := s.DB.NewRaw(q, event, key, channel, released).Exec(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	return s, event, channel, released
}

func TestEventSeatStates(t *testing.T) {
	ctx := context.Background()
	s, event, channel, released := hallHalfwayThrough(t)
	seats, err := store.EventSeatStates(ctx, s.DB, event)
	if err != nil {
		t.Fatal(err)
	}
	if len(seats) != 10_000 {
		t.Fatalf("%d seats, want 10000", len(seats))
	}
	var want struct {
		Sold, Admitted, Held, Channel, Released int
	}
	for _, q := range []struct {
		n   *int
		sql string
	}{
		{&want.Sold, "SELECT count(*) FROM event_seats WHERE event_id = ? AND state = 'sold'"},
		{&want.Admitted, `SELECT count(*) FROM event_seats s JOIN tickets t ON t.order_id = s.order_id
			WHERE s.event_id = ? AND t.checked_in_at IS NOT NULL`},
		{&want.Held, "SELECT count(*) FROM event_seats WHERE event_id = ? AND state = 'held' AND hold_expires_at > now()"},
		{&want.Channel, "SELECT count(*) FROM event_seats WHERE event_id = ? AND zone_id = 'z2'"},
		{&want.Released, "SELECT count(*) FROM event_seats WHERE event_id = ? AND zone_id = 'z3' AND state = 'sold'"},
	} {
		if err := s.DB.NewRaw(q.sql, event).Scan(ctx, q.n); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		Sold, Admitted, Held, Channel, Released, Free int
	}
	for _, st := range seats {
		switch st.State {
		case "sold":
			got.Sold++
		case "held":
			got.Held++
		case "free":
			got.Free++
		default:
			t.Fatalf("seat %s: state %q", st.SeatID, st.State)
		}
		if st.Admitted {
			got.Admitted++
			if st.State != "sold" {
				t.Errorf("seat %s admitted but %s", st.SeatID, st.State)
			}
		}
		switch st.ChannelID {
		case channel:
			got.Channel++
		case released:
			// A channel released as a whole keeps only what it sold.
			got.Released++
			if st.State != "sold" {
				t.Errorf("seat %s of the released channel reads %s in it", st.SeatID, st.State)
			}
		}
	}
	if got.Sold != want.Sold || got.Admitted != want.Admitted || got.Held != want.Held || got.Channel != want.Channel || got.Released != want.Released {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if want.Sold < 3000 || want.Admitted < 1500 || want.Held < 500 || got.Free+got.Held+got.Sold != 10_000 {
		t.Errorf("the hall is not halfway through: %+v", got)
	}
	// An expired hold reads free.
	var expired string
	if err := s.DB.NewRaw("SELECT seat_id FROM event_seats WHERE event_id = ? AND state = 'held' AND hold_expires_at < now() LIMIT 1", event).Scan(ctx, &expired); err != nil {
		t.Fatal(err)
	}
	for _, st := range seats {
		if st.SeatID == expired && st.State != "free" {
			t.Errorf("seat %s of an expired hold reads %s", expired, st.State)
		}
	}
}

// BenchmarkEventSeatStates is the hall map's one read of a 10,000-seat
// hall halfway through its on-sale (the cabinet's map page reads it once).
func BenchmarkEventSeatStates(b *testing.B) {
	ctx := context.Background()
	s, event, _, _ := hallHalfwayThrough(b)
	for b.Loop() {
		if _, err := store.EventSeatStates(ctx, s.DB, event); err != nil {
			b.Fatal(err)
		}
	}
}

package api_test

// Races (docs/decisions.md, "Channels and allocations"): allocation
// changes, releases, holds, orders and refunds racing on the same seats
// and quantities through the real API. No seat is ever held or sold
// outside the channel it belongs to at that moment, or twice; no quota is
// oversold and general sale never dips into what channels have left.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// raceCall is one API call from a racing goroutine: a transport error is
// returned, not a t.Fatal (which only the test's goroutine may call).
func (c *channels) raceCall(t *testing.T, method, path, key, body string) (*testenv.Response, error) {
	var headers []string
	if method == http.MethodPost {
		headers = append(headers, fmt.Sprintf("Idempotency-Key: race-%d", raceIdem.Add(1)))
	}
	return testenv.Send(http.DefaultClient, testenv.NewRequest(t, method, c.URL+path, key, body, headers...))
}

var raceIdem atomic.Int64

// raceErrs collects what goroutines saw go wrong, reported by the test's
// goroutine afterwards.
type raceErrs struct {
	mu  sync.Mutex
	out []string
}

func (e *raceErrs) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.out) < 20 {
		e.out = append(e.out, fmt.Sprintf(format, args...))
	}
}

func (e *raceErrs) report(t *testing.T) {
	t.Helper()
	for _, s := range e.out {
		t.Error(s)
	}
}

// logSeatTakings records, in the test's own database, every seat taken
// (held by a new hold, or sold) with the channel it belonged to at that
// moment, read from the row the taking statement wrote under its lock,
// and whether that channel had released its allocation as a whole then.
// The final state alone cannot say this: a seat sold by general sale out
// of a released channel stays in the channel when it reopens.
func logSeatTakings(t *testing.T, c *channels) {
	t.Helper()
	for _, stmt := range []string{
		`CREATE TABLE race_seat_takings (seq bigserial, event_id bigint, seat_id text, state text, hold_id text,
			order_id bigint, channel_id bigint, released boolean)`,
		`CREATE FUNCTION race_seat_taken() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
			INSERT INTO race_seat_takings (event_id, seat_id, state, hold_id, order_id, channel_id, released)
			VALUES (NEW.event_id, NEW.seat_id, NEW.state, NEW.hold_id, NEW.order_id, NEW.channel_id,
				EXISTS (SELECT 1 FROM channel_events ce WHERE ce.event_id = NEW.event_id AND ce.channel_id = NEW.channel_id
					AND ce.released_at IS NOT NULL));
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER race_seat_taken AFTER UPDATE ON event_seats FOR EACH ROW
			WHEN (NEW.state <> 'free' AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.hold_id IS DISTINCT FROM NEW.hold_id))
			EXECUTE FUNCTION race_seat_taken()`,
	} {
		if _, err := c.DB.ExecContext(context.Background(), stmt); err != nil {
			t.Fatal(err)
		}
	}
}

// ownerChannel joins a row holding hold_id and order_id (aliased x) to
// the channel of the key that holds or bought the seat (NULL: general
// sale), as owner_channel.
const ownerChannel = `LEFT JOIN reservations r ON r.id = x.hold_id
	LEFT JOIN orders o ON o.id = x.order_id
	JOIN api_keys k ON k.id = coalesce(r.api_key_id, o.api_key_id)
	LEFT JOIN channel_applications ca ON ca.application_id = k.application_id`

// Holds, orders, payments, refunds and releases by general-sale and
// channel keys race allocations and releases of the same ten seats: every
// hold and sale took a seat of general sale, of a channel released as a
// whole, or of the key's own channel; no seat is held or sold twice.
func TestRacesKeepSeatsInTheirChannel(t *testing.T) {
	c := newChannels(t)
	c.StartWorker(t)
	logSeatTakings(t, c)
	ctx := context.Background()
	var seats []string
	for i := 1; i <= 10; i++ {
		seats = append(seats, fmt.Sprintf("parterre-3-%d", i))
	}
	keys := []string{c.generalKey, c.resellerKey, c.aggKey}
	var errs raceErrs
	var held, refused, sold, refunded, allocated, released atomic.Int64
	// At least 4 s, and on until enough has raced (a loaded machine does
	// less in 4 s), within a minute.
	running := raceUntil(4*time.Second, time.Minute, func() bool {
		return held.Load() >= 20 && refused.Load() >= 20 && sold.Load() >= 3 && allocated.Load() >= 10 && released.Load() >= 10
	})
	var wg sync.WaitGroup
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := keys[g%len(keys)]
			rnd := rand.New(rand.NewPCG(uint64(g), 7))
			for running() {
				pick := []string{seats[rnd.IntN(len(seats))]}
				if rnd.IntN(3) == 0 {
					if other := seats[rnd.IntN(len(seats))]; other != pick[0] {
						pick = append(pick, other)
					}
				}
				res, err := c.raceCall(t, http.MethodPost, "/v1/reservations", key,
					fmt.Sprintf(`{"event_id": %d, "seats": %s}`, c.swan, seatsJSON(pick...)))
				if err != nil {
					errs.add("hold %v: %v", pick, err)
					return
				}
				if res.Status != http.StatusCreated {
					if res.Status != http.StatusConflict {
						errs.add("hold %v: %d %s", pick, res.Status, res.Body)
					}
					refused.Add(1)
					continue
				}
				held.Add(1)
				var r reservationBody
				if err := json.Unmarshal(res.Body, &r); err != nil {
					errs.add("hold body: %v", err)
					return
				}
				time.Sleep(time.Duration(rnd.IntN(20)) * time.Millisecond)
				switch rnd.IntN(3) {
				case 0, 1: // let go, at once or a little later
					time.Sleep(time.Duration(rnd.IntN(2)*rnd.IntN(60)) * time.Millisecond)
					if res, err := c.raceCall(t, http.MethodDelete, "/v1/reservations/"+r.Data.ID, key, ""); err != nil || res.Status >= 500 {
						errs.add("release hold: %v %v", res, err)
					}
				case 2: // buy, and mostly give it back
					id, ok := c.raceBuy(t, key, r.Data.ID, &errs)
					if !ok {
						continue
					}
					sold.Add(1)
					if rnd.IntN(6) != 0 {
						res, err := c.raceCall(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/refund", id), key, `{"reason": "возврат"}`)
						if err != nil || res.Status >= 300 {
							errs.add("refund %d: %v %v", id, res, err)
						} else {
							refunded.Add(1)
						}
					}
				}
			}
		}()
	}
	// The organizer: allocations to both channels, partial releases and
	// whole ones (after which the next allocation reopens the channel).
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(99, 7))
		subset := func() []string {
			var out []string
			for _, s := range seats {
				if rnd.IntN(2) == 0 {
					out = append(out, s)
				}
			}
			if len(out) == 0 {
				out = seats[:1]
			}
			return out
		}
		for running() {
			ch := c.reseller
			if rnd.IntN(3) == 0 {
				ch = c.agg
			}
			var err error
			switch rnd.IntN(4) {
			case 0, 1:
				var mv store.SeatMove
				mv, err = c.dist.AllocateSeats(ctx, c.companyA, c.swan, ch, distribution.Selector{SeatIDs: subset()})
				allocated.Add(int64(len(mv.Moved)))
			case 2:
				var out store.Released
				out, err = c.dist.Release(ctx, c.companyA, store.Release{EventID: c.swan, ChannelID: ch, SeatIDs: subset()})
				released.Add(int64(len(out.Seats)))
			case 3:
				var out store.Released
				out, err = c.dist.Release(ctx, c.companyA, store.Release{EventID: c.swan, ChannelID: ch, Whole: true})
				released.Add(int64(len(out.Seats)))
			}
			if err != nil {
				errs.add("allocation change: %v", err)
			}
			time.Sleep(time.Duration(rnd.IntN(5)) * time.Millisecond)
		}
	}()
	wg.Wait()
	errs.report(t)
	t.Logf("holds %d (refused %d), sold %d, refunded %d; seats allocated %d, released %d",
		held.Load(), refused.Load(), sold.Load(), refunded.Load(), allocated.Load(), released.Load())
	if held.Load() < 20 || refused.Load() < 20 || sold.Load() < 3 || allocated.Load() < 10 || released.Load() < 10 {
		t.Errorf("the race hardly raced: %d holds, %d refused, %d sold, %d allocated, %d released",
			held.Load(), refused.Load(), sold.Load(), allocated.Load(), released.Load())
	}

	// Every taking: the seat was general sale's, or its channel's released
	// rest, or the taker's own channel's.
	var wrong []struct {
		Seq          int64
		SeatID       string
		State        string
		ChannelID    int64
		OwnerChannel int64
	}
	if err := c.DB.NewRaw(`SELECT x.seq, x.seat_id, x.state, x.channel_id, coalesce(ca.channel_id, 0) AS owner_channel
		FROM race_seat_takings x `+ownerChannel+`
		WHERE x.channel_id IS NOT NULL AND NOT x.released AND ca.channel_id IS DISTINCT FROM x.channel_id ORDER BY x.seq`).
		Scan(ctx, &wrong); err != nil {
		t.Fatal(err)
	}
	for _, w := range wrong {
		t.Errorf("%s was %s (taking %d) while allocated to channel %d, by a key of channel %d (0: general sale)", w.SeatID, w.State, w.Seq, w.ChannelID, w.OwnerChannel)
	}
	var takings int
	if err := c.DB.NewRaw("SELECT count(*) FROM race_seat_takings").Scan(ctx, &takings); err != nil || takings < int(held.Load()) {
		t.Errorf("%d seat takings logged for %d holds: %v", takings, held.Load(), err)
	}
	// And now: a seat held in a channel not released is held by its key.
	var heldWrong int
	if err := c.DB.NewRaw(`SELECT count(*) FROM event_seats x `+ownerChannel+`
		WHERE x.event_id = ? AND x.state = 'held' AND x.channel_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM channel_events ce WHERE ce.event_id = x.event_id AND ce.channel_id = x.channel_id AND ce.released_at IS NOT NULL)
			AND ca.channel_id IS DISTINCT FROM x.channel_id`, c.swan).Scan(ctx, &heldWrong); err != nil {
		t.Fatal(err)
	}
	if heldWrong > 0 {
		t.Errorf("%d seats held in a channel by a key of another", heldWrong)
	}
	// Sold seats a reopened channel counts as its own though general sale
	// sold them while the channel was released: the rule allows it (the
	// seat was general sale's then); logged, not a failure.
	var reclaimed int
	if err := c.DB.NewRaw(`SELECT count(*) FROM event_seats x `+ownerChannel+`
		WHERE x.event_id = ? AND x.state = 'sold' AND x.channel_id IS NOT NULL AND ca.channel_id IS DISTINCT FROM x.channel_id
			AND NOT EXISTS (SELECT 1 FROM channel_events ce WHERE ce.event_id = x.event_id AND ce.channel_id = x.channel_id AND ce.released_at IS NOT NULL)`,
		c.swan).Scan(ctx, &reclaimed); err != nil {
		t.Fatal(err)
	}
	if reclaimed > 0 {
		t.Logf("%d sold seats sit in a reopened channel that general sale sold while it was released", reclaimed)
	}
	// No seat held or sold twice; paid orders hold exactly their seats.
	testenv.CheckSales(t, c.DB)
}

// raceBuy orders a hold with payment=external and confirms it: the order
// id, or false if either step was refused (a partial release may have
// moved nothing of it; the hold stands).
func (c *channels) raceBuy(t *testing.T, key, reservationID string, errs *raceErrs) (int64, bool) {
	res, err := c.raceCall(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d, "reservation_id": %q, "customer": %s, "payment": "external"}`,
		c.swan, reservationID, customer))
	if err != nil || res.Status != http.StatusCreated {
		errs.add("order of hold %s: %v %v", reservationID, res, err)
		return 0, false
	}
	var ob orderBody
	if err := json.Unmarshal(res.Body, &ob); err != nil {
		errs.add("order body: %v", err)
		return 0, false
	}
	res, err = c.raceCall(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", ob.Data.ID), key,
		fmt.Sprintf(`{"external_payment_id": "ext-%d", "paid_amount": %d}`, ob.Data.ID, ob.Data.Amount.Amount))
	switch {
	case err == nil && res.Status == http.StatusAccepted:
		// Accepted, tickets follow (a loaded worker answered late): paid
		// once the workflow applies it, as the partner is told.
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			var o orderBody
			got, gerr := c.raceCall(t, http.MethodGet, fmt.Sprintf("/v1/orders/%d", ob.Data.ID), key, "")
			if gerr == nil && got.Status == http.StatusOK && json.Unmarshal(got.Body, &o) == nil && o.Data.Status == "paid" {
				return ob.Data.ID, true
			}
		}
		errs.add("order %d accepted but never paid", ob.Data.ID)
		return 0, false
	case err != nil || res.Status != http.StatusOK:
		errs.add("confirm %d: %v %v", ob.Data.ID, res, err)
		return 0, false
	}
	return ob.Data.ID, true
}

// A hold of a seat racing its allocation: exactly one wins. Either the
// hold is made and the allocation reports the seat left where it was, or
// the seat moves and general sale's hold is refused.
func TestHoldRacingItsAllocation(t *testing.T) {
	c := newChannels(t)
	ctx := context.Background()
	var holds, moves int
	for round := range 30 {
		seat := fmt.Sprintf("parterre-2-%d", 1+round)
		start := make(chan struct{})
		var res *testenv.Response
		var holdErr, allocErr error
		var mv store.SeatMove
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			res, holdErr = c.raceCall(t, http.MethodPost, "/v1/reservations", c.generalKey,
				fmt.Sprintf(`{"event_id": %d, "seats": %s}`, c.swan, seatsJSON(seat)))
		}()
		go func() {
			defer wg.Done()
			<-start
			// Half the rounds give the hold a head start of a few
			// hundred microseconds, so both orders of arrival occur.
			if round%2 == 0 {
				time.Sleep(time.Duration(round*40) * time.Microsecond)
			}
			mv, allocErr = c.dist.AllocateSeats(ctx, c.companyA, c.swan, c.reseller, distribution.Selector{SeatIDs: []string{seat}})
		}()
		close(start)
		wg.Wait()
		if holdErr != nil || allocErr != nil {
			t.Fatalf("round %d: hold %v, allocation %v", round, holdErr, allocErr)
		}
		heldIt, movedIt := res.Status == http.StatusCreated, len(mv.Moved) == 1
		switch {
		case heldIt && movedIt:
			t.Errorf("%s: held by general sale and allocated to the reseller", seat)
		case !heldIt && !movedIt:
			t.Errorf("%s: neither held (%d %s) nor allocated (left %v)", seat, res.Status, res.Body, mv.Left)
		case heldIt:
			holds++
			if len(mv.Left) != 1 || mv.Left[0] != seat {
				t.Errorf("%s: held, but the allocation reports left %v", seat, mv.Left)
			}
		default:
			moves++
			if res.Status != http.StatusConflict {
				t.Errorf("%s: allocated, and the hold answered %d %s", seat, res.Status, res.Body)
			}
		}
		var st struct {
			State     string
			ChannelID *int64
		}
		if err := c.DB.NewRaw("SELECT state, channel_id FROM event_seats WHERE event_id = ? AND seat_id = ?", c.swan, seat).Scan(ctx, &st); err != nil {
			t.Fatal(err)
		}
		if heldIt != (st.State == "held" && st.ChannelID == nil) || movedIt != (st.State == "free" && st.ChannelID != nil && *st.ChannelID == c.reseller) {
			t.Errorf("%s: now %s in channel %v, after held %v, allocated %v", seat, st.State, st.ChannelID, heldIt, movedIt)
		}
	}
	t.Logf("the hold won %d rounds, the allocation %d", holds, moves)
	testenv.CheckSales(t, c.DB)
}

// Orders by quantity from general sale and the channels race the
// reseller's quota being set, released in part and as a whole: sold
// counts and quotas' taken are their live positions, no quota is
// oversold, general sale never took what channels have left, and every
// position of a quota is its channel's.
func TestRacesOfQuotas(t *testing.T) {
	c := newChannels(t)
	c.StartWorker(t)
	ctx := context.Background()
	ga := c.gaCategory(t)
	if _, err := c.dist.SetQuota(ctx, c.companyA, c.standup, c.reseller, ga, nil, 60); err != nil {
		t.Fatal(err)
	}
	keys := []string{c.generalKey, c.resellerKey, c.resellerKey, c.aggKey}
	var errs raceErrs
	var ordered, soldOut, cancelled, quotaChanges atomic.Int64
	running := raceUntil(4*time.Second, time.Minute, func() bool { return ordered.Load() >= 20 && quotaChanges.Load() >= 10 })
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := keys[g%len(keys)]
			rnd := rand.New(rand.NewPCG(uint64(g), 11))
			for running() {
				res, err := c.raceCall(t, http.MethodPost, "/v1/orders", key, fmt.Sprintf(`{"event_id": %d,
					"items": [{"ticket_category_id": %d, "quantity": %d}], "customer": %s, "payment": "external"}`,
					c.standup, ga, 1+rnd.IntN(4), customer))
				if err != nil {
					errs.add("order: %v", err)
					return
				}
				if res.Status != http.StatusCreated {
					if res.Status != http.StatusConflict || !strings.Contains(string(res.Body), "sold_out") {
						errs.add("order: %d %s", res.Status, res.Body)
					}
					soldOut.Add(1)
					// Sold out: give some back so the race goes on.
					time.Sleep(5 * time.Millisecond)
					continue
				}
				ordered.Add(1)
				var ob orderBody
				if err := json.Unmarshal(res.Body, &ob); err != nil {
					errs.add("order body: %v", err)
					return
				}
				switch rnd.IntN(3) {
				case 0:
					res, err := c.raceCall(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/cancel", ob.Data.ID), key, "")
					if err != nil || res.Status != http.StatusOK {
						errs.add("cancel %d: %v %v", ob.Data.ID, res, err)
					} else {
						cancelled.Add(1)
					}
				case 1:
					res, err := c.raceCall(t, http.MethodPost, fmt.Sprintf("/v1/orders/%d/confirm", ob.Data.ID), key,
						fmt.Sprintf(`{"external_payment_id": "ext-%d", "paid_amount": %d}`, ob.Data.ID, ob.Data.Amount.Amount))
					// 202: accepted, tickets follow (a loaded worker answered late).
					if err != nil || (res.Status != http.StatusOK && res.Status != http.StatusAccepted) {
						errs.add("confirm %d: %v %v", ob.Data.ID, res, err)
					}
				case 2: // left unpaid
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(5, 11))
		for running() {
			switch rnd.IntN(4) {
			case 0, 1:
				// Refused when it is below what the channel took or above
				// what general sale has left: both are answers, not errors.
				if _, err := c.dist.SetQuota(ctx, c.companyA, c.standup, c.reseller, ga, nil, rnd.IntN(120)); err == nil {
					quotaChanges.Add(1)
				}
			case 2:
				qs, err := store.ListQuotaLeft(ctx, c.DB, c.standup, c.reseller)
				if err != nil || len(qs) != 1 {
					errs.add("quotas: %v %v", qs, err)
					return
				}
				if _, err := c.dist.Release(ctx, c.companyA, store.Release{EventID: c.standup, ChannelID: c.reseller,
					Quantities: map[int64]int{qs[0].ID: 1 + rnd.IntN(5)}}); err == nil {
					quotaChanges.Add(1)
				}
			case 3:
				if _, err := c.dist.Release(ctx, c.companyA, store.Release{EventID: c.standup, ChannelID: c.reseller, Whole: true}); err != nil {
					errs.add("whole release: %v", err)
				} else {
					quotaChanges.Add(1)
				}
			}
			time.Sleep(time.Duration(rnd.IntN(8)) * time.Millisecond)
		}
	}()
	wg.Wait()
	errs.report(t)
	t.Logf("orders %d (sold out %d, cancelled %d); quota changes %d", ordered.Load(), soldOut.Load(), cancelled.Load(), quotaChanges.Load())
	if ordered.Load() < 20 || quotaChanges.Load() < 10 {
		t.Errorf("the race hardly raced: %d orders, %d quota changes", ordered.Load(), quotaChanges.Load())
	}

	const live = `FROM order_items i JOIN orders o ON o.id = i.order_id
		WHERE o.event_id = ? AND o.status IN ('pending_payment', 'paid', 'partially_refunded')
			AND NOT EXISTS (SELECT 1 FROM tickets tk WHERE tk.order_id = i.order_id AND tk.position = i.position AND tk.status = 'refunded')`
	var cat struct{ Capacity, Sold, Live, ChannelsLeft int }
	if err := c.DB.NewRaw(`SELECT c.capacity, c.sold, (SELECT count(*) `+live+` AND i.category_id = c.id) AS live,
			(SELECT coalesce(sum(q.allocated - q.taken), 0) FROM channel_quotas q WHERE q.category_id = c.id) AS channels_left
		FROM ticket_categories c WHERE c.id = ?`, c.standup, ga).Scan(ctx, &cat); err != nil {
		t.Fatal(err)
	}
	if cat.Sold != cat.Live {
		t.Errorf("the category counts %d sold, its live positions are %d", cat.Sold, cat.Live)
	}
	if cat.Sold > cat.Capacity {
		t.Errorf("oversold: %d of %d", cat.Sold, cat.Capacity)
	}
	if cat.Capacity-cat.Sold-cat.ChannelsLeft < 0 {
		t.Errorf("general sale dipped into the quotas: capacity %d, sold %d, channels have %d left", cat.Capacity, cat.Sold, cat.ChannelsLeft)
	}
	var quotas []struct {
		ID                         int64
		Allocated, Taken, Released int
		Live                       int
	}
	if err := c.DB.NewRaw(`SELECT q.id, q.allocated, q.taken, q.released, (SELECT count(*) `+live+` AND i.quota_id = q.id) AS live
		FROM channel_quotas q WHERE q.event_id = ?`, c.standup, c.standup).Scan(ctx, &quotas); err != nil {
		t.Fatal(err)
	}
	for _, q := range quotas {
		if q.Taken != q.Live || q.Taken > q.Allocated {
			t.Errorf("quota %d: allocated %d, taken %d, its live positions %d", q.ID, q.Allocated, q.Taken, q.Live)
		}
	}
	var foreign int
	if err := c.DB.NewRaw(`SELECT count(*) FROM order_items i JOIN orders x ON x.id = i.order_id
		JOIN channel_quotas q ON q.id = i.quota_id JOIN api_keys k ON k.id = x.api_key_id
		LEFT JOIN channel_applications ca ON ca.application_id = k.application_id
		WHERE x.event_id = ? AND ca.channel_id IS DISTINCT FROM q.channel_id`, c.standup).Scan(ctx, &foreign); err != nil {
		t.Fatal(err)
	}
	if foreign > 0 {
		t.Errorf("%d positions taken from a quota by a key of another channel", foreign)
	}
}

// raceUntil says whether a race goes on: for at least least, then until
// enough has happened, for at most most. The race's size, not its length,
// is what the test needs; a loaded machine takes longer to get there.
func raceUntil(least, most time.Duration, enough func() bool) func() bool {
	start := time.Now()
	return func() bool {
		d := time.Since(start)
		return d < least || (d < most && !enough())
	}
}

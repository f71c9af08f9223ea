package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Deadlines are decided by one clock, Postgres's: an api instance whose own
// clock is off by ten minutes (either way) still makes holds and orders
// whose deadlines are Postgres's now plus their duration, and can replace
// and order a live hold.
func TestDeadlinesFollowPostgresClock(t *testing.T) {
	for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
		t.Run(fmt.Sprintf("api clock %v", skew), func(t *testing.T) {
			f := newFixture(t)
			f.Now = func() time.Time { return time.Now().Add(skew) }
			pgNow := func() time.Time {
				var now time.Time
				if err := f.DB.NewRaw("SELECT now()").Scan(context.Background(), &now); err != nil {
					t.Fatal(err)
				}
				return now
			}
			near := func(what string, got, want time.Time) {
				t.Helper()
				if d := got.Sub(want); d < -5*time.Second || d > 5*time.Second {
					t.Errorf("%s: %v, want about %v (off by %v)", what, got, want, d)
				}
			}

			before := pgNow()
			res := f.Do(t, http.MethodPost, "/v1/reservations", f.keyA,
				fmt.Sprintf(`{"event_id": %d, "seats": %s, "ttl_minutes": 2}`, f.ids["swan-lake"], seatsJSON("parterre-2-1")), idemKey(t))
			if res.Status != http.StatusCreated {
				t.Fatalf("reserve: %d %s", res.Status, res.Body)
			}
			var r reservationBody
			res.Decode(t, &r)
			near("hold deadline", r.Data.ExpiresAt, before.Add(2*time.Minute))

			if res := f.Do(t, http.MethodPatch, "/v1/reservations/"+r.Data.ID, f.keyA,
				fmt.Sprintf(`{"seats": %s}`, seatsJSON("parterre-2-1", "parterre-2-2"))); res.Status != http.StatusOK {
				t.Fatalf("replace the live hold's seats: %d %s", res.Status, res.Body)
			}
			var got reservationBody
			f.Get(t, "/v1/reservations/"+r.Data.ID, f.keyA).Decode(t, &got)
			if got.Data.Status != "reserved" {
				t.Fatalf("live hold reads as %q", got.Data.Status)
			}

			res = f.orderFromReservation(t, f.keyA, r.Data.ID, "external")
			if res.Status != http.StatusCreated {
				t.Fatalf("order the live hold: %d %s", res.Status, res.Body)
			}
			var o orderBody
			res.Decode(t, &o)
			near("payment deadline", o.Data.ExpiresAt, pgNow().Add(f.Orders.Settings.PaymentWindow))
		})
	}
}

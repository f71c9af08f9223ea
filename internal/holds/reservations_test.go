package holds

import (
	"errors"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/problems"
)

// Only a reserved reservation can be ordered, changed or released: an
// expired one answers 409 reservation_expired (its seats may be gone),
// one ordered or released 409 invalid_state naming its status.
func TestOnlyAReservedReservationIsLive(t *testing.T) {
	if err := reservationLive(&Reservation{ID: "rsv_1", Status: states.ReservationReserved}); err != nil {
		t.Fatalf("reserved: %v", err)
	}
	err := reservationLive(&Reservation{ID: "rsv_1", Status: states.ReservationExpired})
	if p := problems.Of(t, err); !errors.Is(err, errs.ReservationExpired) || p.Status != 409 || p.Code != "reservation_expired" {
		t.Errorf("expired: %v, answered %d %s", err, p.Status, p.Code)
	}
	for _, st := range []states.ReservationStatus{states.ReservationOrdered, states.ReservationReleased} {
		err := reservationLive(&Reservation{ID: "rsv_1", Status: st})
		p := problems.Of(t, err)
		if p.Status != 409 || p.Code != "invalid_state" || !strings.Contains(p.Detail, "reservation is "+string(st)) {
			t.Errorf("%s: answered %d %s %q", st, p.Status, p.Code, p.Detail)
		}
	}
}

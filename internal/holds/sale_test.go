package holds

import (
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/problems"
)

// An event sells while it is published and has not started; seats are held
// only on an event with a seating scheme (general admission is ordered by
// items). Each refusal is a 422 on body.event_id saying why.
func TestEventOnSale(t *testing.T) {
	now := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	scheme := int64(1)
	event := func(status states.EventStatus, startsAt time.Time, scheme *int64) *store.Event {
		return &store.Event{ID: 7, Status: status, StartsAt: startsAt, SchemeID: scheme}
	}
	for _, c := range []struct {
		name       string
		e          *store.Event
		needScheme bool
		why        string // "": on sale
	}{
		{"published, later, with a scheme", event("published", now.Add(time.Microsecond), &scheme), true, ""},
		{"general admission, ordered by items", event("published", now.Add(time.Hour), nil), false, ""},
		{"a draft", event("draft", now.Add(time.Hour), &scheme), true, "not on sale (status draft)"},
		{"archived", event("archived", now.Add(time.Hour), &scheme), false, "not on sale (status archived)"},
		{"starting now", event("published", now, &scheme), true, "has started"},
		{"started", event("published", now.Add(-time.Hour), nil), false, "has started"},
		{"seats held on general admission", event("published", now.Add(time.Hour), nil), true, MsgNoScheme},
	} {
		err := saleRefusal(c.e, now, c.needScheme)
		if c.why == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if f := problems.Fields(t, err); f["body.event_id"] != int64(7) || !strings.Contains(err.(*errs.ValidationError).Fields[0].Message, c.why) {
			t.Errorf("%s: %v, want body.event_id: %s", c.name, err, c.why)
		}
	}
}

// A hold's quote is the event's fee on the sum of its seats: the minimum
// fee once per reservation, not per seat; on top of the prices (separate)
// or inside them (included).
func TestSaleTotals(t *testing.T) {
	sale := func(mode pricing.Mode) *Sale {
		return &Sale{Event: &store.Event{FeeMode: mode, FeeRateBP: 1000, MinFee: 5000}}
	}
	for _, c := range []struct {
		name              string
		sale              *Sale
		prices            []int64
		total, fee, toPay int64
	}{
		{"separate, the minimum once for three seats", sale("separate"), []int64{10000, 10000, 10000}, 30000, 5000, 35000},
		{"included, the minimum once for three seats", sale("included"), []int64{10000, 10000, 10000}, 30000, 5000, 30000},
		{"separate, 10% over the minimum", sale("separate"), []int64{300000, 150000}, 450000, 45000, 495000},
		{"included, 10% over the minimum", sale("included"), []int64{300000, 150000}, 450000, 45000, 450000},
	} {
		total, fee, toPay := c.sale.Totals(c.prices)
		if total != c.total || fee != c.fee || toPay != c.toPay {
			t.Errorf("%s: total %d, fee %d, to pay %d; want %d, %d, %d", c.name, total, fee, toPay, c.total, c.fee, c.toPay)
		}
	}
}

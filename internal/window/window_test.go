package window

import (
	"errors"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
)

func TestWindowRule(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	at := func(day, hour int) time.Time { return time.Date(2026, 12, day, hour, 0, 0, 0, msk) }
	ptr := func(t time.Time) *time.Time { return &t }
	doors := at(20, 19)
	general := Window{Start: ptr(at(10, 10))}
	presale := For(general, Window{Start: ptr(at(3, 10))})
	early := For(general, Window{End: ptr(doors.Add(-2 * time.Hour))})
	never := For(general, Window{Start: ptr(at(21, 10))})
	for _, c := range []struct {
		name   string
		w      Window
		now    time.Time
		opens  *time.Time
		closed *time.Time
	}{
		{"before general sale", general, at(9, 12), ptr(at(10, 10)), nil},
		{"general sale open", general, at(10, 10), nil, nil},
		{"presale channel a week early", presale, at(3, 10), nil, nil},
		{"presale before its own start", presale, at(2, 10), ptr(at(3, 10)), nil},
		{"general sale until the start", general, doors.Add(-time.Minute), nil, nil},
		{"nothing sells once started", presale, doors, nil, ptr(doors)},
		{"a channel that stops two hours before the doors", early, doors.Add(-2 * time.Hour), nil, ptr(doors.Add(-2 * time.Hour))},
		{"it sold until then", early, doors.Add(-2*time.Hour - time.Second), nil, nil},
		{"a window that opens after the start never opens", never, at(11, 10), nil, ptr(doors)},
		{"no window at all: from publication", Window{}, at(1, 0), nil, nil},
	} {
		err := c.w.Refusal(c.now, doors)
		var we *errs.SalesWindowError
		switch {
		case c.opens == nil && c.closed == nil:
			if err != nil {
				t.Errorf("%s: refused (%v), want open", c.name, err)
			}
		case !errors.As(err, &we):
			t.Errorf("%s: %v, want a sales window refusal", c.name, err)
		case c.opens != nil && (we.OpensAt == nil || !we.OpensAt.Equal(*c.opens)):
			t.Errorf("%s: opens %v, want %v", c.name, we.OpensAt, *c.opens)
		case c.closed != nil && (we.ClosedAt == nil || !we.ClosedAt.Equal(*c.closed) || we.OpensAt != nil):
			t.Errorf("%s: closed %v (opens %v), want closed %v", c.name, we.ClosedAt, we.OpensAt, *c.closed)
		}
		if open := c.w.Open(c.now, doors); open != (err == nil) {
			t.Errorf("%s: Open says %v, Refusal %v", c.name, open, err)
		}
	}
}

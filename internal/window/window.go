// Package window holds the sales-window rule: when a caller may sell an
// event. General sale has the event's window; a sales channel may have its
// own for an event (a presale before general sale, a stop two hours before
// the doors), which replaces general sale's bound by bound. Whatever the
// window says, nothing sells once the event has started.
//
// The hold statement and the order transaction check the same rule in SQL
// by Postgres's clock (store.salesOpenSQL); this is the rule the service
// explains refusals with and partners read back.
package window

import (
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// Window is when sales run: from Start (nil: since publication) until End
// (nil: until the event starts).
type Window struct {
	Start *time.Time `json:"starts_at"`
	End   *time.Time `json:"ends_at"`
}

// For is the window of a caller: the channel's bound where the channel
// sets one for the event, else general sale's.
func For(general, channel Window) Window {
	w := general
	if channel.Start != nil {
		w.Start = channel.Start
	}
	if channel.End != nil {
		w.End = channel.End
	}
	return w
}

// Closes is when the window ends for an event starting at starts: its End,
// or the start when that comes first or there is no End.
func (w Window) Closes(starts time.Time) time.Time {
	if w.End != nil && w.End.Before(starts) {
		return *w.End
	}
	return starts
}

// Open tells whether sales run at now for an event starting at starts.
func (w Window) Open(now, starts time.Time) bool { return w.Refusal(now, starts) == nil }

// Refusal says why sales do not run at now (an *errs.SalesWindowError
// naming when they open, or when they closed), or nil while they run.
func (w Window) Refusal(now, starts time.Time) error {
	if w.Start != nil && now.Before(*w.Start) {
		opens := *w.Start
		if !opens.Before(w.Closes(starts)) {
			// It would open only when it has closed: it never will.
			closes := w.Closes(starts)
			return &errs.SalesWindowError{ClosedAt: &closes}
		}
		return &errs.SalesWindowError{OpensAt: &opens}
	}
	if closes := w.Closes(starts); !now.Before(closes) {
		return &errs.SalesWindowError{ClosedAt: &closes}
	}
	return nil
}

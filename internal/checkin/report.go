package checkin

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/ticketsales/ticketsales/store"
)

// The door report's fixed measures.
const (
	// ArrivalBin is the width of one bar of arrivals.
	ArrivalBin = 10 * time.Minute
	// ConflictWindow is how soon after a ticket's admission a scan of it
	// at another gate or device counts as a second copy at the door
	// (offline scans count whenever they were made).
	ConflictWindow = 5 * time.Minute
	// MaxArrivalBins bounds the arrivals shown: the last day of them.
	MaxArrivalBins = 144
	// MaxConflicts bounds the conflicts listed, newest first.
	MaxConflicts = 100
)

// The figures as the store reads them.
type (
	CategoryDoor = store.CheckInCategory
	GateDoor     = store.CheckInGate
	Arrivals     = store.CheckInBin
	Conflict     = store.CheckInConflict
)

// Report is an event's door as its organizer watches it: admitted of
// expected per category and in all, per gate, arrivals per ArrivalBin
// (every bin from the first arrival to the last, empty ones included),
// and the conflicts.
type Report struct {
	EventID  int64
	Title    string
	StartsAt time.Time
	// Timezone is the venue's (an IANA name): the door's times show in it.
	Timezone     string
	AllowReentry bool
	Sandbox      bool
	At           time.Time

	Expected, Admitted, Inside int64
	Categories                 []CategoryDoor
	Gates                      []GateDoor
	Arrivals                   []Arrivals
	// ArrivalsCut tells that older arrivals were left out (MaxArrivalBins).
	ArrivalsCut bool
	Conflicts   []Conflict
	// ConflictsCut tells that older conflicts were left out (MaxConflicts).
	ConflictsCut bool
}

// Door reads the report of one of the company's events (errs.NotFound for
// any other) at now, of sandbox or production tickets and scans.
func Door(ctx context.Context, db *bun.DB, companyID, eventID int64, sandbox bool, now time.Time) (*Report, error) {
	e, err := store.GetEvent(ctx, db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	place, err := store.GetEventPlace(ctx, db, eventID)
	if err != nil {
		return nil, err
	}
	fig, err := store.GetCheckInFigures(ctx, db, store.CheckInFilter{CompanyID: companyID, EventID: eventID, IsTest: sandbox,
		Bin: ArrivalBin, ConflictWindow: ConflictWindow, MaxConflicts: MaxConflicts + 1}) // one more: are there more?
	if err != nil {
		return nil, err
	}
	r := &Report{EventID: e.ID, Title: e.Title, StartsAt: e.StartsAt, Timezone: place.Timezone, AllowReentry: e.AllowReentry, Sandbox: sandbox, At: now,
		Categories: fig.Categories, Gates: fig.Gates, Conflicts: fig.Conflicts}
	if len(r.Conflicts) > MaxConflicts {
		r.Conflicts, r.ConflictsCut = r.Conflicts[:MaxConflicts], true
	}
	for _, c := range fig.Categories {
		r.Expected += c.Expected
		r.Admitted += c.Admitted
		r.Inside += c.Inside
	}
	r.Arrivals, r.ArrivalsCut = FillBins(fig.Arrivals, ArrivalBin, MaxArrivalBins)
	return r, nil
}

// FillBins gives every bin from the first to the last a row, zero where no
// one arrived, keeping the last max of them (cut: some were left out).
func FillBins(bins []Arrivals, width time.Duration, maxBins int) (out []Arrivals, cut bool) {
	if len(bins) == 0 {
		return nil, false
	}
	last := bins[len(bins)-1].Start
	first := bins[0].Start
	if n := int(last.Sub(first)/width) + 1; n > maxBins {
		first, cut = last.Add(-time.Duration(maxBins-1)*width), true
	}
	by := make(map[int64]int64, len(bins))
	for _, b := range bins {
		by[b.Start.Unix()] = b.Admitted
	}
	for t := first; !t.After(last); t = t.Add(width) {
		out = append(out, Arrivals{Start: t, Admitted: by[t.Unix()]})
	}
	return out, cut
}

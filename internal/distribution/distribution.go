// Package distribution decides which partner sells what, and when: sales
// channels of applications, allocations of an event's seats and
// general-admission quantities to them, their sales windows, and releases
// back to general sale (docs/decisions.md, "Channels and allocations").
// The partner API, the cabinet, ticketctl and the release workflow all
// change allocations through this one service; the selling rules
// themselves (what a caller may hold, order and see) are the SQL of
// store/seatsql.go and the window rule of internal/window.
package distribution

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/workflows/contract"
)

// Service changes and reads a company's distribution.
type Service struct {
	db *bun.DB
	// changed announces an event's seats or quantities changed (the api's
	// availability caches and sale caches); nil: triggers notify.
	changed func(eventID int64)
	log     *slog.Logger
	// Settings start the timed releases' workflows.
	Settings Settings
}

// Settings of the service's timed releases: where their workflows run.
type Settings struct {
	// Temporal starts, replaces and ends AllocationRelease workflows; nil:
	// none are started (a test of the selling rules alone).
	Temporal  client.Client
	TaskQueue string
}

// New makes the service; changed may be nil.
func New(db *bun.DB, log *slog.Logger, changed func(eventID int64), st Settings) *Service {
	return &Service{db: db, log: log, changed: changed, Settings: st}
}

func (s *Service) announce(eventID int64) {
	if s.changed != nil {
		s.changed(eventID)
	}
}

// Selector picks seats of a seated event: whole zones, ranges of rows of
// a zone, and single seats. The union is taken.
type Selector struct {
	Zones   []string   `json:"zones,omitempty"`
	Rows    []RowRange `json:"rows,omitempty"`
	SeatIDs []string   `json:"seat_ids,omitempty"`
}

// RowRange is rows From to To (inclusive) of a zone. Row labels that are
// numbers compare as numbers (row 9 comes before row 10), others as text.
type RowRange struct {
	Zone string `json:"zone"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Empty tells whether the selector picks nothing.
func (sel Selector) Empty() bool { return len(sel.Zones)+len(sel.Rows)+len(sel.SeatIDs) == 0 }

// MaxSelectorItems bounds a selector's zones, row ranges and seat ids
// together.
const MaxSelectorItems = 10_000

// compareRows orders row labels: numbers as numbers, else as text.
func compareRows(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// Resolve lists the seats of the event the selector picks, in seat order;
// a zone, row or seat the event does not have is a validation error naming
// it.
func Resolve(seats map[string]store.ReservedSeat, sel Selector) ([]string, error) {
	verr := &errs.ValidationError{}
	if sel.Empty() {
		verr.Add("seats", "name zones, row ranges or seat ids", nil)
		return nil, verr
	}
	if n := len(sel.Zones) + len(sel.Rows) + len(sel.SeatIDs); n > MaxSelectorItems {
		verr.Add("seats", fmt.Sprintf("at most %d zones, row ranges and seats together", MaxSelectorItems), n)
		return nil, verr
	}
	zones := map[string]bool{}
	for _, s := range seats {
		zones[s.ZoneID] = true
	}
	picked := map[string]bool{}
	for i, z := range sel.Zones {
		if !zones[z] {
			verr.Add(fmt.Sprintf("seats.zones[%d]", i), "the event has no such zone", z)
		}
		for id, s := range seats {
			if s.ZoneID == z {
				picked[id] = true
			}
		}
	}
	for i, r := range sel.Rows {
		if !zones[r.Zone] {
			verr.Add(fmt.Sprintf("seats.rows[%d].zone", i), "the event has no such zone", r.Zone)
			continue
		}
		if compareRows(r.From, r.To) > 0 {
			verr.Add(fmt.Sprintf("seats.rows[%d]", i), "from comes after to", r.From+".."+r.To)
			continue
		}
		found := false
		for id, s := range seats {
			if s.ZoneID == r.Zone && compareRows(s.Row, r.From) >= 0 && compareRows(s.Row, r.To) <= 0 {
				picked[id], found = true, true
			}
		}
		if !found {
			verr.Add(fmt.Sprintf("seats.rows[%d]", i), "no seats in these rows", r.From+".."+r.To)
		}
	}
	for i, id := range sel.SeatIDs {
		if _, ok := seats[id]; !ok {
			verr.Add(fmt.Sprintf("seats.seat_ids[%d]", i), "the event sells no such seat", id)
		}
		picked[id] = true
	}
	if err := verr.OrNil(); err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(picked))
	for id := range picked {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// AllocateSeats allocates the event's seats the selector picks to the
// channel: those free and in general sale move; the rest are reported
// left where they were (held, sold, or another channel's).
func (s *Service) AllocateSeats(ctx context.Context, companyID, eventID, channelID int64, sel Selector) (store.SeatMove, error) {
	ids, err := s.resolve(ctx, companyID, eventID, sel)
	if err != nil {
		return store.SeatMove{}, err
	}
	mv, err := store.AllocateSeats(ctx, s.db, companyID, eventID, channelID, ids)
	if err != nil {
		return store.SeatMove{}, err
	}
	if len(mv.Moved) > 0 {
		s.announce(eventID)
		s.recordChange(ctx, companyID, eventID, channelID, "allocated", len(mv.Moved), 0)
	}
	return mv, nil
}

func (s *Service) resolve(ctx context.Context, companyID, eventID int64, sel Selector) ([]string, error) {
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	if e.SchemeID == nil {
		return nil, errs.Invalid("seats", "the event has no seating scheme: allocate quantities of its categories", eventID)
	}
	seats, err := store.ListEventSeats(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	return Resolve(seats, sel)
}

// SetQuota sets the channel's quantity of a general-admission category
// (and session) of the event.
func (s *Service) SetQuota(ctx context.Context, companyID, eventID, channelID, categoryID int64, sessionID *int64, quantity int) (*store.Quota, error) {
	if quantity < 0 || quantity > 10_000_000 {
		return nil, errs.Invalid("quantity", "must be 0..10000000", quantity)
	}
	before, err := store.ListQuotaLeft(ctx, s.db, eventID, channelID)
	if err != nil {
		return nil, err
	}
	q, err := store.SetQuota(ctx, s.db, companyID, eventID, channelID, categoryID, sessionID, quantity)
	if err != nil {
		var short *store.ErrShort
		if errors.As(err, &short) {
			return nil, errs.Invalid("quantity", fmt.Sprintf("general sale has %d left to allocate", short.Left), quantity)
		}
		return nil, err
	}
	was := 0
	for _, b := range before {
		if b.ID == q.ID {
			was = b.Allocated
		}
	}
	s.announce(eventID)
	s.recordChange(ctx, companyID, eventID, channelID, "quota", q.Allocated-was, 0)
	return q, nil
}

// SetTerms sets the channel's own sales window for the event and when its
// unsold allocation returns to general sale (nil: by hand only), then
// starts, replaces or ends the release's workflow (releaseWorkflow). If
// Temporal fails, the terms stay set and the error says so: setting the
// same terms again starts the workflow, and the worker's reaper starts
// any a crash left unstarted once its release is overdue
// (SweepReleases).
func (s *Service) SetTerms(ctx context.Context, companyID, eventID, channelID int64, w window.Window, releaseAt *time.Time) error {
	if w.Start != nil && w.End != nil && !w.Start.Before(*w.End) {
		return errs.Invalid("sales_end", "must come after sales_start", w.End)
	}
	if releaseAt != nil {
		// Postgres keeps microseconds: the workflow waits for the very
		// instant the row says.
		at := releaseAt.UTC().Truncate(time.Microsecond)
		releaseAt = &at
	}
	if err := store.SetChannelTerms(ctx, s.db, companyID, eventID, channelID, w, releaseAt); err != nil {
		return err
	}
	s.announce(eventID)
	if err := s.releaseWorkflow(ctx, companyID, eventID, channelID, releaseAt); err != nil {
		return fmt.Errorf("terms of channel %d for event %d set, their release workflow not: %v: %w",
			channelID, eventID, err, errs.Incomplete)
	}
	return nil
}

// ScheduleReleases starts (or moves, or ends) the release workflows of
// timed releases set outside SetTerms, by a catalog import (its result's
// Releases), once the import committed; it announces the events' changes.
// A failure is returned after trying them all; the worker's reaper starts
// any overdue release left without one.
func (s *Service) ScheduleReleases(ctx context.Context, companyID int64, releases []store.ChannelTerms) error {
	var failed error
	for _, r := range releases {
		s.announce(r.EventID)
		if err := s.releaseWorkflow(ctx, companyID, r.EventID, r.ChannelID, r.ReleaseAt); err != nil && failed == nil {
			failed = fmt.Errorf("release workflow of channel %d for event %d: %w", r.ChannelID, r.EventID, err)
		}
	}
	return failed
}

// releaseWorkflow makes the release workflow of the channel on the event
// wait for releaseAt, or end (nil). A moved release replaces the run: a
// start under the same id with the conflict policy TERMINATE_EXISTING
// ends the old run and starts one for the new time in one call, and the
// UI shows the replaced run as terminated with the reason. A signal that
// resets a running timer would keep one run, but a run already past its
// timer (releasing) would then need a loop to wait again; a new run per
// release_at keeps the workflow a timer and one activity. A run that
// escapes this anyway (a start that failed after a move) reaches
// Postgres's due check and changes nothing.
func (s *Service) releaseWorkflow(ctx context.Context, companyID, eventID, channelID int64, releaseAt *time.Time) error {
	tc := s.Settings.Temporal
	if tc == nil {
		return nil
	}
	wid := contract.AllocationReleaseWorkflowID(eventID, channelID)
	if releaseAt == nil {
		err := tc.TerminateWorkflow(ctx, wid, "", "release_at removed")
		var none *serviceerror.NotFound
		if err != nil && !errors.As(err, &none) {
			return fmt.Errorf("end workflow %s: %w", wid, err)
		}
		return nil
	}
	return s.startRelease(ctx, contract.AllocationReleaseInput{CompanyID: companyID, EventID: eventID, ChannelID: channelID,
		ReleaseAt: *releaseAt})
}

// startRelease starts the release's run for in.ReleaseAt, replacing a
// running one.
func (s *Service) startRelease(ctx context.Context, in contract.AllocationReleaseInput) error {
	wid := contract.AllocationReleaseWorkflowID(in.EventID, in.ChannelID)
	_, err := s.Settings.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: wid, TaskQueue: s.Settings.TaskQueue,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDAttr.ValueSet(in.CompanyID),
			contract.EventIDAttr.ValueSet(in.EventID)),
	}, contract.AllocationReleaseWorkflow, in)
	if err != nil {
		return fmt.Errorf("start workflow %s: %w", wid, err)
	}
	return nil
}

// SweepReleases starts the workflows of timed releases overdue by more
// than grace and not done: their workflow is missing (a crash between
// storing the terms and starting it, or a start that failed) or stale
// (waiting for an older release_at). A new run for the row's release_at
// replaces whatever runs and releases at once. Releases not due yet wait
// for SetTerms again or for this sweep once overdue.
func (s *Service) SweepReleases(ctx context.Context, grace time.Duration) (int, error) {
	if s.Settings.Temporal == nil {
		return 0, nil
	}
	due, err := store.DueReleases(ctx, s.db, 100)
	if err != nil {
		return 0, err
	}
	cutoff := time.Now().Add(-grace)
	n := 0
	var failed []error
	for _, t := range due {
		if t.ReleaseAt.After(cutoff) {
			break // in release_at order: the rest are not overdue
		}
		companyID, err := store.EventCompany(ctx, s.db, t.EventID)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		err = s.startRelease(ctx, contract.AllocationReleaseInput{CompanyID: companyID, EventID: t.EventID,
			ChannelID: t.ChannelID, ReleaseAt: t.ReleaseAt.UTC()})
		if err != nil {
			failed = append(failed, err) // the others still get their turn
			continue
		}
		n++
	}
	return n, errors.Join(failed...)
}

// Release returns allocation to general sale (store.Release says what).
func (s *Service) Release(ctx context.Context, companyID int64, r store.Release) (store.Released, error) {
	out, err := store.ReleaseAllocation(ctx, s.db, companyID, r)
	if err != nil {
		return out, err
	}
	n := len(out.Seats)
	for _, k := range out.Quantities {
		n += k
	}
	if n > 0 || (r.Whole && !out.NotDue) {
		s.announce(r.EventID)
		s.recordChange(ctx, companyID, r.EventID, r.ChannelID, "released", 0, n)
	}
	return out, nil
}

// recordChange logs an allocation change; the channel's applications are
// told by webhook (allocation.changed), written by the store in the
// change's own transaction.
func (s *Service) recordChange(ctx context.Context, companyID, eventID, channelID int64, what string, added, released int) {
	if s.log != nil {
		s.log.InfoContext(ctx, "allocation changed", "company_id", companyID, "event_id", eventID,
			"channel_id", channelID, "change", what, "added", added, "released", released)
	}
}

// Share is what a key may sell of an event: its channel's allocation and
// window, and general sale.
type Share struct {
	EventID     int64          `json:"event_id"`
	Channel     *ChannelRef    `json:"channel" doc:"The sales channel this key's application sells in; null: general sale only."`
	Window      WindowView     `json:"window" doc:"When this key may hold and order: its channel's window where it sets one, else general sale's."`
	Allocation  *Allocation    `json:"allocation" doc:"What is allocated to this key's channel; null without a channel or an allocation."`
	GeneralSale GeneralSaleRef `json:"general_sale" doc:"What general sale has: seats and tickets no channel holds."`
}

// ChannelRef names a channel.
type ChannelRef struct {
	ID   int64  `json:"id"`
	Ref  string `json:"ref"`
	Name string `json:"name"`
}

// WindowView is a window as partners read it.
type WindowView struct {
	StartsAt *time.Time `json:"starts_at" doc:"Null: since the event was published."`
	EndsAt   time.Time  `json:"ends_at" doc:"When sales through this key stop: the window's end, or the event's start."`
	Open     bool       `json:"open"`
}

// Allocation is a channel's allocation on an event.
type Allocation struct {
	Seats         store.SeatCounts `json:"seats"`
	Categories    []QuotaView      `json:"categories" doc:"General-admission quantities allocated."`
	ReleasedSeats int              `json:"released_seats" doc:"Seats released to general sale so far."`
	ReleaseAt     *time.Time       `json:"release_at" doc:"When the unsold rest returns to general sale; null: only by the organizer's hand."`
	ReleasedAt    *time.Time       `json:"released_at" doc:"When it was released as a whole; null: not yet."`
}

// QuotaView is a quantity allocated of a category (and session).
type QuotaView struct {
	TicketCategoryID int64  `json:"ticket_category_id"`
	SessionID        *int64 `json:"schedule_slot_id,omitempty"`
	Allocated        int    `json:"allocated"`
	Sold             int    `json:"sold"`
	Held             int    `json:"held" doc:"In unpaid orders."`
	Left             int    `json:"left"`
	Released         int    `json:"released"`
}

// GeneralSaleRef is what general sale has of an event.
type GeneralSaleRef struct {
	Seats      store.SeatCounts `json:"seats"`
	Categories []CategoryLeft   `json:"categories"`
}

// CategoryLeft is what is left of a general-admission category.
type CategoryLeft struct {
	TicketCategoryID int64 `json:"ticket_category_id"`
	Left             int   `json:"left"`
}

// ShareOf says what the key may sell of the company's event.
func (s *Service) ShareOf(ctx context.Context, p *apikey.Principal, eventID int64, now time.Time) (*Share, error) {
	e, err := store.GetEvent(ctx, s.db, p.CompanyID, eventID)
	if err != nil {
		return nil, err
	}
	out := &Share{EventID: e.ID}
	var terms *store.ChannelTerms
	if p.ChannelID != 0 {
		ch, err := store.GetChannel(ctx, s.db, p.CompanyID, p.ChannelID)
		if err != nil {
			return nil, err
		}
		out.Channel = &ChannelRef{ID: ch.ID, Ref: ch.Ref, Name: ch.Name}
		if terms, err = store.GetChannelTerms(ctx, s.db, e.ID, ch.ID); err != nil {
			return nil, err
		}
	}
	var own window.Window
	if terms != nil {
		own = terms.Window()
	}
	w := window.For(e.GeneralSale(), own)
	out.Window = WindowView{StartsAt: w.Start, EndsAt: w.Closes(e.StartsAt), Open: w.Open(now, e.StartsAt)}
	counts, err := store.CountSeats(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	left, err := store.GeneralLeft(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	out.GeneralSale = GeneralSaleRef{Seats: GeneralSeats(counts), Categories: []CategoryLeft{}}
	for id, n := range left {
		out.GeneralSale.Categories = append(out.GeneralSale.Categories, CategoryLeft{TicketCategoryID: id, Left: n})
	}
	slices.SortFunc(out.GeneralSale.Categories, func(a, b CategoryLeft) int { return cmp.Compare(a.TicketCategoryID, b.TicketCategoryID) })
	if terms != nil {
		a, err := s.allocation(ctx, e.ID, terms, counts)
		if err != nil {
			return nil, err
		}
		out.Allocation = a
	}
	return out, nil
}

// GeneralSeats are general sale's seats: those of no channel, and the
// unsold ones of channels that released their allocation as a whole.
func GeneralSeats(counts map[int64]store.ChannelSeats) store.SeatCounts {
	g := store.SeatCounts{}
	for ch, c := range counts {
		switch {
		case ch == 0:
			g.Allocated += c.Allocated
			g.Sold += c.Sold
		case c.Released:
			g.Allocated += c.Allocated - c.Sold
		default:
			continue
		}
		g.Held += c.Held
		g.Left += c.Left
	}
	return g
}

// allocation is a channel's allocation with its counts.
func (s *Service) allocation(ctx context.Context, eventID int64, t *store.ChannelTerms, counts map[int64]store.ChannelSeats) (*Allocation, error) {
	quotas, err := store.ListQuotas(ctx, s.db, eventID, t.ChannelID)
	if err != nil {
		return nil, err
	}
	a := &Allocation{Seats: counts[t.ChannelID].SeatCounts, Categories: []QuotaView{}, ReleasedSeats: t.ReleasedSeats,
		ReleaseAt: t.ReleaseAt, ReleasedAt: t.ReleasedAt}
	if t.ReleasedAt != nil {
		// Released as a whole: its unsold seats are general sale's, what
		// it sold is still its own.
		a.Seats = store.SeatCounts{Allocated: a.Seats.Sold, Sold: a.Seats.Sold}
	}
	for _, q := range quotas {
		a.Categories = append(a.Categories, QuotaView{TicketCategoryID: q.CategoryID, SessionID: q.SessionID,
			Allocated: q.Allocated, Sold: q.Taken - q.Held, Held: q.Held, Left: q.Left(), Released: q.Released})
	}
	return a, nil
}

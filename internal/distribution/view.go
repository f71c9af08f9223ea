package distribution

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/window"
	"github.com/ticketsales/ticketsales/store"
)

// The organizer's side of distribution, as the cabinet shows and changes
// it: channels and their applications, and an event's channels with their
// terms and counts. The cabinet reaches the data only through here.

// refPattern is what a channel's ref may be (the channels table's rule).
var refPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// MaxChannelName bounds a channel's name, in characters.
const MaxChannelName = 200

// ChannelInfo is a channel of the company with its applications.
type ChannelInfo struct {
	ID           int64
	Ref          string
	Name         string
	Applications []ChannelApp
}

// ChannelApp is an application in a channel.
type ChannelApp struct {
	ID          int64
	Environment string
	Name        string
}

// Channels lists the company's channels by ref, each with its
// applications of both environments.
func (s *Service) Channels(ctx context.Context, companyID int64) ([]ChannelInfo, error) {
	chs, members, err := store.ListChannels(ctx, s.db, companyID)
	if err != nil {
		return nil, err
	}
	out := make([]ChannelInfo, len(chs))
	for i, ch := range chs {
		out[i] = ChannelInfo{ID: ch.ID, Ref: ch.Ref, Name: ch.Name}
		for _, m := range members {
			if m.ChannelID == ch.ID {
				out[i].Applications = append(out[i].Applications, ChannelApp{ID: m.ApplicationID, Environment: m.Environment, Name: m.Name})
			}
		}
	}
	return out, nil
}

// SaveChannel creates the company's channel of ref, or renames the one it
// has (renamed true). A bad ref or name is a validation error naming it.
func (s *Service) SaveChannel(ctx context.Context, companyID int64, ref, name string) (ch ChannelRef, renamed bool, err error) {
	verr := &errs.ValidationError{}
	if !refPattern.MatchString(ref) {
		verr.Add("ref", "1 to 64 lowercase letters, digits, '_' or '-', starting with a letter or digit", ref)
	}
	if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > MaxChannelName {
		verr.Add("name", fmt.Sprintf("1 to %d characters, not blank", MaxChannelName), name)
	} else {
		verr.Line("name", name, 1, MaxChannelName)
	}
	if err := verr.OrNil(); err != nil {
		return ChannelRef{}, false, err
	}
	_, err = store.GetChannelByRef(ctx, s.db, companyID, ref)
	switch {
	case err == nil:
		renamed = true
	case !errors.Is(err, errs.NotFound):
		return ChannelRef{}, false, err
	}
	c, err := store.UpsertChannel(ctx, s.db, companyID, ref, name)
	if err != nil {
		return ChannelRef{}, false, err
	}
	return ChannelRef{ID: c.ID, Ref: c.Ref, Name: c.Name}, renamed, nil
}

// Channel finds the company's channel by id (errs.NotFound: not the
// company's).
func (s *Service) Channel(ctx context.Context, companyID, channelID int64) (ChannelRef, error) {
	c, err := store.GetChannel(ctx, s.db, companyID, channelID)
	if err != nil {
		return ChannelRef{}, err
	}
	return ChannelRef{ID: c.ID, Ref: c.Ref, Name: c.Name}, nil
}

// SetApplicationChannel puts the company's application (environment and
// name) in the channel, or in none (0). Keys are answered from the api's
// cache for up to its TTL, so every instance knows within it.
func (s *Service) SetApplicationChannel(ctx context.Context, companyID int64, environment, application string, channelID int64) error {
	_, err := store.SetApplicationChannel(ctx, s.db, companyID, environment, application, channelID)
	if err == nil && s.log != nil {
		s.log.InfoContext(ctx, "application channel changed", "company_id", companyID, "environment", environment,
			"application", application, "channel_id", channelID)
	}
	return err
}

// SetGeneralSale sets the window of general sale of the company's event.
func (s *Service) SetGeneralSale(ctx context.Context, companyID, eventID int64, w window.Window) error {
	if w.Start != nil && w.End != nil && !w.Start.Before(*w.End) {
		return errs.Invalid("sales_end", "must come after sales_start", w.End)
	}
	if err := store.SetGeneralSale(ctx, s.db, companyID, eventID, w); err != nil {
		return err
	}
	s.announce(eventID)
	return nil
}

// Terms are a channel's terms for an event: its window and timed release.
func (s *Service) Terms(ctx context.Context, companyID, eventID, channelID int64) (*store.ChannelTerms, error) {
	if _, err := store.GetEvent(ctx, s.db, companyID, eventID); err != nil {
		return nil, err
	}
	if _, err := store.GetChannel(ctx, s.db, companyID, channelID); err != nil {
		return nil, err
	}
	return store.GetChannelTerms(ctx, s.db, eventID, channelID)
}

// Counts are an allocation's figures: allocated (sold included), sold,
// held (reservations and unpaid orders), left (still to sell) and
// released (returned to general sale so far).
type Counts struct {
	Allocated, Sold, Held, Left, Released int
}

// QuotaLine is a channel's quota of a general-admission category (and
// session) on an event, with its figures.
type QuotaLine struct {
	ID         int64
	CategoryID int64
	Category   string
	SessionID  *int64
	Session    string // the session's ref, "" without one
	SessionAt  time.Time
	Counts
}

// ChannelLine is a channel on an event: its terms (nil bounds: general
// sale's; no terms at all: nothing allocated nor a window set yet) and its
// allocation.
type ChannelLine struct {
	Channel    ChannelRef
	HasTerms   bool
	SalesStart *time.Time
	SalesEnd   *time.Time
	ReleaseAt  *time.Time
	ReleasedAt *time.Time
	Seats      Counts
	Quotas     []QuotaLine
}

// Allocated tells whether the channel holds anything of the event.
func (l ChannelLine) Allocated() bool { return l.Seats.Allocated > 0 || len(l.Quotas) > 0 }

// CategoryInfo is a category of the event, and what general sale has
// left of it (general admission; nil: seated).
type CategoryInfo struct {
	ID          int64
	Name        string
	Capacity    *int
	GeneralLeft *int
}

// SessionInfo is a session of a scheduled event.
type SessionInfo struct {
	ID       int64
	Ref      string
	StartsAt time.Time
}

// EventDistribution is one event's distribution as the organizer manages
// it: general sale's window and seats, and every channel of the company
// with its terms and counts for the event.
type EventDistribution struct {
	EventID    int64
	Title      string
	StartsAt   time.Time
	Venue      string
	TimeZone   string
	Seated     bool
	SalesStart *time.Time
	SalesEnd   *time.Time
	// General is general sale's seats (Released: none).
	General    Counts
	Categories []CategoryInfo
	Sessions   []SessionInfo
	Channels   []ChannelLine
}

// EventView reads one of the company's events' distribution.
func (s *Service) EventView(ctx context.Context, companyID, eventID int64) (*EventDistribution, error) {
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	place, err := store.GetEventPlace(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	out := &EventDistribution{EventID: e.ID, Title: e.Title, StartsAt: e.StartsAt, Venue: place.Venue, TimeZone: place.Timezone,
		Seated: e.SchemeID != nil, SalesStart: e.SalesStart, SalesEnd: e.SalesEnd}
	cats, err := store.ListCategories(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	left, err := store.GeneralLeft(ctx, s.db, e.ID)
	if err != nil {
		return nil, err
	}
	catName := map[int64]string{}
	for _, c := range cats {
		ci := CategoryInfo{ID: c.ID, Name: c.Name, Capacity: c.Capacity}
		if n, ok := left[c.ID]; ok {
			ci.GeneralLeft = &n
		}
		catName[c.ID] = c.Name
		out.Categories = append(out.Categories, ci)
	}
	sessions, _, err := store.ListSessions(ctx, s.db, companyID, e.ID, store.Paging{Page: 1, PerPage: 1000})
	if err != nil {
		return nil, err
	}
	sessionOf := map[int64]store.Session{}
	for _, se := range sessions {
		out.Sessions = append(out.Sessions, SessionInfo{ID: se.ID, Ref: se.Ref, StartsAt: se.StartsAt})
		sessionOf[se.ID] = se
	}
	chs, err := s.Channels(ctx, companyID)
	if err != nil {
		return nil, err
	}
	lines, err := s.channelLines(ctx, e.ID, catName, sessionOf)
	if err != nil {
		return nil, err
	}
	g := GeneralSeats(lines.seats)
	out.General = Counts{Allocated: g.Allocated, Sold: g.Sold, Held: g.Held, Left: g.Left}
	for _, ch := range chs {
		l, ok := lines.byChannel[ch.ID]
		if !ok {
			l = ChannelLine{}
		}
		l.Channel = ChannelRef{ID: ch.ID, Ref: ch.Ref, Name: ch.Name}
		out.Channels = append(out.Channels, l)
	}
	return out, nil
}

type eventLines struct {
	seats     map[int64]store.ChannelSeats
	byChannel map[int64]ChannelLine
	order     []int64 // channels with terms, by id
}

// channelLines reads the event's channels' terms and counts: seats by
// CountSeats, quantities by ListQuotas, the figures the partner API gives.
func (s *Service) channelLines(ctx context.Context, eventID int64, catName map[int64]string, sessionOf map[int64]store.Session) (eventLines, error) {
	out := eventLines{byChannel: map[int64]ChannelLine{}}
	terms, err := store.ListChannelTerms(ctx, s.db, eventID)
	if err != nil {
		return out, err
	}
	if out.seats, err = store.CountSeats(ctx, s.db, eventID); err != nil {
		return out, err
	}
	quotas, err := store.ListQuotas(ctx, s.db, eventID, 0)
	if err != nil {
		return out, err
	}
	for _, t := range terms {
		l := ChannelLine{HasTerms: true, SalesStart: t.SalesStart, SalesEnd: t.SalesEnd, ReleaseAt: t.ReleaseAt, ReleasedAt: t.ReleasedAt}
		sc := out.seats[t.ChannelID].SeatCounts
		l.Seats = Counts{Allocated: sc.Allocated, Sold: sc.Sold, Held: sc.Held, Left: sc.Left, Released: t.ReleasedSeats}
		if t.ReleasedAt != nil {
			// Released as a whole: its unsold seats are general sale's,
			// what it sold stays its own (as the partner API says).
			l.Seats = Counts{Allocated: sc.Sold, Sold: sc.Sold, Released: t.ReleasedSeats}
		}
		out.byChannel[t.ChannelID] = l
		out.order = append(out.order, t.ChannelID)
	}
	for _, q := range quotas {
		l := out.byChannel[q.ChannelID]
		ql := QuotaLine{ID: q.ID, CategoryID: q.CategoryID, Category: catName[q.CategoryID], SessionID: q.SessionID,
			Counts: Counts{Allocated: q.Allocated, Sold: q.Taken - q.Held, Held: q.Held, Left: q.Left(), Released: q.Released}}
		if q.SessionID != nil {
			se := sessionOf[*q.SessionID]
			ql.Session, ql.SessionAt = se.Ref, se.StartsAt
		}
		l.Quotas = append(l.Quotas, ql)
		out.byChannel[q.ChannelID] = l
	}
	return out, nil
}

// EventChannels is an event's channels in the sales report: each channel
// with terms for the event, its seats and quotas.
type EventChannels struct {
	EventID  int64
	Title    string
	StartsAt time.Time
	TimeZone string
	General  Counts
	Channels []ChannelLine
}

// Report lists, per event of the company with channels (one event when
// eventID is not 0), each channel's allocation and its figures.
func (s *Service) Report(ctx context.Context, companyID, eventID int64) ([]EventChannels, error) {
	ids, err := store.EventsWithChannels(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	chs, _, err := store.ListChannels(ctx, s.db, companyID)
	if err != nil {
		return nil, err
	}
	byID := map[int64]store.Channel{}
	for _, c := range chs {
		byID[c.ID] = c
	}
	cats, err := store.ListCategories(ctx, s.db, ids...)
	if err != nil {
		return nil, err
	}
	catName := map[int64]string{}
	for _, c := range cats {
		catName[c.ID] = c.Name
	}
	var out []EventChannels
	for _, id := range ids {
		place, err := store.GetEventPlace(ctx, s.db, id)
		if err != nil {
			return nil, err
		}
		sessions, _, err := store.ListSessions(ctx, s.db, companyID, id, store.Paging{Page: 1, PerPage: 1000})
		if err != nil {
			return nil, err
		}
		sessionOf := map[int64]store.Session{}
		for _, se := range sessions {
			sessionOf[se.ID] = se
		}
		lines, err := s.channelLines(ctx, id, catName, sessionOf)
		if err != nil {
			return nil, err
		}
		g := GeneralSeats(lines.seats)
		ev := EventChannels{EventID: id, Title: place.Title, StartsAt: place.StartsAt, TimeZone: place.Timezone,
			General: Counts{Allocated: g.Allocated, Sold: g.Sold, Held: g.Held, Left: g.Left}}
		for _, chID := range lines.order {
			l := lines.byChannel[chID]
			c := byID[chID]
			l.Channel = ChannelRef{ID: c.ID, Ref: c.Ref, Name: c.Name}
			ev.Channels = append(ev.Channels, l)
		}
		out = append(out, ev)
	}
	return out, nil
}

// Release says what of a channel's allocation returns to general sale
// (store.Release): the cabinet's name for it.
type Release = store.Release

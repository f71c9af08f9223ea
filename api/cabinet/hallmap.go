package cabinet

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/distribution"
	"github.com/ticketsales/ticketsales/internal/errs"
)

// The hall map: a seated event's hall drawn as an inline SVG (server
// rendered, as every cabinet page: no outside renderer and nothing to run
// before the hall shows), every seat coloured by its state, with the
// counts beside it; the organizer selects seats on it and allocates them
// to a channel, or returns them to general sale, through the same
// distribution rules ticketctl and the event's forms use (permission
// distribution). The page's table is the map's accessible equivalent; the
// script only fills the form's seat list from clicks and drags.

// channelColours is how many channel colours the stylesheet has (ch0…);
// more channels reuse them in turn, the legend naming each.
const channelColours = 8

// hallChannel is a channel as the map shows it: its colour and counts.
type hallChannel struct {
	ID         int64
	Name, Ref  string
	Colour     string // the stylesheet's class
	hallCounts        // its seats by state
}

// hallCounts are seats by state; Free is unsold and unheld (a channel's:
// allocated).
type hallCounts struct {
	Free, Held, Sold, Admitted int
}

func (c hallCounts) Total() int { return c.Free + c.Held + c.Sold + c.Admitted }

func (c *hallCounts) add(state string) {
	switch state {
	case distribution.SeatFree, distribution.SeatAllocated:
		c.Free++
	case distribution.SeatHeld:
		c.Held++
	case distribution.SeatSold:
		c.Sold++
	case distribution.SeatAdmitted:
		c.Admitted++
	}
}

type hallZone struct {
	ID, Name       string
	Outline        string // SVG points
	LabelX, LabelY float64
	Rotation       float64
	Rows           []hallRow
}

type hallRow struct {
	Row    string
	Labels []catalogfile.XY
	Seats  []hallSeat
}

type hallSeat struct {
	ID           string
	X, Y         float64
	Class, Title string
}

// hallView is the map page's own data.
type hallView struct {
	Event   *distribution.EventDistribution
	Loc     *time.Location
	ViewBox string
	// Size is the map's class by seats across: hall-m and hall-l keep a
	// clickable size at a phone's width and scroll in their region.
	Size     string
	Stage    string
	StageAt  catalogfile.XY
	StageCap string
	Zones    []hallZone
	General  hallCounts
	Channels []hallChannel
	Total    hallCounts
	OffSale  int
	// The form as sent, when refused.
	Seats    string
	Channel  int64
	Problems []string
}

// seatRadius is a seat's radius in seat pitches: neighbours stay apart.
const seatRadius = 0.4

// narrowHall and wideHall are widths in seat pitches past which the map
// keeps a clickable size (its stylesheet's minimum width) and scrolls in
// its box rather than shrink to a phone's width.
const narrowHall, wideHall = 24, 60

func points(ps []catalogfile.XY) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(num(p[0]) + "," + num(p[1]))
	}
	return b.String()
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// stateWords names a seat's state in its title.
func stateWords(st distribution.SeatState, channel map[int64]string) string {
	in := "general sale"
	if st.ChannelID != 0 {
		in = channel[st.ChannelID]
	}
	switch st.State {
	case distribution.SeatFree:
		return "free, general sale"
	case distribution.SeatAllocated:
		return "free, allocated to " + in
	case distribution.SeatHeld:
		return "held (" + in + ")"
	case distribution.SeatSold:
		return "sold (" + in + ")"
	case distribution.SeatAdmitted:
		return "sold and admitted at the door (" + in + ")"
	}
	return "not on sale"
}

// hallPage renders the event's hall map, with a refused form's values.
func (c *cabinet) hallPage(w http.ResponseWriter, r *http.Request, status int, ev *distribution.EventDistribution, v hallView) {
	if !ev.Seated {
		c.notFound(w, r)
		return
	}
	m, err := c.Distribution.HallMap(r.Context(), user(r).CompanyID, ev.EventID)
	if errors.Is(err, errs.NotFound) {
		c.notFound(w, r)
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	v.Event, v.Loc = ev, location(ev.TimeZone)
	g := m.Geometry
	v.ViewBox = fmt.Sprintf("%s %s %s %s", num(g.Bounds.X), num(g.Bounds.Y), num(g.Bounds.Width), num(g.Bounds.Height))
	switch {
	case g.Bounds.Width > wideHall:
		v.Size = "hall-l"
	case g.Bounds.Width > narrowHall:
		v.Size = "hall-m"
	}
	v.Stage, v.StageAt, v.StageCap = points(g.Stage.Outline), g.Stage.LabelAt, g.Stage.Label
	names := map[int64]string{}
	index := map[int64]int{}
	for i, l := range ev.Channels {
		names[l.Channel.ID] = l.Channel.Name
		index[l.Channel.ID] = len(v.Channels)
		v.Channels = append(v.Channels, hallChannel{ID: l.Channel.ID, Name: l.Channel.Name, Ref: l.Channel.Ref,
			Colour: fmt.Sprintf("ch%d", i%channelColours)})
	}
	for _, z := range g.Zones {
		hz := hallZone{ID: z.ID, Name: z.Name, Outline: points(z.Outline), LabelX: z.LabelAt[0], LabelY: z.LabelAt[1], Rotation: z.Rotation}
		for _, row := range z.Rows {
			hr := hallRow{Row: row.Row, Labels: row.LabelPoints, Seats: make([]hallSeat, 0, len(row.Seats))}
			for _, s := range row.Seats {
				st := m.State(s.SeatID)
				class := "st-" + st.State
				if i, ok := index[st.ChannelID]; ok && st.State == distribution.SeatAllocated {
					class += " " + v.Channels[i].Colour
				}
				switch {
				case st.State == distribution.SeatNotOnSale:
					v.OffSale++
				case st.ChannelID == 0:
					v.General.add(st.State)
				default:
					if i, ok := index[st.ChannelID]; ok {
						v.Channels[i].add(st.State)
					}
				}
				v.Total.add(st.State)
				hr.Seats = append(hr.Seats, hallSeat{ID: s.SeatID, X: s.X, Y: s.Y, Class: class,
					Title: fmt.Sprintf("%s, %s: %s", z.Name, s.Label, stateWords(st, names))})
			}
			hz.Rows = append(hz.Rows, hr)
		}
		v.Zones = append(v.Zones, hz)
	}
	data := pageData{Title: "Hall map: " + ev.Title, Nav: "channels", Data: v}
	if len(v.Problems) > 0 {
		data.Message = "Nothing was changed: correct the form."
	}
	c.render(w, r, status, "hall_map", data)
}

func hallPath(id int64) string { return eventPath(id) + "/map" }

func (c *cabinet) hallMap(w http.ResponseWriter, r *http.Request) {
	ev, ok := c.eventDistribution(w, r)
	if !ok {
		return
	}
	c.hallPage(w, r, http.StatusOK, ev, hallView{})
}

// hallAction allocates the selected seats to a channel (AllocateSeats
// with a selector of seat ids, as ticketctl allocate --seat) or returns
// them to general sale (each channel's Release of its seats), and says
// in words what moved and what stayed.
func (c *cabinet) hallAction(w http.ResponseWriter, r *http.Request) {
	ev, ok := c.eventDistribution(w, r)
	if !ok {
		return
	}
	if !ev.Seated {
		c.notFound(w, r)
		return
	}
	ctx, company := r.Context(), user(r).CompanyID
	text := r.PostFormValue("seats")
	v := hallView{Seats: text}
	v.Channel, _ = strconv.ParseInt(r.PostFormValue("channel"), 10, 64)
	ids := splitList(text)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	switch {
	case len(text) > maxSeatText || len(ids) > distribution.MaxSelectorItems:
		v.Problems = append(v.Problems, fmt.Sprintf("Seats: at most %d at once; allocate in parts.", distribution.MaxSelectorItems))
	case len(ids) == 0:
		v.Problems = append(v.Problems, "Seats: select seats on the map, or type their ids.")
	}
	action := r.PostFormValue("action")
	var line *distribution.ChannelLine
	switch action {
	case "allocate":
		i := slices.IndexFunc(ev.Channels, func(l distribution.ChannelLine) bool { return l.Channel.ID == v.Channel })
		if i < 0 {
			v.Problems = append(v.Problems, "Channel: choose one of your channels.")
		} else {
			line = &ev.Channels[i]
		}
	case "release":
		if r.PostFormValue("confirm") != "yes" {
			v.Problems = append(v.Problems, "Tick the box to confirm: returned seats go back to general sale, for every partner to sell.")
		}
	default:
		v.Problems = append(v.Problems, "Choose Allocate or Return to general sale.")
	}
	if len(v.Problems) > 0 {
		c.hallPage(w, r, http.StatusUnprocessableEntity, ev, v)
		return
	}
	// Where the seats are: a release gives each channel back its own.
	before, err := c.Distribution.HallMap(ctx, company, ev.EventID)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	names := map[int64]string{}
	for _, l := range ev.Channels {
		names[l.Channel.ID] = l.Channel.Name
	}
	if action == "allocate" {
		mv, err := c.Distribution.AllocateSeats(ctx, company, ev.EventID, line.Channel.ID, distribution.Selector{SeatIDs: ids})
		if !c.hallDone(w, r, ev, v, err) {
			return
		}
		c.logDistribution(r, "allocate-map", ev.EventID, line.Channel.ID)
		notice := fmt.Sprintf("%s allocated to %s.", seatCount(len(mv.Moved)), line.Channel.Name)
		if len(mv.Left) > 0 {
			notice += " " + c.stayed(r, ev.EventID, mv.Left, names, line.Channel.ID)
		}
		c.done(w, r, hallPath(ev.EventID), notice)
		return
	}
	// Release: each channel gives back its own of the selected seats.
	byChannel := map[int64][]string{}
	var stayed []string
	for _, id := range ids {
		if _, ok := before.Seats[id]; !ok {
			v.Problems = append(v.Problems, fmt.Sprintf("Seat %s: the event sells no such seat.", id))
			continue
		}
		if ch := before.Seats[id].ChannelID; ch != 0 {
			byChannel[ch] = append(byChannel[ch], id)
		} else {
			stayed = append(stayed, id)
		}
	}
	if len(v.Problems) > 0 {
		c.hallPage(w, r, http.StatusUnprocessableEntity, ev, v)
		return
	}
	channels := make([]int64, 0, len(byChannel))
	for ch := range byChannel {
		channels = append(channels, ch)
	}
	slices.Sort(channels)
	var moved []string
	var from []string
	for _, ch := range channels {
		out, err := c.Distribution.Release(ctx, company, distribution.Release{EventID: ev.EventID, ChannelID: ch, SeatIDs: byChannel[ch]})
		if !c.hallDone(w, r, ev, v, err) {
			return
		}
		c.logDistribution(r, "release-map", ev.EventID, ch)
		moved = append(moved, out.Seats...)
		stayed = append(stayed, without(byChannel[ch], out.Seats)...)
		if len(out.Seats) > 0 {
			from = append(from, fmt.Sprintf("%s: %d", names[ch], len(out.Seats)))
		}
	}
	notice := seatCount(len(moved)) + " returned to general sale"
	if len(from) > 0 {
		notice += " (from " + strings.Join(from, "; ") + ")"
	}
	notice += "."
	if len(stayed) > 0 {
		notice += " " + c.stayed(r, ev.EventID, stayed, names, -1)
	}
	c.done(w, r, hallPath(ev.EventID), notice)
}

func without(all, gone []string) []string {
	out := []string{}
	for _, s := range all {
		if !slices.Contains(gone, s) {
			out = append(out, s)
		}
	}
	return out
}

func seatCount(n int) string {
	if n == 1 {
		return "1 seat"
	}
	return fmt.Sprintf("%d seats", n)
}

// stayed says why seats stayed where they were, from where they are now
// (read after the change: a seat a partner's hold or another organizer
// took meanwhile is said as taken).
func (c *cabinet) stayed(r *http.Request, eventID int64, left []string, names map[int64]string, target int64) string {
	after, err := c.Distribution.HallMap(r.Context(), user(r).CompanyID, eventID)
	if err != nil {
		c.Log.WarnContext(r.Context(), "cabinet hall map after a change", "event_id", eventID, "err", err)
		return fmt.Sprintf("%s stayed where they were (held, sold, or another channel's).", seatCount(len(left)))
	}
	return stayedWords(left, after, names, target)
}

// stayedWords says why seats stayed where they were, by the state they
// were in: sold, held, already the channel's (target), another channel's
// (by name), or general sale's already (a release).
func stayedWords(left []string, before *distribution.HallMap, names map[int64]string, target int64) string {
	kinds := map[string]int{}
	for _, id := range left {
		st := before.State(id)
		switch {
		case st.State == distribution.SeatAdmitted:
			kinds["sold and admitted at the door"]++
		case st.State == distribution.SeatSold:
			kinds["sold"]++
		case st.State == distribution.SeatHeld:
			kinds["held"]++
		case st.ChannelID != 0 && st.ChannelID == target:
			kinds["already "+names[target]+"'s"]++
		case st.ChannelID != 0:
			kinds[names[st.ChannelID]+"'s"]++
		case target == -1:
			kinds["general sale's already"]++
		default:
			// Free in general sale now: taken and given back meanwhile.
			kinds["free in general sale now (taken and given back meanwhile)"]++
		}
	}
	parts := make([]string, 0, len(kinds))
	for k, n := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s stayed where they were: %s.", seatCount(len(left)), strings.Join(parts, ", "))
}

// hallDone answers a refused change on the map page (bad input 422, not
// the company's 404) and reports whether err is nil.
func (c *cabinet) hallDone(w http.ResponseWriter, r *http.Request, ev *distribution.EventDistribution, v hallView, err error) bool {
	var invalid *errs.ValidationError
	switch {
	case err == nil:
		return true
	case errors.As(err, &invalid):
		v.Problems = channelProblems(invalid)
		c.hallPage(w, r, http.StatusUnprocessableEntity, ev, v)
	case errors.Is(err, errs.NotFound):
		c.notFound(w, r)
	default:
		c.fail(w, r, err)
	}
	return false
}

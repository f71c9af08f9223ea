// Package catalogfile reads an organizer's catalog file (cities, venues with
// hall schemes, events with categories and sessions), validates all of it at
// once and turns it into the plan the store upserts by ref.
package catalogfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// File is the catalog file as organizers write it. Every field's doc and
// need tags are its documentation: the cabinet's format page and
// docs/catalog-format.md are generated from them (Fields).
type File struct {
	Cities []City  `json:"cities" need:"optional" doc:"Cities of the venues. A venue may also name a city imported before."`
	Venues []Venue `json:"venues" need:"optional" doc:"Venues with their hall schemes. An event may also name a venue imported before."`
	Events []Event `json:"events" need:"optional" doc:"Events: seated (with a scheme), general admission (with capacities) or scheduled (with sessions)."`
	// Channels come last: older files have none, and an event's
	// allocations name them.
	Channels []Channel `json:"channels" need:"optional" doc:"Sales channels: groups of your partners' applications that sell what an event allocates to them. An allocation may also name a channel made before (in the cabinet, by ticketctl or an earlier file)."`

	src *source // the file's text and scanned values, for error lines
}

type City struct {
	Ref  string `json:"ref" need:"required" doc:"Your id of the city, unique in your catalog: 1-64 letters, digits, '_', '.' or '-'. A record with a ref imported before is updated."`
	Name string `json:"name" need:"required" doc:"The city's name as buyers see it."`
}

type Venue struct {
	Ref      string   `json:"ref" need:"required" doc:"Your id of the venue, unique in your catalog (as a city's ref)."`
	Name     string   `json:"name" need:"required" doc:"The venue's name as buyers see it."`
	City     string   `json:"city" need:"required" doc:"The ref of the venue's city: in this file or imported before."`
	Timezone string   `json:"timezone" need:"required" doc:"The venue's time zone, an IANA name such as Europe/Moscow or Asia/Yekaterinburg: the cabinet and tickets show the venue's event times in it."`
	Schemes  []Scheme `json:"schemes" need:"optional" doc:"Hall schemes (seat maps) of the venue; a seated event names one."`
}

type Scheme struct {
	Ref   string `json:"ref" need:"required" doc:"Your id of the scheme, unique within its venue."`
	Name  string `json:"name" need:"required" doc:"The scheme's name, such as Main hall."`
	Zones []Zone `json:"zones" need:"required" doc:"The scheme's zones (stalls, balcony...), at least one; the first nearer the stage for best-available picks."`
	// Stage and the drawing fields below it are optional: a scheme without
	// them is laid out from its zones and rows (Layout).
	Stage Stage `json:"stage" need:"optional" doc:"The stage as drawn: its outline and caption. Absent: a bar in front of the first zone, without a caption."`
}

// Stage is the scheme's stage, in the drawing's coordinates (seat pitches,
// y growing away from the stage).
type Stage struct {
	Label   string  `json:"label" need:"optional" doc:"The stage's caption as buyers see it, such as Сцена; at most 100 characters. Absent: none."`
	Outline []Point `json:"outline" need:"optional" doc:"The stage's outline, 3 to 200 points [x, y] (a rectangle is 4). Absent: a bar as wide as the first zone, in front of everything drawn."`
}

// Point is a point of the drawing, [x, y] in seat pitches.
type Point []float64

type Zone struct {
	ID   string `json:"id" need:"required" doc:"The zone's id, unique in the scheme: 1-32 letters, digits, '_' or '.'. Seat ids are zone-row-number."`
	Name string `json:"name" need:"required" doc:"The zone's name as buyers see it."`
	Rows []Row  `json:"rows" need:"required" doc:"The zone's rows, at least one; the first nearer the stage."`
	// The drawing fields: all optional.
	Outline  []Point `json:"outline" need:"optional" doc:"The zone's outline as drawn, 3 to 200 points [x, y]. Absent: drawn around its seats."`
	LabelAt  Point   `json:"label_at" need:"optional" doc:"Where the zone's name is drawn, [x, y]. Absent: in front of the zone (on the stage's side)."`
	Rotation float64 `json:"rotation" need:"optional" doc:"Turns the zone's laid-out rows (not seats with x and y) by this many degrees about origin, -360 to 360, clockwise as drawn: a side balcony, a block at an angle. Absent: 0."`
	Origin   Point   `json:"origin" need:"optional" doc:"Where the centre of the zone's first laid-out row goes, [x, y]. Absent: the zone is placed after the zones before it, away from the stage, centred."`
}

type Row struct {
	Row   string   `json:"row" need:"required" doc:"The row's label, unique in the zone: 1-32 letters, digits, '_' or '.'."`
	Seats SeatList `json:"seats" need:"required" doc:"The row's seats: a count N (seats 1 to N, at most 1000) or a list whose items are seat numbers (whole numbers or text) or seat objects."`
	// Labels says at which ends of the row its label is drawn.
	Labels string `json:"labels" need:"optional" doc:"Where the row's label is drawn: both (at both ends), start (before its first seat), end (after its last seat) or none. Absent: both."`
}

// Seat is one seat of a row; X and Y are optional drawing coordinates.
// Rank, optional, places the seat for best-available picks (lower is
// better), in place of the rank computed from its zone, row and place.
type Seat struct {
	Number string   `json:"number" need:"required" doc:"The seat's number, unique in the row: 1-32 letters, digits, '_' or '.'."`
	X      *float64 `json:"x,omitempty" need:"optional" doc:"Where the seat's centre is drawn, across the hall, in seat pitches (neighbouring seats of a row are 1 apart), -1000000 to 1000000. Absent: laid out with its row."`
	Y      *float64 `json:"y,omitempty" need:"optional" doc:"Where the seat's centre is drawn, away from the stage, in seat pitches, -1000000 to 1000000. Absent: laid out with its row."`
	Rank   *int     `json:"rank,omitempty" need:"optional" doc:"Best-available order, 0 to 1000000000, lower is better; absent: by zone, row and closeness to the row's centre."`
}

// SeatList is a row's seats: a count N (seats "1".."N") or a list whose items
// are numbers, strings or {number, x, y} objects.
type SeatList struct {
	Count int
	Seats []Seat
	// IsCount tells which form the file used.
	IsCount bool
}

func (s *SeatList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] != '[' {
		var n int
		if err := json.Unmarshal(b, &n); err != nil {
			return errors.New("seats must be a count or a list of seat numbers")
		}
		s.Count, s.IsCount = n, true
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return errors.New("seats must be a count or a list of seat numbers")
	}
	for i, raw := range items {
		seat, err := parseSeat(raw)
		if err != nil {
			// %v, not %w: a type error inside a seat object carries a path
			// and offset relative to that object, not to the file.
			return fmt.Errorf("seats[%d]: %v", i, err)
		}
		s.Seats = append(s.Seats, seat)
	}
	return nil
}

func parseSeat(raw json.RawMessage) (Seat, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return Seat{Number: s}, err
	case len(raw) > 0 && raw[0] == '{':
		var seat Seat
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err := dec.Decode(&seat)
		return seat, err
	default:
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return Seat{}, errors.New("a seat is a number, a string or {number, x, y, rank}")
		}
		if _, err := strconv.ParseUint(n.String(), 10, 32); err != nil {
			return Seat{}, fmt.Errorf("seat number %s is not a whole number", n)
		}
		return Seat{Number: n.String()}, nil
	}
}

// Numbers lists the row's seats in order.
func (s SeatList) List() []Seat {
	if !s.IsCount {
		return s.Seats
	}
	seats := make([]Seat, 0, max(s.Count, 0))
	for i := 1; i <= s.Count; i++ {
		seats = append(seats, Seat{Number: strconv.Itoa(i)})
	}
	return seats
}

type Event struct {
	Ref        string     `json:"ref" need:"required" doc:"Your id of the event, unique in your catalog."`
	Title      string     `json:"title" need:"required" doc:"The event's title as buyers see it."`
	Slug       string     `json:"slug" need:"required" doc:"The event's web name: lowercase letters and digits separated by '-', such as swan-lake."`
	Status     string     `json:"status" need:"required" doc:"published (on sale), draft (hidden) or archived."`
	StartsAt   time.Time  `json:"starts_at" need:"required" doc:"When the event starts, with its UTC offset, such as 2026-12-01T19:00:00+03:00."`
	Venue      string     `json:"venue" need:"required" doc:"The ref of the event's venue: in this file or imported before."`
	Scheme     string     `json:"scheme" need:"seated events" doc:"The ref of one of the venue's schemes: a seated event. Absent: general admission or scheduled."`
	Fee        Fee        `json:"fee" need:"required" doc:"The service fee on each ticket."`
	Categories []Category `json:"categories" need:"required" doc:"The ticket categories, at least one."`
	Sessions   []Session  `json:"sessions" need:"scheduled events" doc:"Schedule slots (a museum's hours, a tour's departures), each with its own capacity; not with a scheme."`
	// Reentry lets a ticket out and in again at the door (a scan with
	// direction out); absent: false, a ticket is admitted once.
	Reentry bool `json:"reentry" need:"optional" doc:"true: a ticket may leave and enter again at the door. Absent: false, a ticket is admitted once."`
	// Sales is general sale's window; a bound left out stays as it was.
	Sales       SalesWindow  `json:"sales" need:"optional" doc:"General sale's window: when keys of no channel (and channels without their own bound) may sell. Absent: as it was (from publication until the event starts, unless a window was set before); a bound given is set, a bound left out stays."`
	Allocations []Allocation `json:"allocations" need:"optional" doc:"Seats or quantities set aside for sales channels, each with the channel's own window and release. Absent: the import leaves allocations made before as they are."`
}

// SalesWindow is when sales run; a bound absent is none.
type SalesWindow struct {
	StartsAt *time.Time `json:"starts_at" need:"optional" doc:"When sales open, with its UTC offset. Absent: from publication (a channel's: general sale's opening)."`
	EndsAt   *time.Time `json:"ends_at" need:"optional" doc:"When sales close, with its UTC offset; after starts_at. Absent: when the event starts (a channel's: general sale's closing). Nothing sells once the event has started."`
}

// Channel is a sales channel and applications the file puts in it.
type Channel struct {
	Ref          string          `json:"ref" need:"required" doc:"Your id of the channel, unique in your catalog: 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit. A channel with a ref imported before is renamed."`
	Name         string          `json:"name" need:"required" doc:"The channel's name, such as the partner's: 1 to 200 characters."`
	Applications []ChannelMember `json:"applications" need:"optional" doc:"Applications whose keys sell in the channel; each is made if missing and taken out of any other channel. Applications the file does not list stay where they are."`
}

// ChannelMember names an application of the company.
type ChannelMember struct {
	Env  string `json:"env" need:"required" doc:"The application's environment: sandbox or production."`
	Name string `json:"name" need:"required" doc:"The application's name, as a key made for it names it (ticketctl key create --application); the environment's default application is named after it."`
}

// Allocation is what an event sets aside for a channel.
type Allocation struct {
	Channel    string       `json:"channel" need:"required" doc:"The ref of a channel: in this file or made before. At most one allocation per channel in an event."`
	Seats      SeatSelector `json:"seats" need:"seated events" doc:"Seats of a seated event to allocate: whole zones, row ranges and single seats together. Only free seats of general sale move, so importing again moves nothing twice; a held, sold or another channel's seat stays where it is."`
	Quantities []Quantity   `json:"quantities" need:"general admission" doc:"Quantities of general-admission categories (and sessions) to allocate: each sets the channel's quota to that number."`
	Sales      SalesWindow  `json:"sales" need:"optional" doc:"The channel's own window for the event, bound by bound over general sale's (a presale, an earlier stop). Absent: general sale's."`
	ReleaseAt  *time.Time   `json:"release_at" need:"optional" doc:"When the channel's unsold allocation returns to general sale, with its UTC offset. Absent: only by the organizer's hand."`
}

// SeatSelector picks seats of a seated event.
type SeatSelector struct {
	Zones   []string   `json:"zones" need:"optional" doc:"Ids of zones of the event's scheme whose seats to allocate."`
	Rows    []RowRange `json:"rows" need:"optional" doc:"Ranges of rows of a zone: every seat the event sells in them."`
	SeatIDs []string   `json:"seat_ids" need:"optional" doc:"Seat ids (zone-row-number, such as parterre-3-12) of seats the event sells."`
}

// RowRange is rows from to to (inclusive) of a zone.
type RowRange struct {
	Zone string `json:"zone" need:"required" doc:"The zone's id."`
	From string `json:"from" need:"required" doc:"The first row. Rows that are numbers compare as numbers (9 comes before 10), others as text."`
	To   string `json:"to" need:"required" doc:"The last row, not before from."`
}

// Quantity is a channel's quantity of a category (and session).
type Quantity struct {
	Category string `json:"category" need:"required" doc:"The ref of one of the event's categories: a general-admission one, or any of a scheduled event."`
	Session  string `json:"session" need:"scheduled events" doc:"The ref of one of the event's sessions: required for a scheduled event, not allowed otherwise."`
	Quantity int    `json:"quantity" need:"required" doc:"How many tickets the channel sells, 0 to 1000000: no more than general sale has left when imported, no fewer than the channel has sold."`
}

type Fee struct {
	Mode   string `json:"mode" need:"required" doc:"included (the fee is part of the price) or separate (added to the price at checkout)."`
	RateBP int64  `json:"rate_bp" need:"optional" doc:"The fee's rate in basis points of the price, 0 to 10000 (1000 is 10%)."`
	MinFee int64  `json:"min_fee" unit:"minor" need:"optional" doc:"The least fee per ticket."`
}

type Category struct {
	Ref          string              `json:"ref" need:"required" doc:"Your id of the category, unique within the event."`
	Name         string              `json:"name" need:"required" doc:"The category's name as buyers see it, such as Stalls."`
	Price        int64               `json:"price" unit:"minor" need:"required" doc:"The ticket's price, 0 to 10000000000."`
	Capacity     *int                `json:"capacity" need:"general admission" doc:"How many tickets the category sells, 0 to 1000000: required without a scheme or sessions, not allowed with a scheme (its seats are the capacity)."`
	Zones        []string            `json:"zones" need:"seated events" doc:"Ids of the scheme's zones whose seats this category sells."`
	Rows         map[string][]string `json:"rows" need:"seated events" doc:"Rows this category sells, by zone id: {\"balcony\": [\"1\", \"2\"]}. A row here wins over its zone in another category's zones."`
	PriceChanges []PriceChange       `json:"price_changes" need:"optional" doc:"Later prices: from a date or after so many tickets are sold."`
}

type PriceChange struct {
	From      *time.Time `json:"from" need:"one of from, after_sold" doc:"The price applies from this moment, with its UTC offset."`
	AfterSold *int       `json:"after_sold" need:"one of from, after_sold" doc:"The price applies once this many tickets of the category are sold."`
	Price     int64      `json:"price" unit:"minor" need:"required" doc:"The new price."`
}

type Session struct {
	Ref      string    `json:"ref" need:"required" doc:"Your id of the session, unique within the event."`
	StartsAt time.Time `json:"starts_at" need:"required" doc:"When the session starts, with its UTC offset."`
	Capacity int       `json:"capacity" need:"required" doc:"How many tickets the session sells, 1 to 1000000."`
}

// source is a file's text and its scanned values: errors found after
// decoding (a ref nobody defines) learn their line from it.
type source struct {
	data []byte
	root *node
}

// Parse decodes a catalog file strictly: a syntax error (with its line and
// column), and every wrong type, unknown or repeated field (each with its
// line and path) are errors.
func Parse(data []byte) (*File, error) {
	f, errs := parse(data)
	if len(errs) > 0 {
		return nil, errs
	}
	return f, nil
}

// parse decodes what it can: a file with a syntax error is nil, one with
// wrong values is the file without them, and errs lists every problem.
func parse(data []byte) (*File, Errors) {
	root, syn := scan(data)
	if syn != nil {
		line, col := position(data, syn.off)
		return nil, Errors{{Path: "$", Line: line, Column: col, Reason: syn.msg}}
	}
	d := &decoder{data: data}
	f := &File{src: &source{data: data, root: root}}
	if root.kind != '{' {
		d.add("$", root.off, "a catalog file is one JSON object {\"cities\": [...], \"venues\": [...], \"events\": [...]}, not %s", shown(root))
		return nil, d.errs
	}
	d.object(root, reflect.ValueOf(f).Elem(), "$")
	return f, d.errs
}

// line finds the line of a path ("$.events[0].fee.mode") in the file: the
// line of its field name, or of the nearest enclosing value the file has
// (a missing field is reported at its object).
func (s *source) line(path string) int {
	if s == nil || !strings.HasPrefix(path, "$") {
		return 0
	}
	n, off, rest := s.root, s.root.off, path[1:]
	for rest != "" && n != nil {
		switch {
		case rest[0] == '[' && n.kind == '[':
			end := strings.IndexByte(rest, ']')
			i, err := strconv.Atoi(rest[1:max(end, 1)])
			if end < 0 || err != nil || i < 0 || i >= len(n.vals) {
				return lineAt(s.data, off)
			}
			n, off, rest = n.vals[i], n.vals[i].off, rest[end+1:]
		case rest[0] == '.' && n.kind == '{':
			// The longest key that fits: zone ids in rows may hold dots.
			best := -1
			for i, k := range n.keys {
				after := rest[1:]
				if strings.HasPrefix(after, k) && (len(after) == len(k) || after[len(k)] == '.' || after[len(k)] == '[') &&
					(best < 0 || len(k) > len(n.keys[best])) {
					best = i
				}
			}
			if best < 0 {
				return lineAt(s.data, off)
			}
			n, off, rest = n.vals[best], n.keyOffs[best], rest[1+len(n.keys[best]):]
		default:
			return lineAt(s.data, off)
		}
	}
	return lineAt(s.data, off)
}

func lineAt(data []byte, off int) int {
	line, _ := position(data, off)
	return line
}

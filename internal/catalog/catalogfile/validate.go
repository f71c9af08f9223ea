package catalogfile

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/store"
)

// Error is one problem of a catalog file: where (the line, and the column of
// a syntax error; the JSON path) and why, in words an organizer reads.
type Error struct {
	Path   string `json:"path"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Reason string `json:"reason"`
	// refused: the decoder refused the value at Path, so validation's
	// complaints about it (missing, out of range) are not news.
	refused bool
}

// Where is the error's path as the format page names fields
// (events[0].starts_at); "" for the file as a whole.
func (e Error) Where() string {
	return strings.TrimPrefix(strings.TrimPrefix(e.Path, "$"), ".")
}

func (e Error) String() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ", column %d", e.Column)
		}
		b.WriteString(": ")
	}
	if w := e.Where(); w != "" {
		b.WriteString(w + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Errors is every problem found in a file; a file with any is refused whole.
type Errors []Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.String()
	}
	return fmt.Sprintf("catalog file has %d error(s):\n  %s", len(es), strings.Join(lines, "\n  "))
}

// Limits that keep one file's work bounded.
const (
	maxPrice       = 100_000_000_00 // 100 million roubles in kopecks
	maxSeatsPerRow = 1000
	maxSchemeSeats = 100_000
)

var (
	refPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$`)
	slugPattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)
	// Zone ids, rows and seat numbers form seat ids "{zone}-{row}-{number}"
	// and the "<zone>|<seat>" ids of the aggregator, so they avoid both.
	partPattern = regexp.MustCompile(`^[A-Za-z0-9_.]{1,32}$`)
)

type validator struct {
	errs  Errors
	known store.KnownCatalog
	// channels an allocation may name: the file's and the store's.
	channels map[string]bool
}

func (v *validator) add(path, format string, args ...any) {
	v.errs = append(v.errs, Error{Path: path, Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) ref(path, ref string, seen map[string]bool) {
	switch {
	case ref == "":
		v.add(path, "ref is required")
	case !refPattern.MatchString(ref):
		v.add(path, "ref %q must be 1-64 letters, digits, '_', '.' or '-'", ref)
	case seen[ref]:
		v.add(path, "duplicate ref %q", ref)
	}
	seen[ref] = true
}

func (v *validator) required(path, value string) {
	if strings.TrimSpace(value) == "" {
		v.add(path, "is required")
	}
}

// Plan validates the whole file against itself and the company's records
// already in the store, and returns the upsert plan or every error found.
func Plan(f *File, known store.KnownCatalog) (*store.CatalogPlan, error) {
	v := &validator{known: known}
	plan := &store.CatalogPlan{}

	cities := map[string]bool{}
	for i, c := range f.Cities {
		p := fmt.Sprintf("$.cities[%d]", i)
		v.ref(p+".ref", c.Ref, cities)
		v.required(p+".name", c.Name)
		plan.Cities = append(plan.Cities, store.PlanCity{Ref: c.Ref, Name: c.Name})
	}

	// venue ref → scheme ref → seats, from the file and from the store.
	schemes := map[string]map[string][]store.PlanSeat{}
	for ref, s := range known.Venues {
		schemes[ref] = s
	}
	venues := map[string]bool{}
	for i, ven := range f.Venues {
		p := fmt.Sprintf("$.venues[%d]", i)
		v.ref(p+".ref", ven.Ref, venues)
		v.required(p+".name", ven.Name)
		if ven.City == "" {
			v.add(p+".city", "is required")
		} else if !cities[ven.City] && !known.Cities[ven.City] {
			v.add(p+".city", "unknown city %q", ven.City)
		}
		if _, err := time.LoadLocation(ven.Timezone); err != nil || ven.Timezone == "" {
			v.add(p+".timezone", "unknown time zone %q", ven.Timezone)
		}
		pv := store.PlanVenue{Ref: ven.Ref, Name: ven.Name, CityRef: ven.City, Timezone: ven.Timezone}
		vs := map[string][]store.PlanSeat{}
		seenSchemes := map[string]bool{}
		for j, s := range ven.Schemes {
			ps := v.scheme(fmt.Sprintf("%s.schemes[%d]", p, j), s, seenSchemes)
			vs[s.Ref] = ps.Seats
			pv.Schemes = append(pv.Schemes, ps)
		}
		schemes[ven.Ref] = vs
		plan.Venues = append(plan.Venues, pv)
	}

	v.channels = map[string]bool{}
	for ref := range known.Channels {
		v.channels[ref] = true
	}
	plan.Channels = v.channelList(f.Channels)

	events := map[string]bool{}
	for i, e := range f.Events {
		plan.Events = append(plan.Events, v.event(fmt.Sprintf("$.events[%d]", i), e, events, schemes))
	}
	if len(v.errs) > 0 {
		for i := range v.errs {
			if v.errs[i].Line == 0 {
				v.errs[i].Line = f.src.line(v.errs[i].Path)
			}
		}
		sortByLine(v.errs)
		return nil, v.errs
	}
	return plan, nil
}

// Check reads and validates a file against the company's records already
// in the store: the upsert plan, or every problem of the file (decoding and
// validation both; a value the decoder refused is not reported again as
// missing).
func Check(data []byte, known store.KnownCatalog) (*store.CatalogPlan, error) {
	f, errs := parse(data)
	if f == nil {
		return nil, errs
	}
	plan, err := Plan(f, known)
	if len(errs) == 0 {
		return plan, err
	}
	var invalid Errors
	if errors.As(err, &invalid) {
		for _, e := range invalid {
			if !under(e.Path, errs) {
				errs = append(errs, e)
			}
		}
	}
	sortByLine(errs)
	return nil, errs
}

// under tells whether path is at or inside a path the decoder refused.
func under(path string, refused Errors) bool {
	for _, r := range refused {
		if r.refused && (path == r.Path || strings.HasPrefix(path, r.Path+".") || strings.HasPrefix(path, r.Path+"[")) {
			return true
		}
	}
	return false
}

// SeatRank is a seat's best-available rank when the file gives none: zones
// and rows in the file's order (the first nearer the stage), then seats
// nearer the row's centre. pos is 1-based in the row of n seats.
func SeatRank(zone, row, pos, n int) int {
	centre := 2*pos - (n + 1)
	if centre < 0 {
		centre = -centre
	}
	return zone*1_000_000 + row*1_000 + centre
}

// maxRank bounds a rank the file gives.
const maxRank = 1_000_000_000

func (v *validator) scheme(p string, s Scheme, seen map[string]bool) store.PlanScheme {
	errsBefore := len(v.errs)
	v.ref(p+".ref", s.Ref, seen)
	v.required(p+".name", s.Name)
	if len(s.Zones) == 0 {
		v.add(p+".zones", "a scheme needs at least one zone")
	}
	ps := store.PlanScheme{Ref: s.Ref, Name: s.Name}
	draft := Draft{Stage: v.stage(p+".stage", s.Stage)}
	zones := map[string]bool{}
	for zi, z := range s.Zones {
		zp := fmt.Sprintf("%s.zones[%d]", p, zi)
		switch {
		case !partPattern.MatchString(z.ID):
			v.add(zp+".id", "zone id %q must be 1-32 letters, digits, '_' or '.'", z.ID)
		case zones[z.ID]:
			v.add(zp+".id", "duplicate zone id %q", z.ID)
		}
		zones[z.ID] = true
		v.required(zp+".name", z.Name)
		dz := DraftZone{ID: z.ID, Name: z.Name, Outline: v.polygon(zp+".outline", z.Outline),
			LabelAt: v.point(zp+".label_at", z.LabelAt), Origin: v.point(zp+".origin", z.Origin), Rotation: z.Rotation}
		if math.IsNaN(z.Rotation) || z.Rotation < -360 || z.Rotation > 360 {
			v.add(zp+".rotation", "rotation is -360 to 360 degrees, not %v", z.Rotation)
		}
		rows := map[string]bool{}
		for ri, r := range z.Rows {
			rp := fmt.Sprintf("%s.rows[%d]", zp, ri)
			switch {
			case !partPattern.MatchString(r.Row):
				v.add(rp+".row", "row %q must be 1-32 letters, digits, '_' or '.'", r.Row)
			case rows[r.Row]:
				v.add(rp+".row", "duplicate row %q", r.Row)
			}
			rows[r.Row] = true
			switch r.Labels {
			case "", "both", "start", "end", "none":
			default:
				v.add(rp+".labels", "labels is both, start, end or none, not %q", r.Labels)
			}
			list := r.Seats.List()
			if (r.Seats.IsCount && (r.Seats.Count < 1 || r.Seats.Count > maxSeatsPerRow)) || len(list) == 0 || len(list) > maxSeatsPerRow {
				v.add(rp+".seats", "a row has 1 to %d seats", maxSeatsPerRow)
				continue
			}
			dr := DraftRow{Row: r.Row, Labels: r.Labels, Seats: make([]DraftSeat, 0, len(list))}
			numbers := map[string]bool{}
			for si, seat := range list {
				sp := fmt.Sprintf("%s.seats[%d]", rp, si)
				switch {
				case !partPattern.MatchString(seat.Number):
					v.add(sp, "seat number %q must be 1-32 letters, digits, '_' or '.'", seat.Number)
				case numbers[seat.Number]:
					v.add(sp, "duplicate seat number %q", seat.Number)
				}
				numbers[seat.Number] = true
				v.coordinate(sp+".x", seat.X)
				v.coordinate(sp+".y", seat.Y)
				id := z.ID + "-" + r.Row + "-" + seat.Number
				label := fmt.Sprintf("%s, row %s, seat %s", z.Name, r.Row, seat.Number)
				rank := SeatRank(zi, ri, si+1, len(list))
				if seat.Rank != nil {
					if *seat.Rank < 0 || *seat.Rank > maxRank {
						v.add(sp+".rank", "rank must be 0..%d", maxRank)
					}
					rank = *seat.Rank
				}
				ps.Seats = append(ps.Seats, store.PlanSeat{SeatID: id, ZoneID: z.ID, Row: r.Row, Number: seat.Number, Label: label,
					Pos: si + 1, Rank: rank})
				dr.Seats = append(dr.Seats, DraftSeat{SeatID: id, Number: seat.Number, Label: label, X: seat.X, Y: seat.Y, Rank: rank})
			}
			dz.Rows = append(dz.Rows, dr)
		}
		if len(z.Rows) == 0 {
			v.add(zp+".rows", "a zone needs at least one row")
		}
		draft.Zones = append(draft.Zones, dz)
	}
	if len(ps.Seats) > maxSchemeSeats {
		v.add(p, "a scheme has at most %d seats, this one %d", maxSchemeSeats, len(ps.Seats))
	}
	if len(v.errs) > errsBefore {
		return ps // refused: no need to draw it
	}
	geometry, etag, err := Encode(draft)
	if err != nil {
		v.add(p, "%v", err)
	}
	ps.Geometry, ps.ETag = geometry, etag
	return ps
}

// Limits of the drawing fields.
const (
	maxCoordinate    = 1_000_000
	maxPolygonPoints = 200
	maxStageLabel    = 100
)

// coordinate checks one number of the drawing.
func (v *validator) coordinate(p string, c *float64) {
	if c != nil && !(math.Abs(*c) <= maxCoordinate) {
		v.add(p, "a coordinate is -%d to %d, not %v", maxCoordinate, maxCoordinate, *c)
	}
}

// point checks a point [x, y]; nil when absent or wrong.
func (v *validator) point(p string, pt Point) *XY {
	if pt == nil {
		return nil
	}
	if len(pt) != 2 {
		v.add(p, "a point is [x, y], two numbers, not %d", len(pt))
		return nil
	}
	before := len(v.errs)
	v.coordinate(p+"[0]", &pt[0])
	v.coordinate(p+"[1]", &pt[1])
	if len(v.errs) > before {
		return nil
	}
	return &XY{pt[0], pt[1]}
}

// polygon checks an outline of 3 to 200 points.
func (v *validator) polygon(p string, pts []Point) []XY {
	if pts == nil {
		return nil
	}
	if len(pts) < 3 || len(pts) > maxPolygonPoints {
		v.add(p, "an outline has 3 to %d points [x, y], not %d", maxPolygonPoints, len(pts))
		return nil
	}
	out := make([]XY, 0, len(pts))
	for i, pt := range pts {
		if xy := v.point(fmt.Sprintf("%s[%d]", p, i), pt); xy != nil {
			out = append(out, *xy)
		}
	}
	return out
}

// stage checks the scheme's stage: its caption and outline.
func (v *validator) stage(p string, s Stage) DraftStage {
	if n := utf8.RuneCountInString(s.Label); n > maxStageLabel || strings.TrimSpace(s.Label) != s.Label {
		v.add(p+".label", "a stage's label is at most %d characters, without surrounding spaces", maxStageLabel)
	}
	return DraftStage{Label: s.Label, Outline: v.polygon(p+".outline", s.Outline)}
}

func (v *validator) event(p string, e Event, seen map[string]bool, schemes map[string]map[string][]store.PlanSeat) store.PlanEvent {
	v.ref(p+".ref", e.Ref, seen)
	v.required(p+".title", e.Title)
	if !slugPattern.MatchString(e.Slug) {
		v.add(p+".slug", "slug %q must be lowercase letters and digits separated by '-'", e.Slug)
	}
	if !slices.Contains(states.EventStatuses, states.EventStatus(e.Status)) {
		v.add(p+".status", "status must be published, draft or archived, not %q", e.Status)
	}
	if e.StartsAt.IsZero() {
		v.add(p+".starts_at", "is required (ISO 8601 with offset)")
	}
	switch e.Fee.Mode {
	case string(pricing.Included), string(pricing.Separate):
	default:
		v.add(p+".fee.mode", "mode must be included or separate, not %q", e.Fee.Mode)
	}
	if e.Fee.RateBP < 0 || e.Fee.RateBP > 10000 {
		v.add(p+".fee.rate_bp", "rate_bp must be 0..10000 (basis points)")
	}
	if e.Fee.MinFee < 0 || e.Fee.MinFee > maxPrice {
		v.add(p+".fee.min_fee", "min_fee must be 0..%d", maxPrice)
	}
	pe := store.PlanEvent{
		Ref: e.Ref, Title: e.Title, Slug: e.Slug, Status: states.EventStatus(e.Status), StartsAt: e.StartsAt,
		VenueRef: e.Venue, SchemeRef: e.Scheme,
		Fee:          pricing.Fee{Mode: pricing.Mode(e.Fee.Mode), RateBP: e.Fee.RateBP, MinFee: e.Fee.MinFee},
		AllowReentry: e.Reentry,
	}

	var seats []store.PlanSeat
	venueSchemes, venueOK := schemes[e.Venue]
	switch {
	case e.Venue == "":
		v.add(p+".venue", "is required")
	case !venueOK:
		v.add(p+".venue", "unknown venue %q", e.Venue)
	case e.Scheme != "":
		var ok bool
		if seats, ok = venueSchemes[e.Scheme]; !ok {
			v.add(p+".scheme", "venue %q has no scheme %q", e.Venue, e.Scheme)
		}
	}
	hasScheme := e.Scheme != ""
	if hasScheme && len(e.Sessions) > 0 {
		v.add(p+".sessions", "an event with a scheme cannot have sessions")
	}
	if len(e.Categories) == 0 {
		v.add(p+".categories", "an event needs at least one ticket category")
	}

	// Which category sells each seat: a row binding is more specific than a
	// zone binding and wins over it; two bindings of the same kind clash.
	zoneOf := map[string]string{}
	rowOf := map[string]string{}
	zonesInScheme, rowsInScheme := map[string]bool{}, map[string]bool{}
	for _, s := range seats {
		zonesInScheme[s.ZoneID] = true
		rowsInScheme[s.ZoneID+"\x00"+s.Row] = true
	}
	cats := map[string]bool{}
	for ci, c := range e.Categories {
		cp := fmt.Sprintf("%s.categories[%d]", p, ci)
		v.ref(cp+".ref", c.Ref, cats)
		v.required(cp+".name", c.Name)
		if c.Price < 0 || c.Price > maxPrice {
			v.add(cp+".price", "price must be 0..%d kopecks", maxPrice)
		}
		for pi, pc := range c.PriceChanges {
			pp := fmt.Sprintf("%s.price_changes[%d]", cp, pi)
			if (pc.From == nil) == (pc.AfterSold == nil) {
				v.add(pp, "give exactly one of from or after_sold")
			}
			if pc.AfterSold != nil && *pc.AfterSold < 0 {
				v.add(pp+".after_sold", "must not be negative")
			}
			if pc.Price < 0 || pc.Price > maxPrice {
				v.add(pp+".price", "price must be 0..%d kopecks", maxPrice)
			}
		}
		if hasScheme {
			if c.Capacity != nil {
				v.add(cp+".capacity", "a category of an event with a scheme sells seats, not capacity")
			}
			if len(c.Zones) == 0 && len(c.Rows) == 0 {
				v.add(cp, "a category of an event with a scheme binds zones or rows")
			}
			for zi, z := range c.Zones {
				switch {
				case !zonesInScheme[z] && seats != nil:
					v.add(fmt.Sprintf("%s.zones[%d]", cp, zi), "scheme has no zone %q", z)
				case zoneOf[z] != "":
					v.add(fmt.Sprintf("%s.zones[%d]", cp, zi), "zone %q is already bound to category %q", z, zoneOf[z])
				default:
					zoneOf[z] = c.Ref
				}
			}
			for _, z := range slices.Sorted(maps.Keys(c.Rows)) {
				for ri, r := range c.Rows[z] {
					key := z + "\x00" + r
					switch {
					case !rowsInScheme[key] && seats != nil:
						v.add(fmt.Sprintf("%s.rows.%s[%d]", cp, z, ri), "scheme has no row %q in zone %q", r, z)
					case rowOf[key] != "":
						v.add(fmt.Sprintf("%s.rows.%s[%d]", cp, z, ri), "row %q of zone %q is already bound to category %q", r, z, rowOf[key])
					default:
						rowOf[key] = c.Ref
					}
				}
			}
		} else {
			if len(c.Zones) > 0 || len(c.Rows) > 0 {
				v.add(cp, "zones and rows need an event with a scheme")
			}
			if len(e.Sessions) == 0 && c.Capacity == nil {
				v.add(cp+".capacity", "a category of an event without a scheme or sessions needs a capacity")
			}
			if c.Capacity != nil && (*c.Capacity < 0 || *c.Capacity > 1_000_000) {
				v.add(cp+".capacity", "capacity must be 0..1000000")
			}
		}
		changes := make([]pricing.PriceChange, len(c.PriceChanges))
		for i, pc := range c.PriceChanges {
			changes[i] = pricing.PriceChange{From: pc.From, AfterSold: pc.AfterSold, Price: pc.Price}
		}
		pe.Categories = append(pe.Categories, store.PlanCategory{
			Ref: c.Ref, Name: c.Name, BasePrice: c.Price, Capacity: c.Capacity,
			Zones: c.Zones, Rows: c.Rows, PriceChanges: changes,
		})
	}
	for _, s := range seats {
		cat := rowOf[s.ZoneID+"\x00"+s.Row]
		if cat == "" {
			cat = zoneOf[s.ZoneID]
		}
		if cat != "" {
			pe.Seats = append(pe.Seats, store.PlanEventSeat{PlanSeat: s, CategoryRef: cat})
		}
	}

	pe.SalesStart, pe.SalesEnd = e.Sales.StartsAt, e.Sales.EndsAt
	v.window(p+".sales", e.Sales)
	pe.Allocations = v.allocations(p, e, pe.Seats, seats != nil)

	sessions := map[string]bool{}
	for si, s := range e.Sessions {
		sp := fmt.Sprintf("%s.sessions[%d]", p, si)
		v.ref(sp+".ref", s.Ref, sessions)
		if s.StartsAt.IsZero() {
			v.add(sp+".starts_at", "is required (ISO 8601 with offset)")
		}
		if s.Capacity < 1 || s.Capacity > 1_000_000 {
			v.add(sp+".capacity", "capacity must be 1..1000000")
		}
		pe.Sessions = append(pe.Sessions, store.PlanSession{Ref: s.Ref, StartsAt: s.StartsAt, Capacity: s.Capacity})
	}
	return pe
}

// channelPattern is a channel's ref.
var channelPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Limits of the distribution fields.
const (
	maxChannelName   = 200
	maxAppName       = 200
	maxSelectorItems = 10_000
	maxQuantity      = 1_000_000
)

func (v *validator) channelList(chs []Channel) []store.PlanChannel {
	var out []store.PlanChannel
	seen := map[string]bool{}
	member := map[string]string{} // "env\x00name" → channel ref
	for i, c := range chs {
		p := fmt.Sprintf("$.channels[%d]", i)
		switch {
		case c.Ref == "":
			v.add(p+".ref", "ref is required")
		case !channelPattern.MatchString(c.Ref):
			v.add(p+".ref", "ref %q must be 1-64 lowercase letters, digits, '_' or '-', starting with a letter or digit", c.Ref)
		case seen[c.Ref]:
			v.add(p+".ref", "duplicate ref %q", c.Ref)
		}
		seen[c.Ref], v.channels[c.Ref] = true, true
		if n := utf8.RuneCountInString(c.Name); strings.TrimSpace(c.Name) == "" || n > maxChannelName {
			v.add(p+".name", "is required, at most %d characters", maxChannelName)
		}
		pc := store.PlanChannel{Ref: c.Ref, Name: c.Name}
		for j, a := range c.Applications {
			ap := fmt.Sprintf("%s.applications[%d]", p, j)
			if a.Env != "sandbox" && a.Env != "production" {
				v.add(ap+".env", "env must be sandbox or production, not %q", a.Env)
			}
			if a.Name == "" || strings.TrimSpace(a.Name) != a.Name || utf8.RuneCountInString(a.Name) > maxAppName {
				v.add(ap+".name", "an application's name is 1 to %d characters, without surrounding spaces", maxAppName)
			}
			key := a.Env + "\x00" + a.Name
			if other, ok := member[key]; ok {
				v.add(ap, "%s application %q is already listed in channel %q: an application sells in one channel", a.Env, a.Name, other)
			}
			member[key] = c.Ref
			pc.Applications = append(pc.Applications, store.PlanApplication{Environment: a.Env, Name: a.Name})
		}
		out = append(out, pc)
	}
	return out
}

// window checks a sales window's bounds come in order.
func (v *validator) window(p string, w SalesWindow) {
	if w.StartsAt != nil && w.EndsAt != nil && !w.StartsAt.Before(*w.EndsAt) {
		v.add(p+".ends_at", "must come after starts_at")
	}
}

// allocations checks an event's allocations against its channels, seats,
// categories and sessions, and resolves their seat selections.
func (v *validator) allocations(p string, e Event, seats []store.PlanEventSeat, seatsKnown bool) []store.PlanAllocation {
	hasScheme := e.Scheme != ""
	cats := map[string]bool{}
	for _, c := range e.Categories {
		cats[c.Ref] = true
	}
	sessions := map[string]bool{}
	for _, s := range e.Sessions {
		sessions[s.Ref] = true
	}
	var out []store.PlanAllocation
	seen := map[string]bool{}
	for i, a := range e.Allocations {
		ap := fmt.Sprintf("%s.allocations[%d]", p, i)
		switch {
		case a.Channel == "":
			v.add(ap+".channel", "is required")
		case !v.channels[a.Channel]:
			v.add(ap+".channel", "unknown channel %q: list it in channels or make it first", a.Channel)
		case seen[a.Channel]:
			v.add(ap+".channel", "channel %q has an allocation in this event already", a.Channel)
		}
		seen[a.Channel] = true
		v.window(ap+".sales", a.Sales)
		pa := store.PlanAllocation{ChannelRef: a.Channel, SalesStart: a.Sales.StartsAt, SalesEnd: a.Sales.EndsAt, ReleaseAt: a.ReleaseAt}
		sel := a.Seats
		if len(sel.Zones)+len(sel.Rows)+len(sel.SeatIDs) > 0 {
			switch {
			case !hasScheme:
				v.add(ap+".seats", "an event without a scheme has no seats: allocate quantities")
			case seatsKnown:
				pa.SeatIDs = v.resolve(ap+".seats", seats, sel)
			}
		}
		picked := map[string]bool{}
		for qi, q := range a.Quantities {
			qp := fmt.Sprintf("%s.quantities[%d]", ap, qi)
			if hasScheme {
				v.add(qp, "an event with a scheme allocates seats, not quantities")
				continue
			}
			if !cats[q.Category] {
				v.add(qp+".category", "the event has no category %q", q.Category)
			}
			switch {
			case len(e.Sessions) > 0 && q.Session == "":
				v.add(qp+".session", "a scheduled event allocates quantities of a session: name one")
			case len(e.Sessions) > 0 && !sessions[q.Session]:
				v.add(qp+".session", "the event has no session %q", q.Session)
			case len(e.Sessions) == 0 && q.Session != "":
				v.add(qp+".session", "the event has no sessions")
			}
			if q.Quantity < 0 || q.Quantity > maxQuantity {
				v.add(qp+".quantity", "quantity must be 0..%d", maxQuantity)
			}
			key := q.Category + "\x00" + q.Session
			if picked[key] {
				v.add(qp, "category %q is allocated twice here", q.Category)
			}
			picked[key] = true
			pa.Quantities = append(pa.Quantities, store.PlanQuantity{CategoryRef: q.Category, SessionRef: q.Session, Quantity: q.Quantity})
		}
		out = append(out, pa)
	}
	return out
}

// resolve lists the event's seats a selection picks, in seat order
// (distribution.Resolve's rule, over the file's seats).
func (v *validator) resolve(p string, seats []store.PlanEventSeat, sel SeatSelector) []string {
	if n := len(sel.Zones) + len(sel.Rows) + len(sel.SeatIDs); n > maxSelectorItems {
		v.add(p, "at most %d zones, row ranges and seats together, not %d", maxSelectorItems, n)
		return nil
	}
	zones, ids := map[string]bool{}, map[string]bool{}
	for _, s := range seats {
		zones[s.ZoneID], ids[s.SeatID] = true, true
	}
	picked := map[string]bool{}
	for i, z := range sel.Zones {
		if !zones[z] {
			v.add(fmt.Sprintf("%s.zones[%d]", p, i), "the event sells no seats in a zone %q", z)
		}
		for _, s := range seats {
			if s.ZoneID == z {
				picked[s.SeatID] = true
			}
		}
	}
	for i, r := range sel.Rows {
		rp := fmt.Sprintf("%s.rows[%d]", p, i)
		switch {
		case !zones[r.Zone]:
			v.add(rp+".zone", "the event sells no seats in a zone %q", r.Zone)
			continue
		case r.From == "" || r.To == "":
			v.add(rp, "from and to are required")
			continue
		case compareRows(r.From, r.To) > 0:
			v.add(rp+".to", "row %q comes before from, %q", r.To, r.From)
			continue
		}
		found := false
		for _, s := range seats {
			if s.ZoneID == r.Zone && compareRows(s.Row, r.From) >= 0 && compareRows(s.Row, r.To) <= 0 {
				picked[s.SeatID], found = true, true
			}
		}
		if !found {
			v.add(rp, "the event sells no seats in rows %s to %s of zone %q", r.From, r.To, r.Zone)
		}
	}
	for i, id := range sel.SeatIDs {
		if !ids[id] {
			v.add(fmt.Sprintf("%s.seat_ids[%d]", p, i), "the event sells no seat %q", id)
		}
		picked[id] = true
	}
	out := make([]string, 0, len(picked))
	for id := range picked {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// compareRows orders row labels: numbers as numbers, else as text (as
// distribution.Resolve does).
func compareRows(a, b string) int {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

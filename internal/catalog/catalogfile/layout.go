package catalogfile

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// The drawing's coordinate system (docs/catalog-format.md, docs/api.md):
// one unit is the seat pitch (neighbouring seats of a laid-out row are 1
// apart); x grows to the right as the hall is drawn with the stage at the
// top, y grows away from the stage. A point is a seat's centre.

// Geometry is the scheme as GET /v1/events/{id}/scheme serves it: every
// seat with its place, and what else a drawing of the hall needs.
type Geometry struct {
	Bounds Bounds         `json:"bounds" doc:"The drawing's extent (an SVG viewBox: x y width height): it holds every seat, outline, the stage and the labels with a margin."`
	Stage  GeometryStage  `json:"stage" doc:"The stage: the catalog's, or a bar in front of the first zone."`
	Zones  []GeometryZone `json:"zones"`
}

// Bounds is a rectangle of the drawing.
type Bounds struct {
	X      float64 `json:"x" doc:"Left edge."`
	Y      float64 `json:"y" doc:"Top edge (the stage's side)."`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// XY is a point of the drawing: [x, y].
type XY [2]float64

type GeometryStage struct {
	Label   string `json:"label" doc:"The stage's caption; empty: none."`
	Outline []XY   `json:"outline" doc:"The stage's outline, a closed polygon of [x, y] points."`
	LabelAt XY     `json:"label_at" doc:"Where the caption's centre goes."`
}

type GeometryZone struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Rotation float64       `json:"rotation" doc:"Degrees the zone's laid-out rows are turned, clockwise as drawn (0: rows run left to right): turn seat shapes and row labels by it."`
	Outline  []XY          `json:"outline" doc:"The zone's outline, a closed polygon of [x, y] points: the catalog's, or around the zone's seats."`
	LabelAt  XY            `json:"label_at" doc:"Where the centre of the zone's name goes."`
	Rows     []GeometryRow `json:"rows"`
}

type GeometryRow struct {
	Row         string         `json:"row"`
	LabelPoints []XY           `json:"label_points" doc:"Where the row's label (row) is drawn, centred on each point: at both ends of the row, one end, or none."`
	Seats       []GeometrySeat `json:"seats"`
}

type GeometrySeat struct {
	SeatID string `json:"seat_id"`
	Number string `json:"number"`
	Label  string `json:"label"`
	// X and Y are always present; the schema keeps them optional, as they
	// were, so the Go SDK's *float64 fields stay source compatible.
	X    float64 `json:"x" required:"false" doc:"The seat's centre, across the hall: the catalog's, or laid out. Always present."`
	Y    float64 `json:"y" required:"false" doc:"The seat's centre, away from the stage: the catalog's, or laid out. Always present."`
	Rank int     `json:"rank" doc:"Best-available order, lower is better: the file's rank, or zone, row and closeness to the row's centre."`
}

// Draft is what Layout starts from: the scheme's zones, rows and seats
// with what the catalog says of their drawing. Its json names are those of
// the geometry stored before drawings (zones, rows and seats with optional
// x and y), so a scheme stored then is laid out as its file is now.
type Draft struct {
	Stage DraftStage  `json:"-"`
	Zones []DraftZone `json:"zones"`
}

// DraftStage is the catalog's stage: its caption and outline (none: the
// layout draws a bar).
type DraftStage struct {
	Label   string
	Outline []XY
}

type DraftZone struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Rows     []DraftRow `json:"rows"`
	Outline  []XY       `json:"-"`
	LabelAt  *XY        `json:"-"`
	Rotation float64    `json:"-"`
	Origin   *XY        `json:"-"`
}

type DraftRow struct {
	Row    string      `json:"row"`
	Seats  []DraftSeat `json:"seats"`
	Labels string      `json:"-"` // both ("" too), start, end or none
}

type DraftSeat struct {
	SeatID string   `json:"seat_id"`
	Number string   `json:"number"`
	Label  string   `json:"label"`
	X      *float64 `json:"x,omitempty"`
	Y      *float64 `json:"y,omitempty"`
	Rank   int      `json:"rank"`
}

// The layout's measures, in seat pitches.
const (
	rowGap       = 1.2  // between the rows of a zone
	zoneGap      = 3.0  // between the last row of a zone and the first of the next: room for outlines and a name
	seatHalf     = 0.75 // an outline passes this far from a seat's centre
	rowLabelGap  = 1.0  // a row's label from its end seat
	zoneLabelGap = 0.8  // a zone's name above its outline
	stageGap     = 1.5  // between the stage and what is drawn in front of it
	stageDepth   = 2.0
	margin       = 1.0 // around everything, in the bounds
	labelHalf    = 1.0 // room a label takes about its point
)

// Layout gives every seat of the scheme its place and computes what its
// drawing needs. Seats keep the coordinates the catalog gives; a zone's
// other seats are laid out in a block, rows 1.2 apart and centred, seats 1
// apart, turned by the zone's rotation, then placed at its origin or after
// the zones laid out before it (away from the stage, centred on x = 0).
// It is deterministic: the same draft gives the same geometry, byte for byte.
func Layout(d Draft) Geometry {
	g := Geometry{Zones: make([]GeometryZone, len(d.Zones))}
	cursor := 0.0 // where the next stacked zone's top goes
	for zi, z := range d.Zones {
		sin, cos := math.Sincos(z.Rotation * math.Pi / 180)
		turn := func(x, y float64) (float64, float64) { return x*cos - y*sin, x*sin + y*cos }
		// Block coordinates (turned, before the zone is placed) of the
		// seats that lack a coordinate, and their extent.
		minX, maxX, minY, maxY := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
		local := make([][]XY, len(z.Rows))
		for ri, r := range z.Rows {
			local[ri] = make([]XY, len(r.Seats))
			n := len(r.Seats)
			for si, s := range r.Seats {
				x, y := turn(float64(si)-float64(n-1)/2, float64(ri)*rowGap)
				local[ri][si] = XY{x, y}
				if s.X == nil || s.Y == nil {
					minX, maxX, minY, maxY = min(minX, x), max(maxX, x), min(minY, y), max(maxY, y)
				}
			}
		}
		var off XY
		switch {
		case z.Origin != nil:
			off = *z.Origin
		case !math.IsInf(minX, 1):
			off = XY{-(minX + maxX) / 2, cursor - minY}
			cursor = off[1] + maxY + zoneGap
		}
		gz := GeometryZone{ID: z.ID, Name: z.Name, Rotation: z.Rotation, Rows: make([]GeometryRow, len(z.Rows))}
		var corners []XY // of the seats' squares, for the outline
		h1, h2 := turn(seatHalf, seatHalf)
		h3, h4 := turn(seatHalf, -seatHalf)
		for ri, r := range z.Rows {
			gr := GeometryRow{Row: r.Row, Seats: make([]GeometrySeat, len(r.Seats))}
			given := false
			for si, s := range r.Seats {
				x, y := round(off[0]+local[ri][si][0]), round(off[1]+local[ri][si][1])
				if s.X != nil {
					x, given = *s.X, true
				}
				if s.Y != nil {
					y, given = *s.Y, true
				}
				gr.Seats[si] = GeometrySeat{SeatID: s.SeatID, Number: s.Number, Label: s.Label, X: x, Y: y, Rank: s.Rank}
			}
			for si, s := range gr.Seats {
				// A laid-out row is straight: its end seats' squares
				// hold the others'.
				if given || si == 0 || si == len(gr.Seats)-1 {
					corners = append(corners, XY{s.X + h1, s.Y + h2}, XY{s.X - h1, s.Y - h2}, XY{s.X + h3, s.Y + h4}, XY{s.X - h3, s.Y - h4})
				}
			}
			gr.LabelPoints = rowLabels(gr.Seats, r.Labels, XY{cos, sin})
			gz.Rows[ri] = gr
		}
		if len(z.Outline) > 0 {
			gz.Outline = z.Outline
		} else {
			gz.Outline = hull(corners)
		}
		if z.LabelAt != nil {
			gz.LabelAt = *z.LabelAt
		} else {
			b := box(gz.Outline)
			gz.LabelAt = XY{round((b.X0 + b.X1) / 2), round(b.Y0 - zoneLabelGap)}
		}
		g.Zones[zi] = gz
	}
	g.Stage = stage(d.Stage, g.Zones)
	g.Bounds = bounds(g)
	return g
}

// rowLabels puts a row's label a pitch beyond its end seats, along the row
// (along axis for a row of one seat).
func rowLabels(seats []GeometrySeat, labels string, axis XY) []XY {
	out := []XY{}
	if labels == "none" || len(seats) == 0 {
		return out
	}
	first, last := seats[0], seats[len(seats)-1]
	dx, dy := last.X-first.X, last.Y-first.Y
	if l := math.Hypot(dx, dy); l > 1e-9 {
		dx, dy = dx/l, dy/l
	} else {
		dx, dy = axis[0], axis[1]
	}
	if labels != "end" {
		out = append(out, XY{round(first.X - dx*rowLabelGap), round(first.Y - dy*rowLabelGap)})
	}
	if labels != "start" {
		out = append(out, XY{round(last.X + dx*rowLabelGap), round(last.Y + dy*rowLabelGap)})
	}
	return out
}

// stage is the catalog's stage, or a bar as wide as the first zone in
// front of everything drawn.
func stage(s DraftStage, zones []GeometryZone) GeometryStage {
	out := GeometryStage{Label: s.Label, Outline: s.Outline}
	if len(out.Outline) == 0 {
		top := math.Inf(1)
		for _, z := range zones {
			top = min(top, box(z.Outline).Y0, z.LabelAt[1]-labelHalf)
		}
		first := rect{X0: -5, X1: 5}
		if len(zones) > 0 && len(zones[0].Outline) > 0 {
			first = box(zones[0].Outline)
		}
		if math.IsInf(top, 1) {
			top = 0
		}
		y1 := round(top - stageGap)
		y0 := round(y1 - stageDepth)
		x0, x1 := round(first.X0), round(first.X1)
		out.Outline = []XY{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	}
	b := box(out.Outline)
	out.LabelAt = XY{round((b.X0 + b.X1) / 2), round((b.Y0 + b.Y1) / 2)}
	return out
}

// bounds holds every seat, outline and label, with a margin.
func bounds(g Geometry) Bounds {
	b := box(g.Stage.Outline)
	b.add(g.Stage.LabelAt, labelHalf)
	for _, z := range g.Zones {
		for _, p := range z.Outline {
			b.add(p, 0)
		}
		b.add(z.LabelAt, labelHalf)
		for _, r := range z.Rows {
			for _, p := range r.LabelPoints {
				b.add(p, labelHalf)
			}
			for _, s := range r.Seats {
				b.add(XY{s.X, s.Y}, 0.5)
			}
		}
	}
	x0, y0 := math.Floor((b.X0-margin)*100)/100, math.Floor((b.Y0-margin)*100)/100
	x1, y1 := math.Ceil((b.X1+margin)*100)/100, math.Ceil((b.Y1+margin)*100)/100
	return Bounds{X: x0 + 0, Y: y0 + 0, Width: round(x1 - x0), Height: round(y1 - y0)}
}

type rect struct{ X0, Y0, X1, Y1 float64 }

func (r *rect) add(p XY, pad float64) {
	r.X0, r.X1 = min(r.X0, p[0]-pad), max(r.X1, p[0]+pad)
	r.Y0, r.Y1 = min(r.Y0, p[1]-pad), max(r.Y1, p[1]+pad)
}

func box(ps []XY) rect {
	r := rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range ps {
		r.add(p, 0)
	}
	return r
}

// hull is the convex hull of ps (Andrew's monotone chain), clockwise as
// drawn (y down), rounded; nil for no points.
func hull(ps []XY) []XY {
	if len(ps) == 0 {
		return nil
	}
	for i := range ps {
		ps[i] = XY{round(ps[i][0]), round(ps[i][1])}
	}
	slices.SortFunc(ps, func(a, b XY) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	ps = slices.Compact(ps)
	if len(ps) < 3 {
		return ps
	}
	cross := func(o, a, b XY) float64 { return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0]) }
	out := make([]XY, 0, 2*len(ps))
	for _, p := range ps {
		for len(out) >= 2 && cross(out[len(out)-2], out[len(out)-1], p) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, p)
	}
	lower := len(out) + 1
	for i := len(ps) - 2; i >= 0; i-- {
		p := ps[i]
		for len(out) >= lower && cross(out[len(out)-2], out[len(out)-1], p) <= 0 {
			out = out[:len(out)-1]
		}
		out = append(out, p)
	}
	return out[:len(out)-1]
}

// round keeps a computed coordinate to a hundredth of a pitch: finer than
// any screen shows, and a third of the bytes of a float's full digits.
func round(v float64) float64 {
	return math.Round(v*100)/100 + 0 // + 0: no -0 in the JSON
}

// Encode lays the draft out and encodes it as /scheme serves it, with the
// strong ETag of those bytes.
func Encode(d Draft) (geometry []byte, etag string, err error) {
	geometry, err = json.Marshal(Layout(d))
	if err != nil {
		return nil, "", fmt.Errorf("encode geometry: %w", err)
	}
	sum := sha256.Sum256(geometry)
	return geometry, hex.EncodeToString(sum[:16]), nil
}

// Relayout lays out a geometry stored before schemes were drawn (zones,
// rows and seats with optional x and y, without bounds) as an import of
// its file lays it out now: the same bytes and ETag.
func Relayout(stored []byte) (geometry []byte, etag string, err error) {
	var d Draft
	if err := json.Unmarshal(stored, &d); err != nil {
		return nil, "", fmt.Errorf("decode stored geometry: %w", err)
	}
	return Encode(d)
}

// HasDrawing tells a geometry laid out at import from one stored before:
// only the former has bounds. A seat's label holding the text cannot fool
// it, as a quote inside JSON text is escaped.
func HasDrawing(stored []byte) bool {
	return bytes.Contains(stored, []byte(`"bounds":`)) || bytes.Contains(stored, []byte(`"bounds" :`))
}

package catalogfile_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
)

// hall is a draft of zones × rows × seats, laid out by the service.
func hall(zones, rows, seats int) catalogfile.Draft {
	var d catalogfile.Draft
	for z := range zones {
		dz := catalogfile.DraftZone{ID: fmt.Sprintf("z%d", z), Name: fmt.Sprintf("Зона %d", z)}
		for r := range rows {
			dr := catalogfile.DraftRow{Row: fmt.Sprint(r + 1)}
			for s := range seats {
				id := fmt.Sprintf("z%d-%d-%d", z, r+1, s+1)
				dr.Seats = append(dr.Seats, catalogfile.DraftSeat{SeatID: id, Number: fmt.Sprint(s + 1),
					Label: fmt.Sprintf("Зона %d, row %d, seat %d", z, r+1, s+1), Rank: catalogfile.SeatRank(z, r, s+1, seats)})
			}
			dz.Rows = append(dz.Rows, dr)
		}
		d.Zones = append(d.Zones, dz)
	}
	return d
}

func seats(g catalogfile.Geometry) []catalogfile.GeometrySeat {
	var out []catalogfile.GeometrySeat
	for _, z := range g.Zones {
		for _, r := range z.Rows {
			out = append(out, r.Seats...)
		}
	}
	return out
}

// noOverlap: no two seats' centres closer than a pitch (less rounding).
func noOverlap(t *testing.T, g catalogfile.Geometry) {
	t.Helper()
	all := seats(g)
	slices.SortFunc(all, func(a, b catalogfile.GeometrySeat) int {
		if a.X != b.X {
			return int(math.Copysign(1, a.X-b.X))
		}
		return strings.Compare(a.SeatID, b.SeatID)
	})
	for i, a := range all {
		for _, b := range all[i+1:] {
			if b.X-a.X >= 0.98 {
				break
			}
			if d := math.Hypot(a.X-b.X, a.Y-b.Y); d < 0.98 {
				t.Fatalf("%s (%v, %v) and %s (%v, %v) are %.3f apart", a.SeatID, a.X, a.Y, b.SeatID, b.X, b.Y, d)
			}
		}
	}
}

// inBounds: the bounds hold every seat, outline point, label and the stage.
func inBounds(t *testing.T, g catalogfile.Geometry) {
	t.Helper()
	b := g.Bounds
	in := func(what string, p catalogfile.XY) {
		if p[0] < b.X || p[0] > b.X+b.Width || p[1] < b.Y || p[1] > b.Y+b.Height {
			t.Errorf("%s %v is outside the bounds %+v", what, p, b)
		}
	}
	for _, p := range g.Stage.Outline {
		in("the stage", p)
	}
	in("the stage's label", g.Stage.LabelAt)
	for _, z := range g.Zones {
		if len(z.Outline) < 3 {
			t.Errorf("zone %s has an outline of %d points", z.ID, len(z.Outline))
		}
		for _, p := range z.Outline {
			in("zone "+z.ID+"'s outline", p)
		}
		in("zone "+z.ID+"'s label", z.LabelAt)
		for _, r := range z.Rows {
			for _, p := range r.LabelPoints {
				in("a row label", p)
			}
			for _, s := range r.Seats {
				in(s.SeatID, catalogfile.XY{s.X, s.Y})
				if !insidePolygon(z.Outline, s.X, s.Y) {
					t.Errorf("%s (%v, %v) is outside its zone's outline", s.SeatID, s.X, s.Y)
				}
			}
		}
	}
}

// insidePolygon: a convex polygon (either winding) holds the point.
func insidePolygon(poly []catalogfile.XY, x, y float64) bool {
	sign := 0.0
	for i := range poly {
		a, b := poly[i], poly[(i+1)%len(poly)]
		c := (b[0]-a[0])*(y-a[1]) - (b[1]-a[1])*(x-a[0])
		if c != 0 {
			if sign != 0 && math.Signbit(c) != math.Signbit(sign) {
				return false
			}
			sign = c
		}
	}
	return true
}

func TestLayoutOfAHallWithoutPositions(t *testing.T) {
	d := hall(3, 5, 11)
	d.Zones[2].Rows[4].Seats = d.Zones[2].Rows[4].Seats[:4] // a short last row
	g := catalogfile.Layout(d)
	noOverlap(t, g)
	inBounds(t, g)
	// Zones stack away from the stage; rows are centred, 1.2 apart.
	first := g.Zones[0].Rows[0].Seats
	if first[0].X != -5 || first[10].X != 5 || first[5].X != 0 || first[0].Y != 0 || g.Zones[0].Rows[1].Seats[0].Y != 1.2 {
		t.Fatalf("first row: %+v, second row y %v", first, g.Zones[0].Rows[1].Seats[0].Y)
	}
	if g.Zones[1].Rows[0].Seats[0].Y <= g.Zones[0].Rows[4].Seats[0].Y+2 {
		t.Fatalf("the second zone is not behind the first: %v", g.Zones[1].Rows[0].Seats[0].Y)
	}
	if short := g.Zones[2].Rows[4].Seats; short[0].X != -1.5 || short[3].X != 1.5 {
		t.Fatalf("a short row is not centred: %+v", short)
	}
	// The default stage is in front of (above) everything else.
	stage := g.Stage.Outline
	for _, p := range stage {
		if p[1] >= g.Zones[0].LabelAt[1] {
			t.Fatalf("the stage %v is not in front of the first zone's label %v", stage, g.Zones[0].LabelAt)
		}
	}
	// Row labels at both ends, a pitch beyond the end seats.
	if lp := g.Zones[0].Rows[0].LabelPoints; len(lp) != 2 || lp[0] != (catalogfile.XY{-6, 0}) || lp[1] != (catalogfile.XY{6, 0}) {
		t.Fatalf("row label points: %v", lp)
	}
}

func TestLayoutKeepsGivenPositions(t *testing.T) {
	d := hall(2, 2, 4)
	x, y := 100.125, -3.5
	d.Zones[1].Rows[0].Seats[2].X, d.Zones[1].Rows[0].Seats[2].Y = &x, &y
	onlyX := 7.0
	d.Zones[0].Rows[1].Seats[0].X = &onlyX
	g := catalogfile.Layout(d)
	if s := g.Zones[1].Rows[0].Seats[2]; s.X != x || s.Y != y {
		t.Fatalf("a seat with x and y moved: %+v", s)
	}
	if s := g.Zones[0].Rows[1].Seats[0]; s.X != 7 || s.Y != 1.2 {
		t.Fatalf("a seat with only x: %+v (y is laid out)", s)
	}
	inBounds(t, g)
}

func TestLayoutRotatesABlock(t *testing.T) {
	d := hall(1, 2, 5)
	d.Zones[0].Rotation = 90
	d.Zones[0].Origin = &catalogfile.XY{10, 20}
	g := catalogfile.Layout(d)
	row := g.Zones[0].Rows[0].Seats
	// Turned a quarter clockwise as drawn: the row runs down (y grows)
	// through the origin; the second row is to its left.
	if row[0].X != 10 || row[0].Y != 18 || row[2].X != 10 || row[2].Y != 20 || row[4].Y != 22 {
		t.Fatalf("first row turned: %+v", row)
	}
	if s := g.Zones[0].Rows[1].Seats[2]; s.X != 8.8 || s.Y != 20 {
		t.Fatalf("second row's centre: %+v", s)
	}
	if g.Zones[0].Rotation != 90 {
		t.Fatalf("rotation served: %v", g.Zones[0].Rotation)
	}
	noOverlap(t, g)
	inBounds(t, g)
	// A stacked zone turned by an odd angle stays clear of the others.
	d = hall(4, 6, 20)
	d.Zones[1].Rotation, d.Zones[3].Rotation = 33, -150
	g = catalogfile.Layout(d)
	noOverlap(t, g)
	inBounds(t, g)
}

func TestLayoutIsDeterministic(t *testing.T) {
	d := hall(4, 10, 25)
	d.Zones[2].Rotation = 17.5
	a, _, err := catalogfile.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b, _, _ := catalogfile.Encode(d)
		if !bytes.Equal(a, b) {
			t.Fatal("the same draft encodes differently")
		}
	}
}

// The 10,000-seat hall: laid out without overlaps, and what /scheme
// costs on the wire (go test -v -run TestSchemeSize).
func TestSchemeSize(t *testing.T) {
	d := hall(10, 40, 25)
	g := catalogfile.Layout(d)
	noOverlap(t, g)
	inBounds(t, g)
	after, _, err := catalogfile.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	before, err := json.Marshal(d) // the geometry as served before drawings
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 seats: before %d bytes (%d gzipped), after %d bytes (%d gzipped)",
		len(before), gzipped(before), len(after), gzipped(after))
}

func gzipped(b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Len()
}

func BenchmarkLayout10000Seats(b *testing.B) {
	d := hall(10, 40, 25)
	b.ReportAllocs()
	for b.Loop() {
		catalogfile.Layout(d)
	}
}

func BenchmarkEncode10000Seats(b *testing.B) {
	d := hall(10, 40, 25)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := catalogfile.Encode(d); err != nil {
			b.Fatal(err)
		}
	}
}

// oldPlan is what a catalog file gave before drawings: its seats, and
// its schemes' geometry as then stored (testdata/*.golden.json).
type oldPlan struct {
	Seats    [][]json.RawMessage
	Geometry []json.RawMessage
}

// An old file imports as before: the same seats, ids, labels, places and
// ranks; and its stored geometry, laid out on read, is byte for byte what
// the import gives now.
func TestOldFilesImportAsBefore(t *testing.T) {
	for name, data := range map[string][]byte{
		"example-before-drawing": mustRead(t, "testdata/example-before-drawing.json"),
		// The demo as it was, without the stage it has now.
		"demo-before-drawing": bytes.Replace(catalogfile.Demo(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			[]byte(`"stage": {"label": "Stage"}, `), nil, 1),
	} {
		var want oldPlan
		if err := json.Unmarshal(mustRead(t, "testdata/"+name+".golden.json"), &want); err != nil {
			t.Fatal(err)
		}
		plan, err := catalogfile.Check(data, noKnown())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		i := 0
		for _, v := range plan.Venues {
			for _, s := range v.Schemes {
				got, _ := json.Marshal(s.Seats)
				wantSeats, _ := json.Marshal(want.Seats[i])
				if !bytes.Equal(got, wantSeats) {
					t.Errorf("%s: scheme %s's seats changed:\n%s\nwant\n%s", name, s.Ref, got, wantSeats)
				}
				relaid, etag, err := catalogfile.Relayout(want.Geometry[i])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(relaid, s.Geometry) || etag != s.ETag {
					t.Errorf("%s: the stored geometry laid out on read differs from the import's:\n%s\n%s", name, relaid, s.Geometry)
				}
				var g catalogfile.Geometry
				if err := json.Unmarshal(s.Geometry, &g); err != nil {
					t.Fatal(err)
				}
				inBounds(t, g)
				i++
			}
		}
		if i != len(want.Geometry) {
			t.Errorf("%s: %d schemes, want %d", name, i, len(want.Geometry))
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

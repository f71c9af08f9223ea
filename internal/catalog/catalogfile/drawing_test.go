package catalogfile_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
)

// drawnHall is a catalog whose scheme carries every drawing field, with
// Cyrillic names and captions.
const drawnHall = `{
  "cities": [{"ref": "ekb", "name": "Екатеринбург"}],
  "venues": [{"ref": "opera", "name": "Оперный театр", "city": "ekb", "timezone": "Asia/Yekaterinburg",
    "schemes": [{"ref": "main", "name": "Большой зал",
      "stage": {"label": "Сцена", "outline": [[-10, -6], [10, -6], [8, -3], [-8, -3]]},
      "zones": [
        {"id": "parter", "name": "Партер", "label_at": [0, -1.5], "rows": [
          {"row": "1", "seats": 20, "labels": "both"}, {"row": "2", "seats": 20, "labels": "start"}, {"row": "3", "seats": 18, "labels": "none"}]},
        {"id": "amfi", "name": "Амфитеатр", "outline": [[-12, 4.5], [12, 4.5], [12, 6.5], [-12, 6.5]], "rows": [
          {"row": "1", "seats": 22, "labels": "end"}]},
        {"id": "lozha_l", "name": "Ложа левая", "rotation": 90, "origin": [-16, 0], "rows": [
          {"row": "1", "seats": 4}, {"row": "2", "seats": 4}]},
        {"id": "lozha_r", "name": "Ложа правая", "rows": [
          {"row": "1", "seats": [{"number": "1", "x": 16, "y": 0}, {"number": "2", "x": 16, "y": 1.5}]}]}
      ]}]}],
  "events": []
}`

func TestDrawingFieldsAreServed(t *testing.T) {
	plan, err := catalogfile.Check([]byte(drawnHall), noKnown())
	if err != nil {
		t.Fatal(err)
	}
	s := plan.Venues[0].Schemes[0]
	var g catalogfile.Geometry
	if err := json.Unmarshal(s.Geometry, &g); err != nil {
		t.Fatal(err)
	}
	if g.Stage.Label != "Сцена" || len(g.Stage.Outline) != 4 || g.Stage.Outline[2] != (catalogfile.XY{8, -3}) || g.Stage.LabelAt != (catalogfile.XY{0, -4.5}) {
		t.Fatalf("stage: %+v", g.Stage)
	}
	z := g.Zones
	if z[0].LabelAt != (catalogfile.XY{0, -1.5}) || z[0].Name != "Партер" {
		t.Fatalf("zone label: %+v", z[0].LabelAt)
	}
	if len(z[0].Rows[0].LabelPoints) != 2 || len(z[0].Rows[1].LabelPoints) != 1 || len(z[0].Rows[2].LabelPoints) != 0 ||
		z[0].Rows[1].LabelPoints[0] != (catalogfile.XY{-10.5, 1.2}) {
		t.Fatalf("row labels: %+v %+v %+v", z[0].Rows[0].LabelPoints, z[0].Rows[1].LabelPoints, z[0].Rows[2].LabelPoints)
	}
	if lp := z[1].Rows[0].LabelPoints; len(lp) != 1 || lp[0][0] <= z[1].Rows[0].Seats[21].X {
		t.Fatalf("an end label is after the last seat: %v", lp)
	}
	if len(z[1].Outline) != 4 || z[1].Outline[0] != (catalogfile.XY{-12, 4.5}) {
		t.Fatalf("a given outline: %v", z[1].Outline)
	}
	// The left box is turned a quarter about its origin: its first row
	// runs down through (-16, 0).
	if r := z[2].Rows[0].Seats; z[2].Rotation != 90 || r[0].X != -16 || r[0].Y != -1.5 || r[3].Y != 1.5 {
		t.Fatalf("the turned box: %v %+v", z[2].Rotation, r)
	}
	if r := z[3].Rows[0].Seats; r[0].X != 16 || r[1].Y != 1.5 {
		t.Fatalf("given seats: %+v", r)
	}
	inBounds(t, g)
}

func TestDrawingFieldsAreChecked(t *testing.T) {
	tests := []struct{ name, from, to, want string }{
		{"stage outline of two points", `"outline": [[-10, -6], [10, -6], [8, -3], [-8, -3]]}`, `"outline": [[-10, -6], [10, -6]]}`,
			`line 5: venues[0].schemes[0].stage.outline: an outline has 3 to 200 points [x, y], not 2`},
		{"stage label too long", `"label": "Сцена"`, `"label": "` + strings.Repeat("Сцена", 21) + `"`,
			`line 5: venues[0].schemes[0].stage.label: a stage's label is at most 100 characters, without surrounding spaces`},
		{"a point of three numbers", `"label_at": [0, -1.5]`, `"label_at": [0, -1.5, 2]`,
			`line 7: venues[0].schemes[0].zones[0].label_at: a point is [x, y], two numbers, not 3`},
		{"a point of text", `"label_at": [0, -1.5]`, `"label_at": ["0", -1.5]`,
			`line 7: venues[0].schemes[0].zones[0].label_at[0]: expected a number, not the text "0"`},
		{"a huge coordinate", `[12, 6.5], [-12, 6.5]]`, `[12, 6.5], [-12, 1e7]]`,
			`line 9: venues[0].schemes[0].zones[1].outline[3][1]: a coordinate is -1000000 to 1000000, not 1e+07`},
		{"a number beyond float", `"origin": [-16, 0]`, `"origin": [-16, 1e999]`,
			`line 11: venues[0].schemes[0].zones[2].origin[1]: expected a number, not 1e999`},
		{"rotation", `"rotation": 90`, `"rotation": 400`,
			`line 11: venues[0].schemes[0].zones[2].rotation: rotation is -360 to 360 degrees, not 400`},
		{"rotation as text", `"rotation": 90`, `"rotation": "90deg"`,
			`line 11: venues[0].schemes[0].zones[2].rotation: expected a number, not the text "90deg"`},
		{"row labels", `"labels": "end"`, `"labels": "left"`,
			`line 10: venues[0].schemes[0].zones[1].rows[0].labels: labels is both, start, end or none, not "left"`},
		{"seat x", `"x": 16, "y": 1.5`, `"x": 16, "y": -2e6`,
			`line 14: venues[0].schemes[0].zones[3].rows[0].seats[1].y: a coordinate is -1000000 to 1000000, not -2e+06`},
		{"outline of 201 points", `"outline": [[-12, 4.5], [12, 4.5], [12, 6.5], [-12, 6.5]]`, `"outline": [` + strings.Repeat(`[1, 2], `, 200) + `[1, 2]]`,
			`line 9: venues[0].schemes[0].zones[1].outline: an outline has 3 to 200 points [x, y], not 201`},
		{"unknown stage field", `"label": "Сцена",`, `"label": "Сцена", "width": 10,`,
			`line 5: venues[0].schemes[0].stage: unknown field "width"; a stage has: label, outline`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(drawnHall, tt.from) {
				t.Fatalf("the hall lacks %s", tt.from)
			}
			_, err := catalogfile.Check([]byte(strings.Replace(drawnHall, tt.from, tt.to, 1)), noKnown())
			var errs catalogfile.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want catalogfile.Errors, got %v", err)
			}
			if len(errs) != 1 || errs[0].String() != tt.want {
				t.Fatalf("want\n  %s\ngot\n  %v", tt.want, err)
			}
		})
	}
}

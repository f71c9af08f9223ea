package report

import "testing"

func TestCSVCellsAreNotFormulas(t *testing.T) {
	for in, want := range map[string]string{"Swan Lake": "Swan Lake", "=HYPERLINK(1)": "'=HYPERLINK(1)", "+7": "'+7", "-x": "'-x", "@a": "'@a", "": ""} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}

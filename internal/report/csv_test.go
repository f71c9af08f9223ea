package report

import "testing"

func TestCSVCellsAreNotFormulas(t *testing.T) {
	for in, want := range map[string]string{"Swan Lake": "Swan Lake", "=HYPERLINK(1)": "'=HYPERLINK(1)", "+7": "'+7", "-x": "'-x", "@a": "'@a", "": ""} {
		if got := cell(in); got != want {
			t.Errorf("cell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnitsHaveTwoDecimals(t *testing.T) {
	for in, want := range map[int64]string{0: "0.00", 5: "0.05", 50: "0.50", 100: "1.00", 123456: "1234.56", -5: "-0.05", -123401: "-1234.01",
		9_223_372_036_854_775_807: "92233720368547758.07"} {
		if got := Units(in); got != want {
			t.Errorf("Units(%d) = %q, want %q", in, got, want)
		}
	}
}

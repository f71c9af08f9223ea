package checkin_test

import (
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/checkin"
)

// Arrivals have a bar for every bin from the first to the last, empty
// ones included, and keep only the last bins of a long day.
func TestFillBins(t *testing.T) {
	at := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	bin := checkin.ArrivalBin
	got, cut := checkin.FillBins([]checkin.Arrivals{{Start: at, Admitted: 3}, {Start: at.Add(3 * bin), Admitted: 5}}, bin, 144)
	if cut || len(got) != 4 || got[0].Admitted != 3 || got[1].Admitted != 0 || got[2].Admitted != 0 || got[3].Admitted != 5 ||
		!got[3].Start.Equal(at.Add(3*bin)) {
		t.Fatalf("filled: %+v cut %v", got, cut)
	}
	got, cut = checkin.FillBins([]checkin.Arrivals{{Start: at, Admitted: 1}, {Start: at.Add(9 * bin), Admitted: 2}}, bin, 4)
	if !cut || len(got) != 4 || !got[0].Start.Equal(at.Add(6*bin)) || got[3].Admitted != 2 {
		t.Fatalf("cut to 4: %+v cut %v", got, cut)
	}
	if got, cut := checkin.FillBins(nil, bin, 4); got != nil || cut {
		t.Fatalf("no arrivals: %+v", got)
	}
}

package holds

import (
	"slices"
	"testing"
)

// TestPickingSeatsForgetOnlyTheirOwn: a pick's seats stay in flight until
// its own transaction ends, whatever other picks of the event (one that
// found nothing among them) come and go meanwhile; forgetting twice
// changes nothing.
func TestPickingSeatsForgetOnlyTheirOwn(t *testing.T) {
	p := newPickingSeats()
	const ev = 7
	none := p.add(ev, nil) // a pick that found nothing
	a := p.add(ev, []string{"a-1-1", "a-1-2"})
	a()
	b := p.add(ev, []string{"a-1-3"})
	none()
	a()
	if got := p.inFlight(ev); !slices.Equal(got, []string{"a-1-3"}) {
		t.Fatalf("in flight: %v, want b's seat", got)
	}
	if !p.busy(ev)("a-1-3") || p.busy(ev)("a-1-1") {
		t.Fatal("busy does not follow the picks in flight")
	}
	c := p.add(ev, []string{"a-1-3"}) // taken by two picks (one failing) at once
	b()
	if !p.busy(ev)("a-1-3") {
		t.Fatal("a seat two picks hold left flight with the first")
	}
	c()
	if got := p.inFlight(ev); len(got) != 0 || len(p.events) != 0 {
		t.Fatalf("after every pick ended: %v, %d events", got, len(p.events))
	}
}

package distribution

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

// Seat states as the organizer's hall map names them. A seat is in exactly
// one: admitted before sold, sold before held, held before its channel.
const (
	SeatFree      = "free"      // general sale's, free: every key sells it
	SeatAllocated = "allocated" // a channel's, free: its keys sell it
	SeatHeld      = "held"      // in a hold or an unpaid order
	SeatSold      = "sold"      // paid, not yet at the door
	SeatAdmitted  = "admitted"  // its ticket was let in at the door
	SeatNotOnSale = "off"       // drawn in the hall, not sold for the event
)

// SeatState is one seat's state on the hall map and its channel (0:
// general sale) — the channel of an allocated seat, or the one a held or
// sold seat belongs to.
type SeatState struct {
	State     string
	ChannelID int64
}

// HallMap is an event's hall as drawn (the scheme's geometry, as /scheme
// serves it) with every seat's state now.
type HallMap struct {
	Geometry catalogfile.Geometry
	Seats    map[string]SeatState
}

// State is the seat's state (not on sale: a seat of the hall the event
// does not sell).
func (m *HallMap) State(seatID string) SeatState {
	if st, ok := m.Seats[seatID]; ok {
		return st
	}
	return SeatState{State: SeatNotOnSale}
}

// HallMap reads the company's seated event's hall and the state of every
// seat: the geometry, and the seats in one statement.
func (s *Service) HallMap(ctx context.Context, companyID, eventID int64) (*HallMap, error) {
	e, err := store.GetEvent(ctx, s.db, companyID, eventID)
	if err != nil {
		return nil, err
	}
	if e.SchemeID == nil {
		return nil, fmt.Errorf("hall of event %d: %w", eventID, errs.NoScheme)
	}
	geometry, _, err := store.GetSchemeGeometry(ctx, s.db, *e.SchemeID)
	if err != nil {
		return nil, err
	}
	if !catalogfile.HasDrawing(geometry) {
		// Stored before schemes were drawn: laid out as /scheme lays it out.
		if geometry, _, err = catalogfile.Relayout(geometry); err != nil {
			return nil, err
		}
	}
	m := &HallMap{}
	if err := json.Unmarshal(geometry, &m.Geometry); err != nil {
		return nil, fmt.Errorf("decode the hall of event %d: %w", eventID, err)
	}
	seats, err := store.EventSeatStates(ctx, s.db, eventID)
	if err != nil {
		return nil, err
	}
	m.Seats = make(map[string]SeatState, len(seats))
	for _, st := range seats {
		state := SeatFree
		switch {
		case st.Admitted:
			state = SeatAdmitted
		case st.State == "sold":
			state = SeatSold
		case st.State == "held":
			state = SeatHeld
		case st.ChannelID != 0:
			state = SeatAllocated
		}
		m.Seats[st.SeatID] = SeatState{State: state, ChannelID: st.ChannelID}
	}
	return m, nil
}

// Package catalogfile reads an organizer's catalog file (cities, venues with
// hall schemes, events with categories and sessions), validates all of it at
// once and turns it into the plan the store upserts by ref.
package catalogfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// File is the catalog file as organizers write it.
type File struct {
	Cities []City  `json:"cities"`
	Venues []Venue `json:"venues"`
	Events []Event `json:"events"`
}

type City struct {
	Ref  string `json:"ref"`
	Name string `json:"name"`
}

type Venue struct {
	Ref      string   `json:"ref"`
	Name     string   `json:"name"`
	City     string   `json:"city"`
	Timezone string   `json:"timezone"`
	Schemes  []Scheme `json:"schemes"`
}

type Scheme struct {
	Ref   string `json:"ref"`
	Name  string `json:"name"`
	Zones []Zone `json:"zones"`
}

type Zone struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Rows []Row  `json:"rows"`
}

type Row struct {
	Row   string   `json:"row"`
	Seats SeatList `json:"seats"`
}

// Seat is one seat of a row; X and Y are optional drawing coordinates.
// Rank, optional, places the seat for best-available picks (lower is
// better), in place of the rank computed from its zone, row and place.
type Seat struct {
	Number string   `json:"number"`
	X      *float64 `json:"x,omitempty"`
	Y      *float64 `json:"y,omitempty"`
	Rank   *int     `json:"rank,omitempty"`
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
	Ref        string     `json:"ref"`
	Title      string     `json:"title"`
	Slug       string     `json:"slug"`
	Status     string     `json:"status"`
	StartsAt   time.Time  `json:"starts_at"`
	Venue      string     `json:"venue"`
	Scheme     string     `json:"scheme"`
	Fee        Fee        `json:"fee"`
	Categories []Category `json:"categories"`
	Sessions   []Session  `json:"sessions"`
	// Reentry lets a ticket out and in again at the door (a scan with
	// direction out); absent: false, a ticket is admitted once.
	Reentry bool `json:"reentry"`
}

type Fee struct {
	Mode   string `json:"mode"`
	RateBP int64  `json:"rate_bp"`
	MinFee int64  `json:"min_fee"`
}

type Category struct {
	Ref          string              `json:"ref"`
	Name         string              `json:"name"`
	Price        int64               `json:"price"`
	Capacity     *int                `json:"capacity"`
	Zones        []string            `json:"zones"`
	Rows         map[string][]string `json:"rows"`
	PriceChanges []PriceChange       `json:"price_changes"`
}

type PriceChange struct {
	From      *time.Time `json:"from"`
	AfterSold *int       `json:"after_sold"`
	Price     int64      `json:"price"`
}

type Session struct {
	Ref      string    `json:"ref"`
	StartsAt time.Time `json:"starts_at"`
	Capacity int       `json:"capacity"`
}

// Parse decodes a catalog file strictly: unknown fields and trailing data are
// errors, reported with the line and column where decoding stopped.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, Errors{decodeError(data, dec, err)}
	}
	// Anything but JSON whitespace after the object is trailing data (dec.More
	// alone misses a stray ']' or '}').
	if rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, Errors{{Path: "$", Line: lineOf(data, int64(len(data)-len(rest))), Reason: "unexpected data after the catalog object"}}
	}
	return &f, nil
}

func decodeError(data []byte, dec *json.Decoder, err error) Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return Error{Path: "$", Line: lineOf(data, syn.Offset), Reason: "invalid JSON: " + syn.Error()}
	case errors.As(err, &typ):
		path := "$"
		if typ.Field != "" {
			path = "$." + typ.Field
		}
		return Error{Path: path, Line: lineOf(data, typ.Offset), Reason: fmt.Sprintf("must be %s, not %s", typ.Type, typ.Value)}
	default:
		return Error{Path: "$", Line: lineOf(data, dec.InputOffset()), Reason: err.Error()}
	}
}

func lineOf(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

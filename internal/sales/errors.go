package sales

import (
	"errors"
	"fmt"
)

// SeatRef names a seat as partners do.
type SeatRef struct {
	ZoneID string `json:"zone_id" minLength:"1" maxLength:"32"`
	SeatID string `json:"seat_id" minLength:"1" maxLength:"100"`
}

// SeatTakenError: some requested seats are held or sold by someone else.
type SeatTakenError struct {
	Seats []SeatRef
}

func (e *SeatTakenError) Error() string { return fmt.Sprintf("%d seat(s) taken", len(e.Seats)) }

// FieldError is one problem of a request field.
type FieldError struct {
	Location string
	Message  string
	Value    any
}

// ValidationError lists every problem of a request that reached the service.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		msgs[i] = f.Location + ": " + f.Message
	}
	return fmt.Sprintf("invalid request: %v", msgs)
}

func (e *ValidationError) add(location, message string, value any) {
	e.Fields = append(e.Fields, FieldError{Location: location, Message: message, Value: value})
}

func (e *ValidationError) orNil() error {
	if e == nil || len(e.Fields) == 0 {
		return nil
	}
	return e
}

// ErrUnavailable: a backing service failed and nothing was changed.
var ErrUnavailable = errors.New("service temporarily unavailable")

// ErrIncomplete: a backing service failed after the request changed
// something (so "nothing was changed" would be false); a retry with the
// same Idempotency-Key finds and finishes what it began.
var ErrIncomplete = errors.New("request incomplete: retry it")

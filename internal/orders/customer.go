package orders

import (
	"net/mail"
	"regexp"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// The buyer's bounds, as the API's schema states them (Customer's tags);
// Check applies them wherever an order is made.
const (
	MaxEmailLength = 254
	MaxNameLength  = 100
	// PhonePattern is the schema's pattern of a phone.
	PhonePattern = `^\+?[0-9][0-9 ()\-]{5,24}$`
)

var phoneRx = regexp.MustCompile(PhonePattern)

// Check adds to verr what is wrong with the buyer, at locations under prefix
// (body.customer). The e-mail must be one plain address (the schema's
// RFC 5322 check also takes "Anna <anna@example.com>" or a comment, which
// the tickets e-mail would then be sent to as written); the names one line
// each. The phone may be empty (an aggregator's buyer has none): the
// schema requires it where the partner API does.
func (c Customer) Check(prefix string, verr *errs.ValidationError) {
	if a, err := mail.ParseAddress(c.Email); err != nil || a.Name != "" || a.Address != c.Email || len(c.Email) > MaxEmailLength {
		verr.Add(prefix+".email", "must be one plain e-mail address such as anna@example.com, at most 254 bytes", c.Email)
	}
	verr.Line(prefix+".first_name", c.FirstName, 1, MaxNameLength)
	verr.Line(prefix+".last_name", c.LastName, 1, MaxNameLength)
	if c.Phone != "" && !phoneRx.MatchString(c.Phone) {
		verr.Add(prefix+".phone", "must be a phone number in international format, e.g. +7 999 123-45-67", c.Phone)
	}
}

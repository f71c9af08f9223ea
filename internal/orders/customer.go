package orders

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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

// Trimmed is the buyer without spaces around the e-mail and the names
// (a phone's autofill leaves one after an address): what an order stores.
func (c Customer) Trimmed() Customer {
	c.Email, c.FirstName, c.LastName, c.Phone = strings.TrimSpace(c.Email), strings.TrimSpace(c.FirstName),
		strings.TrimSpace(c.LastName), strings.TrimSpace(c.Phone)
	return c
}

// Check adds to verr what is wrong with the buyer, at locations under prefix
// (body.customer). The e-mail must be one plain address (the schema's
// RFC 5322 check also takes "Anna <anna@example.com>" or a comment, which
// the tickets e-mail would then be sent to as written, and spaces or line
// breaks inside); the names one line each. The phone may be empty (an
// aggregator's buyer has none): the schema requires it where the partner
// API does.
func (c Customer) Check(prefix string, verr *errs.ValidationError) {
	if !PlainAddress(c.Email) {
		verr.Add(prefix+".email", fmt.Sprintf("must be one plain e-mail address such as anna@example.com (no name, comment or spaces), at most %d characters", MaxEmailLength), c.Email)
	}
	verr.Line(prefix+".first_name", c.FirstName, 1, MaxNameLength)
	verr.Line(prefix+".last_name", c.LastName, 1, MaxNameLength)
	if c.Phone != "" && !phoneRx.MatchString(c.Phone) {
		verr.Add(prefix+".phone", "must be a phone number in international format, e.g. +7 999 123-45-67", c.Phone)
	}
}

// PlainAddress reports whether s is one e-mail address and nothing else:
// no display name or comment, no space or control character, at most
// MaxEmailLength characters. (A quoted local part without spaces,
// "anna"@example.com, is an address.)
func PlainAddress(s string) bool {
	if n := utf8.RuneCountInString(s); n == 0 || n > MaxEmailLength || strings.ContainsAny(s, "<>()") ||
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == ""
}

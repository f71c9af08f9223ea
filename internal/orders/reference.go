package orders

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ticketsales/ticketsales/internal/errs"
)

// An order's reference and metadata are the partner's, for reconciling
// its orders with its own records (docs/api.md, "Reconciling your
// orders"): kept as sent, echoed on every order the API returns and in
// its webhooks, and looked up by GET /v1/orders. The bounds are Stripe's
// for metadata, so a partner's code written for one fits the other; the
// reference is an id, one line long.
const (
	MaxReferenceLength   = 64
	MaxMetadataKeys      = 20
	MaxMetadataKeyLength = 40
	MaxMetadataValue     = 500
	// MetadataKeyPattern is what a metadata key is made of: a name a
	// partner's code picks, safe in a query (filter.metadata=key:value
	// splits at the first colon) and in a URL.
	MetadataKeyPattern = `^[A-Za-z0-9_.\-]{1,40}$`
)

var metadataKeyRx = regexp.MustCompile(MetadataKeyPattern)

// CheckReference adds to verr what is wrong with a reference ("": none):
// 1 to MaxReferenceLength characters of one line, the rule a buyer's
// names follow.
func CheckReference(location, ref string, verr *errs.ValidationError) {
	if ref != "" {
		verr.Line(location, ref, 1, MaxReferenceLength)
	}
}

// CheckMetadata adds to verr what is wrong with metadata, each key's
// problem at its own location (body.metadata.<key>): at most
// MaxMetadataKeys keys of MetadataKeyPattern, values of at most
// MaxMetadataValue characters and no control characters.
func CheckMetadata(location string, md map[string]string, verr *errs.ValidationError) {
	if len(md) > MaxMetadataKeys {
		verr.Add(location, fmt.Sprintf("at most %d keys", MaxMetadataKeys), len(md))
	}
	for _, k := range slices.Sorted(maps.Keys(md)) {
		at := location + "." + k
		if !metadataKeyRx.MatchString(k) {
			verr.Add(at, fmt.Sprintf("a key is 1 to %d characters of A-Z, a-z, 0-9, _, . and -", MaxMetadataKeyLength), clipKey(k))
			continue
		}
		verr.Line(at, md[k], 0, MaxMetadataValue)
	}
}

// CheckMetadataPair adds to verr what is wrong with one pair looked up
// by: a key as CheckMetadata takes it and a value one could store.
func CheckMetadataPair(location, key, value string, verr *errs.ValidationError) {
	switch {
	case !metadataKeyRx.MatchString(key):
		verr.Add(location, fmt.Sprintf("give key:value, the key 1 to %d characters of A-Z, a-z, 0-9, _, . and -", MaxMetadataKeyLength), clipKey(key))
	case utf8.RuneCountInString(value) > MaxMetadataValue || strings.IndexFunc(value, unicode.IsControl) >= 0:
		verr.Add(location, fmt.Sprintf("the value is at most %d characters of one line", MaxMetadataValue), nil)
	}
}

// CheckLookups adds to verr what is wrong with the values orders are
// looked up by (each "" when not given): a reference, a payment id and an
// e-mail, each one line within the bounds of what an order stores. A
// value no order can carry is bad input, not a search that finds nothing;
// a NUL would not even reach the database as a value.
func CheckLookups(prefix, reference, paymentID, email string, verr *errs.ValidationError) {
	CheckReference(prefix+"reference", reference, verr)
	if paymentID != "" {
		verr.Line(prefix+"payment_id", paymentID, 1, MaxPaymentIDLength)
	}
	if email != "" {
		verr.Line(prefix+"email", email, 1, MaxEmailLength)
	}
}

// clipKey is a bad key short enough to echo.
func clipKey(k string) string {
	if utf8.RuneCountInString(k) <= MaxMetadataKeyLength+10 {
		return k
	}
	return string([]rune(k)[:MaxMetadataKeyLength+10]) + "…"
}

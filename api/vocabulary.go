package api

import (
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/internal/pricing"
	"github.com/ticketsales/ticketsales/internal/states"
)

// vocabulary is every status and kind partners see, with its values from
// the lists in internal/states (and pricing's fee modes): the document's
// enums are written once, where the values are.
var vocabulary = []word{
	wordOf(states.ReservationStatuses), wordOf(states.OrderStatuses), wordOf(states.CancelReasons),
	wordOf(states.TicketStatuses), wordOf(states.RefundStatuses), wordOf(states.DeliveryStatuses),
	wordOf(states.EventStatuses), wordOf(states.PaymentMethods), wordOf(states.SeatStatuses),
	wordOf(states.WebhookEventTypes), wordOf(states.AggregatorStatuses), wordOf(pricing.Modes),
	wordOf(states.ScanOutcomes), wordOf(states.ScanDirections), wordOf(states.DoorTicketStates),
	wordOf(states.ConflictKinds), wordOf(states.AllocationChanges),
}

// word is a vocabulary type, the type that stands in for it in the
// document, and its values.
type word struct {
	t, schema reflect.Type
	values    []any
}

func wordOf[T ~string](vs []T) word {
	out := word{t: reflect.TypeFor[T](), schema: reflect.TypeFor[enumOf[T]]()}
	for _, v := range vs {
		out.values = append(out.values, string(v))
	}
	return out
}

var enums = func() map[reflect.Type][]any {
	m := map[reflect.Type][]any{}
	for _, w := range vocabulary {
		m[w.t] = w.values
	}
	return m
}()

// enumOf stands in for a vocabulary type T in the document: a string, one
// of T's values.
type enumOf[T ~string] string

// Schema makes enumOf a huma.SchemaProvider.
func (enumOf[T]) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Enum: enums[reflect.TypeFor[T]()]}
}

// registerVocabulary makes r describe each vocabulary type as its enum.
func registerVocabulary(r huma.Registry) {
	for _, w := range vocabulary {
		r.RegisterTypeAlias(w.t, w.schema)
	}
}

// publishedNames keep the document's schema names of types renamed since
// they were published (a type's own name is its schema's otherwise): the
// Go names lost their package's stutter, the document did not change.
var publishedNames = map[string]string{
	"github.com/ticketsales/ticketsales/internal/webhooks.Endpoint": "WebhookEndpoint",
	"github.com/ticketsales/ticketsales/internal/webhooks.Delivery": "WebhookDelivery",
	"github.com/ticketsales/ticketsales/internal/webhooks.Attempt":  "WebhookAttempt",
	"github.com/ticketsales/ticketsales/internal/webhooks.Sent":     "WebhookSent",
	"github.com/ticketsales/ticketsales/internal/refunds.Refund":    "RefundView",
	"github.com/ticketsales/ticketsales/internal/orders.Item":       "OrderItemInput",
}

// schemaName is huma.DefaultSchemaNamer with publishedNames: a type, or a
// type argument of a generic one (Envelope[*refunds.Refund]), is named as
// published.
func schemaName(t reflect.Type, hint string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.Name()
	if n, ok := publishedNames[t.PkgPath()+"."+name]; ok {
		name = n
	}
	for full, n := range publishedNames {
		for _, end := range []string{"]", ","} {
			name = strings.ReplaceAll(name, full+end, n+end)
		}
	}
	if name == "" {
		name = hint
	}
	// As DefaultSchemaNamer: []T is ListT, generic parts are joined, each
	// part's package is dropped and its first letter upper-cased.
	name = strings.ReplaceAll(name, "[]", "List[")
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '[' || r == ']' || r == '*' || r == ',' }) {
		base := part[strings.LastIndex(part, ".")+1:]
		if base == "" {
			continue
		}
		r, size := utf8.DecodeRuneInString(base)
		b.WriteString(strings.ToUpper(string(r)))
		b.WriteString(base[size:])
	}
	return b.String()
}

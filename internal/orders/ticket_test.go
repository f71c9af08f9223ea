package orders

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/delivery"
)

// The partner reference names the sandbox barcode prefix in a struct tag,
// which cannot use the constant: it must say the one the generator uses.
func TestTicketDocNamesTheSandboxPrefix(t *testing.T) {
	f, _ := reflect.TypeFor[Ticket]().FieldByName("IsTest")
	if doc := f.Tag.Get("doc"); !strings.Contains(doc, "begins with "+delivery.SandboxBarcodePrefix+";") {
		t.Errorf("Ticket.is_test's description %q does not name the sandbox prefix %s", doc, delivery.SandboxBarcodePrefix)
	}
}

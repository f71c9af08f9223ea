package checkin

import (
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/test/problems"
)

// Every scan is recorded, so its fields hold their bounds whoever sends
// them: a barcode of at most 160 characters (a 200 KB one was once stored),
// a gate of at most 64 and a device of at most 100, each one line, and a
// direction in or out. The longest allowed values pass.
func TestScanBounds(t *testing.T) {
	code := "2000870400618"
	for _, c := range []struct {
		name, barcode, gate, device, direction, field string
	}{
		{"no barcode", "", "North", "", "", "body.barcode"},
		{"a barcode of 161 characters", strings.Repeat("7", 161), "North", "", "", "body.barcode"},
		{"a gate of 5,000 characters", code, strings.Repeat("Ворота ", 715), "", "", "body.gate"},
		{"a gate with a line break", code, "North\r\nSouth", "", "", "body.gate"},
		{"a device of 101 characters", code, "North", strings.Repeat("d", 101), "", "body.device_id"},
		{"a direction sideways", code, "North", "", "sideways", "body.direction"},
	} {
		err := checkScan("body", c.barcode, c.gate, c.device, states.ScanDirection(c.direction))
		if _, ok := problems.Fields(t, err)[c.field]; !ok {
			t.Errorf("%s: refused with %v, want an error at %s", c.name, err, c.field)
		}
	}
	if err := checkScan("body.scans[3]", strings.Repeat("7", MaxBarcodeLength), strings.Repeat("В", MaxGateLength),
		strings.Repeat("d", MaxDeviceIDLength), "out"); err != nil {
		t.Errorf("the longest allowed scan: %v", err)
	}
}

package checkin

import (
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
)

// The bounds of a scan, as the API's schema states them. Every scan is
// recorded, so they are checked where it is made, not only by the schema.
const (
	MaxBarcodeLength  = 160 // a signed code is about 110 characters
	MaxGateLength     = 64
	MaxDeviceIDLength = 100
)

// checkScan reports what is wrong with a scan's fields, at locations under
// at (body, or body.scans[i]).
func checkScan(at, barcode, gate, deviceID string, direction states.ScanDirection) error {
	verr := &errs.ValidationError{}
	verr.Line(at+".barcode", barcode, 1, MaxBarcodeLength)
	verr.Line(at+".gate", gate, 0, MaxGateLength)
	verr.Line(at+".device_id", deviceID, 0, MaxDeviceIDLength)
	switch direction {
	case "", states.ScanIn, states.ScanOut:
	default:
		verr.Add(at+".direction", "must be in or out", direction)
	}
	return verr.OrNil()
}

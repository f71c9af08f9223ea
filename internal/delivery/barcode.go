package delivery

import (
	"crypto/rand"
	"io"
	"strings"
)

// SandboxBarcodePrefix begins every barcode of a sandbox ticket, and no
// production barcode issued since it was reserved. A door scanner tells a
// sandbox ticket from a real one by the digits alone, offline: a test
// ticket shown at a real door is refused as such, not admitted.
//
// The prefix is in GS1's restricted-circulation range (200–299), which is
// never assigned to a product, so a sandbox code is no trade item's number
// either. Four digits leave sandbox 10^8 codes (sandbox orders live a day)
// and take 1 in 10^4 of the production space; production barcodes issued
// before the prefix was reserved were drawn from all codes, so about 1 in
// 10^4 of those lie in it (a door checks its list of tickets first: see
// docs/decisions.md).
const SandboxBarcodePrefix = "2000"

// NewBarcode returns a random 13-digit EAN-13 code for a ticket of a sandbox
// order (sandbox true) or of a production one: 12 digits, the first ones
// SandboxBarcodePrefix for sandbox and anything else for production, the
// rest from crypto/rand, followed by the EAN-13 check digit.
//
// crypto/rand (not math/rand) because the barcode is what admits a person at
// the gate: it must not be guessable from other issued tickets.
func NewBarcode(sandbox bool) string {
	return newBarcode(sandbox, randomDigits)
}

// newBarcode is NewBarcode with its source of random digits given.
func newBarcode(sandbox bool, random func(dst []byte)) string {
	var digits [13]byte
	if sandbox {
		n := copy(digits[:], SandboxBarcodePrefix)
		random(digits[n:12])
	} else {
		// Drawing again until the code is outside the sandbox space keeps
		// production codes uniform over the rest (1 draw in 10^4 repeats).
		for {
			random(digits[:12])
			if !strings.HasPrefix(string(digits[:12]), SandboxBarcodePrefix) {
				break
			}
		}
	}
	digits[12] = EAN13CheckDigit(string(digits[:12]))
	return string(digits[:])
}

// IsSandboxBarcode reports whether code is a sandbox ticket's barcode: a
// valid EAN-13 in the sandbox space. It needs nothing but the code, so a
// scanner can decide it offline; a production barcode issued since the
// space was reserved is never one.
func IsSandboxBarcode(code string) bool {
	return ValidEAN13(code) && strings.HasPrefix(code, SandboxBarcodePrefix)
}

// randomDigits fills dst with uniformly random ASCII digits. Bytes >= 250 are
// rejected so that b%10 has no modulo bias.
func randomDigits(dst []byte) {
	var buf [32]byte
	for i := 0; i < len(dst); {
		// crypto/rand.Read never fails on supported platforms (Go 1.24+ crashes
		// the program instead), so the error is only checked defensively.
		if _, err := io.ReadFull(rand.Reader, buf[:]); err != nil {
			panic("tickets: crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if b >= 250 {
				continue
			}
			dst[i] = '0' + b%10
			i++
			if i == len(dst) {
				break
			}
		}
	}
}

// ValidEAN13 reports whether s is 13 digits with a correct check digit.
func ValidEAN13(s string) bool {
	if len(s) != 13 || !allDigits(s) {
		return false
	}
	return EAN13CheckDigit(s[:12]) == s[12]
}

// EAN13CheckDigit computes the check digit of 12 digits and returns it as an
// ASCII digit ('0'..'9'), so it can be appended to the 12 digits directly.
// It panics if first12 is not exactly 12 ASCII digits: that is a programming
// error, not bad user input (use ValidEAN13 for the latter).
func EAN13CheckDigit(first12 string) byte {
	if len(first12) != 12 || !allDigits(first12) {
		panic("tickets: EAN13CheckDigit needs exactly 12 digits, got " + `"` + first12 + `"`)
	}
	// GS1 rule: counting from the left, odd positions weigh 1 and even
	// positions weigh 3; the check digit rounds the sum up to a multiple of 10.
	sum := 0
	for i := 0; i < 12; i++ {
		d := int(first12[i] - '0')
		if i%2 == 1 {
			d *= 3
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

package delivery

import "testing"

// TestBarcodeSpaces draws many barcodes of each environment: sandbox codes
// are all recognised as such, production codes never are, and both are
// valid, random EAN-13 codes.
func TestBarcodeSpaces(t *testing.T) {
	const n = 20000
	for _, sandbox := range []bool{true, false} {
		seen := make(map[string]bool, n)
		var digitsAt [13][10]int // how often each digit came at each position
		for i := 0; i < n; i++ {
			b := NewBarcode(sandbox)
			if !ValidEAN13(b) {
				t.Fatalf("NewBarcode(%v) = %q is not a valid EAN-13", sandbox, b)
			}
			if IsSandboxBarcode(b) != sandbox {
				t.Fatalf("NewBarcode(%v) = %q, IsSandboxBarcode = %v", sandbox, b, !sandbox)
			}
			seen[b] = true
			for p := range 13 {
				digitsAt[p][b[p]-'0']++
			}
		}
		// Sandbox codes have 10^8 values: 20,000 draws expect 2 repeats.
		if len(seen) < n-20 {
			t.Errorf("NewBarcode(%v) produced only %d distinct codes of %d", sandbox, len(seen), n)
		}
		random := 0
		if sandbox {
			random = len(SandboxBarcodePrefix)
		}
		for p := random; p < 12; p++ {
			for d, c := range digitsAt[p] {
				if c < n/20 { // expected n/10
					t.Errorf("NewBarcode(%v): digit %d at position %d only %d times in %d", sandbox, d, p, c, n)
				}
			}
		}
	}
}

// TestProductionBarcodeDrawsAgainInSandboxSpace feeds the generator digits
// that fall in the sandbox space: a production code draws again, so no
// production code is ever refused as a test ticket at the door.
func TestProductionBarcodeDrawsAgainInSandboxSpace(t *testing.T) {
	draws := []string{SandboxBarcodePrefix + "12345678", SandboxBarcodePrefix + "00000000", "590123412345"}
	calls := 0
	source := func(dst []byte) {
		copy(dst, draws[calls][len(draws[calls])-len(dst):])
		calls++
	}
	if got := newBarcode(false, source); got != "5901234123457" || calls != 3 {
		t.Fatalf("production barcode %q after %d draws, want 5901234123457 after 3", got, calls)
	}
	calls = 0
	if got := newBarcode(true, source); got != SandboxBarcodePrefix+"12345678"+string(EAN13CheckDigit(SandboxBarcodePrefix+"12345678")) || calls != 1 {
		t.Fatalf("sandbox barcode %q after %d draws", got, calls)
	}
}

func TestIsSandboxBarcode(t *testing.T) {
	sandbox := SandboxBarcodePrefix + "87654321"
	sandbox += string(EAN13CheckDigit(sandbox))
	wrongCheck := sandbox[:12] + string('0'+(sandbox[12]-'0'+1)%10)
	nearby := SandboxBarcodePrefix[:3] + "9" + "87654321" // the prefix's first three digits only
	nearby += string(EAN13CheckDigit(nearby))
	for _, tt := range []struct {
		code string
		want bool
	}{
		{sandbox, true},
		{wrongCheck, false},   // not a code this service issued
		{sandbox[:12], false}, // 12 digits
		{"4006381333931", false},
		{nearby, false},
		{"", false},
	} {
		if got := IsSandboxBarcode(tt.code); got != tt.want {
			t.Errorf("IsSandboxBarcode(%q) = %v, want %v", tt.code, got, tt.want)
		}
	}
}

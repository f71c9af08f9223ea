package delivery

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	_ "image/png" // register the PNG decoder for image.Decode
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/boombuler/barcode"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
)

func TestEAN13CheckDigit(t *testing.T) {
	tests := []struct {
		first12 string
		want    byte
	}{
		{"400638133393", '1'}, // 4006381333931, the classic GS1 example
		{"590123412345", '7'}, // 5901234123457
		{"978030640615", '7'}, // ISBN 978-0-306-40615-7
		{"000000000000", '0'},
		{"100000000000", '9'},
		{"012345678901", '2'}, // 0123456789012
	}
	for _, tt := range tests {
		if got := EAN13CheckDigit(tt.first12); got != tt.want {
			t.Errorf("EAN13CheckDigit(%q) = %q, want %q", tt.first12, got, tt.want)
		}
	}
}

func TestEAN13CheckDigitPanics(t *testing.T) {
	for _, in := range []string{"", "40063813339", "4006381333931", "40063813339x", "４00638133393"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("EAN13CheckDigit(%q) did not panic", in)
				}
			}()
			EAN13CheckDigit(in)
		}()
	}
}

func TestValidEAN13(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"4006381333931", true},
		{"5901234123457", true},
		{"9780306406157", true},
		{"0000000000000", true},
		{"4006381333932", false}, // wrong check digit
		{"5901234123450", false},
		{"400638133393", false},   // 12 digits
		{"40063813339310", false}, // 14 digits
		{"400638133393a", false},
		{"4006381 33931", false},
		{"", false},
		{"-006381333931", false},
	}
	for _, tt := range tests {
		if got := ValidEAN13(tt.in); got != tt.want {
			t.Errorf("ValidEAN13(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestNewBarcode(t *testing.T) {
	const n = 1000
	seen := make(map[string]bool, n)
	var firstDigits [10]int
	for i := 0; i < n; i++ {
		b := NewBarcode(false)
		if len(b) != 13 {
			t.Fatalf("NewBarcode(false) = %q: length %d, want 13", b, len(b))
		}
		if !ValidEAN13(b) {
			t.Fatalf("NewBarcode(false) = %q is not a valid EAN-13", b)
		}
		seen[b] = true
		firstDigits[b[0]-'0']++
	}
	// 10^12 possible codes: 1000 draws must not collide unless rand is broken.
	if len(seen) != n {
		t.Errorf("NewBarcode produced only %d distinct codes out of %d", len(seen), n)
	}
	// Every leading digit should turn up (expected ~100 each; P(miss) is astronomically small).
	for d, c := range firstDigits {
		if c == 0 {
			t.Errorf("leading digit %d never produced in %d barcodes: %v", d, n, firstDigits)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	tests := []struct {
		minor    int64
		currency string
		want     string
	}{
		{300000, "RUB", "3 000.00 RUB"},
		{5, "RUB", "0.05 RUB"},
		{0, "RUB", "0.00 RUB"},
		{99, "RUB", "0.99 RUB"},
		{100, "RUB", "1.00 RUB"},
		{99999, "RUB", "999.99 RUB"},
		{100000, "RUB", "1 000.00 RUB"},
		{123456789, "RUB", "1 234 567.89 RUB"},
		{12345678901, "USD", "123 456 789.01 USD"},
		{-5, "RUB", "-0.05 RUB"},
		{-300000, "EUR", "-3 000.00 EUR"},
		{-123456789, "RUB", "-1 234 567.89 RUB"},
		{150, "", "1.50"},
		{-9223372036854775808, "RUB", "-92 233 720 368 547 758.08 RUB"},
		{9223372036854775807, "RUB", "92 233 720 368 547 758.07 RUB"},
	}
	for _, tt := range tests {
		if got := FormatMoney(tt.minor, tt.currency); got != tt.want {
			t.Errorf("FormatMoney(%d, %q) = %q, want %q", tt.minor, tt.currency, got, tt.want)
		}
	}
}

func TestQRPNG(t *testing.T) {
	for _, content := range []string{"4006381333931", NewBarcode(false), "https://example.com/t/T-000123-01"} {
		data, err := QRPNG(content)
		if err != nil {
			t.Fatalf("QRPNG(%q): %v", content, err)
		}
		img, format, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("QRPNG(%q) output does not decode: %v", content, err)
		}
		if format != "png" {
			t.Errorf("QRPNG(%q) format = %q, want png", content, format)
		}
		b := img.Bounds()
		if b.Dx() == 0 || b.Dy() == 0 || b.Dx() != b.Dy() {
			t.Errorf("QRPNG(%q) size = %v, want non-zero square", content, b.Size())
		}
		if b.Dx() < 150 || b.Dx() > 300 {
			t.Errorf("QRPNG(%q) width = %d, want about 256", content, b.Dx())
		}
		// Quiet zone: the top-left pixel must be white, and there must be dark modules.
		if r, _, _, _ := img.At(b.Min.X, b.Min.Y).RGBA(); r != 0xffff {
			t.Errorf("QRPNG(%q) top-left pixel is not white: no quiet zone", content)
		}
		if r, _, _, _ := img.At(b.Dx()/2, b.Dy()/2).RGBA(); r != 0 && r != 0xffff {
			t.Errorf("QRPNG(%q) centre pixel is grey (%d): modules not crisp", content, r)
		}
	}
	if _, err := QRPNG(""); err == nil {
		t.Error("QRPNG(\"\") returned no error")
	}
}

var pageObj = regexp.MustCompile(`/Type\s*/Page\b`)

func sampleOrder(n int) Order {
	o := Order{
		OrderID:    123,
		EventTitle: "Лебединое озеро — Swan Lake",
		Venue:      "Большой театр",
		City:       "Москва",
		StartsAt:   time.Date(2026, 12, 24, 16, 0, 0, 0, time.UTC),
		Location:   time.FixedZone("MSK", 3*3600),
		PDFURL:     "/orders/123/tickets.pdf",
	}
	for i := 0; i < n; i++ {
		status := states.TicketActive
		if i == 1 {
			status = states.TicketRefunded
		}
		o.Tickets = append(o.Tickets, Ticket{
			Number:   "T-000123-0" + string(rune('1'+i)),
			Barcode:  NewBarcode(false),
			Status:   status,
			Seat:     "Партер, ряд 1, место " + string(rune('1'+i)),
			Category: "Партер",
			Price:    FormatMoney(300000, "RUB"),
		})
	}
	return o
}

func TestPDF(t *testing.T) {
	long := strings.Repeat("Очень длинное название мероприятия ", 20)
	tests := []struct {
		name string
		mod  func(*Order)
		n    int
	}{
		{"one ticket", nil, 1},
		{"three tickets with a refund", nil, 3},
		{"cyrillic title with quotes", func(o *Order) { o.EventTitle = "«Щелкунчик» — балет в двух действиях" }, 2},
		{"very long title and seat", func(o *Order) {
			o.EventTitle = long
			o.Tickets[0].Seat = long
		}, 2},
		{"nil location, empty fields", func(o *Order) {
			o.Location = nil
			o.Venue, o.City, o.EventTitle = "", "", ""
			o.Tickets[0].Category, o.Tickets[0].Price = "", ""
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := sampleOrder(tt.n)
			if tt.mod != nil {
				tt.mod(&o)
			}
			data, err := PDF(o)
			if err != nil {
				t.Fatalf("PDF: %v", err)
			}
			if !bytes.HasPrefix(data, []byte("%PDF")) {
				t.Fatalf("PDF output starts with %q, want %%PDF", data[:min(8, len(data))])
			}
			if !bytes.Contains(data[len(data)-32:], []byte("%%EOF")) {
				t.Errorf("PDF output has no %%%%EOF trailer")
			}
			if got := len(pageObj.FindAll(data, -1)); got != len(o.Tickets) {
				t.Errorf("PDF has %d pages, want %d (one per ticket)", got, len(o.Tickets))
			}
			// The codes are vector paths, not images to encode.
			if bytes.Contains(data, []byte("/Subtype /Image")) {
				t.Errorf("PDF embeds an image; the codes should be drawn as paths")
			}
			// The Go font must be embedded, otherwise Cyrillic cannot render.
			if !bytes.Contains(data, []byte("FontFile2")) {
				t.Errorf("PDF embeds no TrueType font")
			}
		})
	}
}

func TestPDFErrors(t *testing.T) {
	if _, err := PDF(Order{OrderID: 1}); err == nil {
		t.Error("PDF of an order without tickets returned no error")
	}
	o := sampleOrder(2)
	o.Tickets[1].Barcode = "4006381333932" // bad check digit
	if _, err := PDF(o); err == nil || !strings.Contains(err.Error(), o.Tickets[1].Number) {
		t.Errorf("PDF with invalid barcode: err = %v, want error naming the ticket", err)
	}
}

func TestRenderPage(t *testing.T) {
	o := sampleOrder(3)
	o.EventTitle = `Rock & Roll <script>alert("x")</script>`
	o.PDFURL = "/orders/123/tickets.pdf?sig=a&b=c"
	var buf bytes.Buffer
	if err := RenderPage(&buf, o); err != nil {
		t.Fatalf("RenderPage: %v", err)
	}
	page := buf.String()

	mustContain := []string{
		"<!DOCTYPE html>",
		"<style>",
		`Rock &amp; Roll &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,
		`href="/orders/123/tickets.pdf?sig=a&amp;b=c"`,
		">Download PDF</a>",
		"Большой театр",
		"Москва",
		"Thu, 24 Dec 2026, 19:00 MSK", // 16:00 UTC shown in the venue zone
		`datetime="2026-12-24T19:00:00&#43;03:00"`,
		"3 000.00 RUB",
		"VOID",
	}
	for _, s := range mustContain {
		if !strings.Contains(page, s) {
			t.Errorf("page does not contain %q", s)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("page contains an unescaped <script> tag")
	}
	for _, bad := range []string{`<link `, `<script`, `src="http`, `url(http`, `@import`} {
		if strings.Contains(page, bad) {
			t.Errorf("page is not self-contained: found %q", bad)
		}
	}

	for _, tk := range o.Tickets {
		for _, s := range []string{
			`class="ticket" data-barcode="` + tk.Barcode + `"`,
			`<dd class="digits">` + tk.Barcode + `</dd>`,
			`alt="QR code for ticket ` + tk.Number + `"`,
			tk.Number,
			tk.Seat,
		} {
			if !strings.Contains(page, s) {
				t.Errorf("page does not contain %q for ticket %s", s, tk.Number)
			}
		}
	}
	if got := strings.Count(page, `class="ticket"`); got != len(o.Tickets) {
		t.Errorf("page has %d ticket elements, want %d", got, len(o.Tickets))
	}
	if got := len(regexp.MustCompile(`<article class="ticket"[^>]*data-status="refunded"`).FindAllString(page, -1)); got != 1 {
		t.Errorf("page has %d refunded tickets, want 1", got)
	}

	// html/template writes "+" as "&#43;" inside attributes; browsers decode
	// entities before using the URL, so compare the decoded value.
	qrImg := regexp.MustCompile(`<img class="qr" src="data:image/png;base64,([A-Za-z0-9+/=&#;]+)"`)
	matches := qrImg.FindAllStringSubmatch(page, -1)
	if len(matches) != len(o.Tickets) {
		t.Fatalf("page has %d inline QR images, want %d", len(matches), len(o.Tickets))
	}
	for i, m := range matches {
		want, err := QRPNG(o.Tickets[i].Barcode)
		if err != nil {
			t.Fatal(err)
		}
		if got := html.UnescapeString(m[1]); got != b64(want) {
			t.Errorf("QR image %d does not encode ticket %s barcode", i, o.Tickets[i].Number)
		}
	}
}

func TestRenderPageUnsafeLinkAndNoPDF(t *testing.T) {
	o := sampleOrder(1)
	o.PDFURL = "javascript:alert(1)"
	var buf bytes.Buffer
	if err := RenderPage(&buf, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "javascript:") {
		t.Error("javascript: URL was not neutralised")
	}

	o.PDFURL = ""
	buf.Reset()
	if err := RenderPage(&buf, o); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Download PDF") {
		t.Error("Download PDF link rendered without a URL")
	}

	o = sampleOrder(1)
	o.Tickets[0].Barcode = ""
	buf.Reset()
	if err := RenderPage(&buf, o); err == nil {
		t.Error("RenderPage with an empty barcode returned no error")
	}
	if buf.Len() != 0 {
		t.Errorf("RenderPage wrote %d bytes despite failing", buf.Len())
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// BenchmarkTicketsPDF renders the tickets PDF of a typical order (1 to 4
// tickets): what a buyer's download of the PDF costs the api (the worker
// paid it per production order while the e-mail attached the PDF).
// docs/performance.md ("Tickets PDF") keeps its numbers.
func BenchmarkTicketsPDF(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("tickets=%d", n), func(b *testing.B) {
			o := benchOrder(b, n)
			b.ReportAllocs()
			cpu0 := processCPU(b)
			for b.Loop() {
				if _, err := PDF(o); err != nil {
					b.Fatal(err)
				}
			}
			// CPU, the garbage collector's included, is what an order
			// costs the worker; ns/op is wall time, longer on a busy machine.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// processCPU is the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchOrder is a sold order of n tickets as the page's PDF renders it: all
// active, their QR codes carrying signed codes.
func benchOrder(b *testing.B, n int) Order {
	o := sampleOrder(n)
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	for i := range o.Tickets {
		o.Tickets[i].Status = states.TicketActive
		code, err := ticketcode.Sign(key, ticketcode.Code{EventID: 42, TicketID: int64(1000 + i), Barcode: o.Tickets[i].Barcode})
		if err != nil {
			b.Fatal(err)
		}
		o.Tickets[i].Code = code
	}
	return o
}

// BenchmarkTicketsPDFFonts is the part of every PDF that registers the
// three Go fonts: fpdf parses each TrueType file and hashes its width
// table per document.
func BenchmarkTicketsPDFFonts(b *testing.B) {
	b.ReportAllocs()
	cpu0 := processCPU(b)
	defer func() {
		b.ReportMetric(float64(processCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}()
	for b.Loop() {
		pdf := fpdf.New("P", "mm", "A6", "")
		pdf.AddUTF8FontFromBytes(fontRegular, "", goregular.TTF)
		pdf.AddUTF8FontFromBytes(fontBold, "", gobold.TTF)
		pdf.AddUTF8FontFromBytes(fontMono, "", gomono.TTF)
		if err := pdf.Error(); err != nil {
			b.Fatal(err)
		}
	}
}

// The PDF draws its codes from darkRuns: the runs must cover exactly the
// encoder's dark modules, or a printed ticket would not scan.
func TestDarkRunsAreTheCode(t *testing.T) {
	code := NewBarcode(false)
	qr, err := qrCode(code)
	if err != nil {
		t.Fatal(err)
	}
	ean, err := eanCode(code)
	if err != nil {
		t.Fatal(err)
	}
	for _, bc := range []barcode.Barcode{qr, ean} {
		b := bc.Bounds()
		drawn := map[image.Point]bool{}
		for _, r := range darkRuns(bc) {
			if r.from >= r.to {
				t.Fatalf("%s: empty run %+v", bc.Metadata().CodeKind, r)
			}
			for x := r.from; x < r.to; x++ {
				drawn[image.Pt(x, r.row)] = true
			}
		}
		darkModules := 0
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				r, _, _, _ := bc.At(b.Min.X+x, b.Min.Y+y).RGBA()
				if dark := r < 0x8000; dark != drawn[image.Pt(x, y)] {
					t.Fatalf("%s: module (%d,%d) dark=%v but drawn=%v", bc.Metadata().CodeKind, x, y, dark, drawn[image.Pt(x, y)])
				} else if dark {
					darkModules++
				}
			}
		}
		if darkModules == 0 || darkModules == b.Dx()*b.Dy() {
			t.Fatalf("%s: %d dark modules of %d: not a code", bc.Metadata().CodeKind, darkModules, b.Dx()*b.Dy())
		}
	}
	if ean.Bounds().Dx() != 95 || ean.Bounds().Dy() != 1 {
		t.Errorf("EAN-13 is %v modules, want 95×1", ean.Bounds().Size())
	}
}

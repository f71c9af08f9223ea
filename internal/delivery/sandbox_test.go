package delivery

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ticketsales/ticketsales/test/pdftext"
)

// sandboxOrder is sampleOrder's sandbox twin: three tickets, the second
// refunded, with sandbox barcodes.
func sandboxOrder() Order {
	o := sampleOrder(3)
	o.Sandbox = true
	for i := range o.Tickets {
		o.Tickets[i].Barcode = NewBarcode(true)
	}
	return o
}

var (
	articleRe = regexp.MustCompile(`(?s)<article class="ticket".*?</article>`)
	dataURIRe = regexp.MustCompile(`src="data:[^"]*"`)
)

// TestRenderPageMarksSandboxTickets: a sandbox order's page says TEST in
// its title, above the event and on every ticket, refunded ones included;
// a production order's page says it nowhere.
func TestRenderPageMarksSandboxTickets(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderPage(&buf, sandboxOrder()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, s := range []string{"<title>TEST · ", `<p class="test-banner" role="note"><strong>TEST</strong>`} {
		if !strings.Contains(page, s) {
			t.Errorf("sandbox page lacks %q", s)
		}
	}
	tickets := articleRe.FindAllString(page, -1)
	if len(tickets) != 3 {
		t.Fatalf("sandbox page has %d tickets, want 3", len(tickets))
	}
	for i, a := range tickets {
		if !strings.Contains(a, `<p class="test-mark">TEST · not valid for entry</p>`) || !strings.Contains(a, " data-sandbox>") {
			t.Errorf("sandbox ticket %d is not marked TEST:\n%s", i+1, a)
		}
	}

	buf.Reset()
	if err := RenderPage(&buf, sampleOrder(3)); err != nil {
		t.Fatal(err)
	}
	// The QR codes' base64 could spell anything; the rest must not say TEST.
	if prod := dataURIRe.ReplaceAllString(buf.String(), ""); strings.Contains(prod, "TEST") || strings.Contains(prod, " data-sandbox>") {
		t.Errorf("production page is marked as a test:\n%s", prod)
	}
}

// TestPDFMarksSandboxTickets reads the text of every page of the tickets
// PDF: each page of a sandbox order says TEST (refunded ones too), no page
// of a production order does; and the banners never push the codes onto
// the footer, whatever room the title takes. The PDFs are kept as test
// artifacts (go test -artifacts) to look at.
func TestPDFMarksSandboxTickets(t *testing.T) {
	titles := []string{
		"Swan Lake",
		"Лебединое озеро — Swan Lake, балет в двух действиях",                                           // two lines at the largest size
		"Лебединое озеро — Swan Lake, балет в двух действиях с прологом и эпилогом, в новой постановке", // three
		strings.Repeat("Очень длинное название мероприятия ", 8),
	}
	type pdfCase struct {
		name string
		o    Order
	}
	var cases []pdfCase
	for i, title := range titles {
		o := sandboxOrder()
		o.EventTitle = title
		cases = append(cases, pdfCase{fmt.Sprintf("sandbox-%d", i+1), o})
	}
	prod := sampleOrder(3)
	cases = append(cases, pdfCase{"production-1", prod})
	prod.EventTitle = titles[1] // a refunded ticket's banner and two title lines
	cases = append(cases, pdfCase{"production-2", prod})
	for _, tt := range cases {
		data, err := PDF(tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), tt.name+".pdf"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		pages, err := pdftext.Pages(data)
		if err != nil {
			t.Fatal(err)
		}
		if len(pages) != len(tt.o.Tickets) {
			t.Fatalf("%s: %d pages, want %d", tt.name, len(pages), len(tt.o.Tickets))
		}
		for i, page := range pages {
			text := page.Text()
			// The ticket's own page: its number is on it.
			if !strings.Contains(text, tt.o.Tickets[i].Number) {
				t.Fatalf("%s page %d does not read as ticket %s:\n%s", tt.name, i+1, tt.o.Tickets[i].Number, text)
			}
			marked := strings.Contains(text, "TEST TICKET — NOT VALID FOR ENTRY") && strings.Contains(text, "TEST: a ticket of a sandbox order")
			if tt.o.Sandbox != marked || tt.o.Sandbox != strings.Contains(text, "TEST") {
				t.Errorf("%s page %d: marked TEST %v, want %v:\n%s", tt.name, i+1, marked, tt.o.Sandbox, text)
			}
			if void := strings.Contains(text, "VOID"); void != tt.o.Tickets[i].Void() {
				t.Errorf("%s page %d: VOID %v, want %v", tt.name, i+1, void, tt.o.Tickets[i].Void())
			}
			footerClear(t, fmt.Sprintf("%s page %d", tt.name, i+1), page)
		}
	}
}

// footerClear fails unless the footer (7 pt, the last line drawn at the
// bottom) is the page's lowest text, its letters at least 1 mm below the
// baseline of the lowest line above it (the barcode's digits).
func footerClear(t *testing.T, what string, p pdftext.Page) {
	t.Helper()
	footer := p.Lines[0]
	for _, l := range p.Lines {
		if l.Y < footer.Y {
			footer = l
		}
	}
	if !strings.HasPrefix(footer.Text, "TEST: ") && !strings.HasPrefix(footer.Text, "Show this ticket") && !strings.HasPrefix(footer.Text, "This ticket was refunded") {
		t.Fatalf("%s: the lowest text is %q, not the footer", what, footer.Text)
	}
	const clear = 7 + 72/25.4 // pt: the footer's size and 1 mm
	for _, l := range p.Lines {
		if l != footer && l.Y-footer.Y < clear {
			t.Errorf("%s: %q at %.1f pt is %.1f pt above the footer, want at least %.1f", what, l.Text, l.Y, l.Y-footer.Y, clear)
		}
	}
}

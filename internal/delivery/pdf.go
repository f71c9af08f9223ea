package delivery

import (
	"bytes"
	"fmt"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/boombuler/barcode"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/goregular"
)

// codeberg.org/go-pdf/fpdf is the maintained continuation of the archived
// github.com/go-pdf/fpdf (itself the successor of jung-kurt/gofpdf): pure Go,
// UTF-8 TrueType embedding with subsetting, vector paths and transforms.
//
// fpdf's core fonts are cp1252 only, so Cyrillic titles would come out as
// garbage. The Go fonts (golang.org/x/image/font/gofont) cover WGL4, which
// includes Cyrillic, and ship as []byte in a Go module: nothing to install
// on the server and no font files to locate at run time.

// Page geometry in millimetres. A6 fits a phone screen and prints 4-up on A4.
const (
	pageW    = 105.0
	pageH    = 148.0
	margin   = 8.0
	contentW = pageW - 2*margin

	qrSizeMM  = 38.0 // printed QR side; ~1.1 mm per module for a 13-digit code
	eanModule = 0.4  // mm per EAN module (nominal is 0.33; a bit larger scans better from home printers)
	eanBarsMM = 14.0 // bar height

	fontRegular = "goregular"
	fontBold    = "gobold"
	fontMono    = "gomono"

	ptToMM = 25.4 / 72
)

var (
	colorText  = [3]int{20, 20, 20}
	colorLabel = [3]int{110, 110, 110}
	colorVoid  = [3]int{200, 0, 0}
	// Sandbox marking: black on amber reads in colour and in a greyscale
	// copy, and is unlike VOID's red, so the two never read as one.
	colorTest      = [3]int{255, 194, 26}
	colorTestInk   = [3]int{26, 19, 0}
	colorTestStamp = [3]int{214, 120, 0}
)

// PDF returns a PDF with one A6 page per ticket: event title, venue,
// date/time, seat, category, price, ticket number, the QR code (encoding the
// barcode) and an EAN-13 barcode with its digits printed under it. Refunded
// tickets carry a red "VOID" banner and a diagonal watermark over the codes.
// Every page of a sandbox order says TEST: in its header, in an amber banner,
// beside the QR code and in its footer, inside an amber frame. The codes
// themselves stay clear, so a scanner reads them and refuses them by their
// digits (IsSandboxBarcode).
//
// An order without tickets is an error rather than an empty PDF: a PDF with
// zero pages is invalid and would only confuse the buyer.
func PDF(o Order) ([]byte, error) {
	if len(o.Tickets) == 0 {
		return nil, fmt.Errorf("tickets: order %d has no tickets to render", o.OrderID)
	}

	pdf := fpdf.New("P", "mm", "A6", "")
	pdf.SetMargins(margin, margin, margin)
	// Every element is placed explicitly; automatic breaks would only add
	// stray pages and break the one-page-per-ticket contract.
	pdf.SetAutoPageBreak(false, 0)
	pdf.SetTitle(pdfTitle(o), true)
	pdf.SetSubject(fmt.Sprintf("Order #%d", o.OrderID), true)
	pdf.SetCreator("ticketsales", true)
	pdf.AddUTF8FontFromBytes(fontRegular, "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(fontBold, "", gobold.TTF)
	pdf.AddUTF8FontFromBytes(fontMono, "", gomono.TTF)
	if err := pdf.Error(); err != nil {
		return nil, fmt.Errorf("tickets: load fonts: %w", err)
	}

	for i, t := range o.Tickets {
		if err := ticketPage(pdf, o, t, i); err != nil {
			return nil, err
		}
	}

	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		return nil, fmt.Errorf("tickets: write PDF: %w", err)
	}
	return buf.Bytes(), nil
}

// pdfTitle is the PDF's title and the page's <title>.
func pdfTitle(o Order) string {
	title := o.EventTitle + " — tickets"
	if o.EventTitle == "" {
		title = fmt.Sprintf("Tickets, order #%d", o.OrderID)
	}
	if o.Sandbox {
		title = "TEST · " + title
	}
	return title
}

func ticketPage(pdf *fpdf.Fpdf, o Order, t Ticket, idx int) error {
	qr, err := qrCode(t.QRContent())
	if err != nil {
		return fmt.Errorf("tickets: ticket %s: %w", t.Number, err)
	}
	ean, err := eanCode(t.Barcode)
	if err != nil {
		return fmt.Errorf("tickets: ticket %s: %w", t.Number, err)
	}

	pdf.AddPage()
	void := t.Void()
	y := margin

	// Header: what this paper is, and which order it belongs to.
	setColor(pdf, colorLabel)
	pdf.SetFont(fontRegular, "", 8)
	pdf.SetXY(margin, y)
	if o.Sandbox {
		setColor(pdf, colorTestInk)
		pdf.SetFont(fontBold, "", 8)
		pdf.CellFormat(contentW/2, 4, "TEST TICKET", "", 0, "L", false, 0, "")
		setColor(pdf, colorLabel)
		pdf.SetFont(fontRegular, "", 8)
	} else {
		pdf.CellFormat(contentW/2, 4, "ADMIT ONE", "", 0, "L", false, 0, "")
	}
	pdf.CellFormat(contentW/2, 4, fmt.Sprintf("Order #%d · %d/%d", o.OrderID, idx+1, len(o.Tickets)), "", 0, "R", false, 0, "")
	y += 5
	// Banners, one a line of the title's room: a refunded sandbox ticket
	// has two, each a little lower, and a title of one smaller line, so
	// the codes and the footer keep their places.
	banners, bannerH, maxTitleSize := 0, 7.0, 16.0
	if void && o.Sandbox {
		bannerH, maxTitleSize = 6, 14
	}
	if void {
		// A filled red banner is visible even in greyscale photocopies.
		banner(pdf, y, bannerH, colorVoid, [3]int{255, 255, 255}, "VOID — REFUNDED, NOT VALID FOR ENTRY")
		y += bannerH + 1
		banners++
	}
	if o.Sandbox {
		banner(pdf, y, bannerH, colorTest, colorTestInk, "TEST TICKET — NOT VALID FOR ENTRY")
		y += bannerH + 1
		banners++
	}

	// Title: shrink to fit at most 3 lines so the page layout never overflows.
	setColor(pdf, colorText)
	title := strings.TrimSpace(o.EventTitle)
	if title == "" {
		title = "Event"
	}
	maxTitleLines := 3 - banners
	lines, size := fitLines(pdf, fontBold, title, contentW, maxTitleSize, 10, maxTitleLines)
	lh := size * ptToMM * 1.2
	for _, l := range lines {
		pdf.SetXY(margin, y)
		pdf.CellFormat(contentW, lh, l, "", 0, "L", false, 0, "")
		y += lh
	}
	y += 1

	place := joinNonEmpty(", ", o.Venue, o.City)
	if place != "" {
		singleLine(pdf, fontRegular, place, margin, y, contentW, 10, 7, colorText)
		y += 5
	}
	singleLine(pdf, fontRegular, o.whenText(), margin, y, contentW, 10, 7, colorText)
	y += 6

	hr(pdf, y)
	y += 2

	field(pdf, "SEAT", t.Seat, margin, y, contentW)
	y += 9
	field(pdf, "CATEGORY", t.Category, margin, y, contentW*0.55)
	field(pdf, "PRICE", t.Price, margin+contentW*0.58, y, contentW*0.42)
	y += 9
	field(pdf, "TICKET", t.Number, margin, y, contentW)
	y += 10

	hr(pdf, y)
	y += 2

	// QR code, centred, its quiet zone inside qrSizeMM.
	qrX := (pageW - qrSizeMM) / 2
	qrY := y
	qrModule := qrSizeMM / float64(qr.Bounds().Dx()+2*qrQuietZone)
	drawModules(pdf, qr, qrX+qrQuietZone*qrModule, qrY+qrQuietZone*qrModule, qrModule, qrModule)
	y += qrSizeMM + 1

	// EAN-13 with the standard human-readable layout: first digit left of
	// the symbol, then the two 6-digit halves under their bars.
	eanW := float64(95+2*eanQuietZone) * eanModule
	eanX := (pageW - eanW) / 2
	drawModules(pdf, ean, eanX+eanQuietZone*eanModule, y, eanModule, eanBarsMM)
	y += eanBarsMM + 0.5
	symX := eanX + eanQuietZone*eanModule
	setColor(pdf, colorText)
	pdf.SetFont(fontMono, "", 9)
	digitsAt := func(s string, fromModule, toModule float64) {
		pdf.SetXY(symX+fromModule*eanModule, y)
		pdf.CellFormat((toModule-fromModule)*eanModule, 4, s, "", 0, "C", false, 0, "")
	}
	digitsAt(t.Barcode[:1], -eanQuietZone, 0)
	digitsAt(t.Barcode[1:7], 3, 45)
	digitsAt(t.Barcode[7:], 50, 92)

	// Footer.
	pdf.SetFont(fontRegular, "", 7)
	setColor(pdf, colorLabel)
	pdf.SetXY(margin, pageH-margin-3)
	footer := "Show this ticket (printed or on screen) at the entrance. Each code admits once."
	switch {
	case o.Sandbox:
		footer = "TEST: a ticket of a sandbox order. It admits no one."
	case void:
		footer = "This ticket was refunded and will be rejected at the entrance."
	}
	pdf.CellFormat(contentW, 3, footer, "", 0, "C", false, 0, "")

	if void {
		voidWatermark(pdf, qrY+qrSizeMM/2+6)
	} else if o.Sandbox {
		// VOID's watermark crosses this room; one stamp per page is enough.
		testStamps(pdf, qrX, qrY)
	}
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("tickets: ticket %s: %w", t.Number, err)
	}
	return nil
}

// voidWatermark stamps a large diagonal "VOID" across the codes so that a
// refunded ticket cannot be mistaken for a valid one at a glance.
func voidWatermark(pdf *fpdf.Fpdf, cy float64) {
	cx := pageW / 2
	pdf.SetFont(fontBold, "", 72)
	pdf.SetTextColor(colorVoid[0], colorVoid[1], colorVoid[2])
	pdf.SetAlpha(0.6, "Normal")
	pdf.TransformBegin()
	pdf.TransformRotate(30, cx, cy)
	w := pdf.GetStringWidth("VOID")
	pdf.Text(cx-w/2, cy+72*ptToMM*0.35, "VOID")
	pdf.TransformEnd()
	pdf.SetAlpha(1, "Normal")

	// Red frame around the whole page, visible even when the text is cropped.
	pdf.SetDrawColor(colorVoid[0], colorVoid[1], colorVoid[2])
	pdf.SetLineWidth(1.5)
	pdf.Rect(3, 3, pageW-6, pageH-6, "D")
}

// banner draws a filled full-width strip h mm high with bold centred text
// at y.
func banner(pdf *fpdf.Fpdf, y, h float64, fill, ink [3]int, text string) {
	pdf.SetFillColor(fill[0], fill[1], fill[2])
	setColor(pdf, ink)
	pdf.SetFont(fontBold, "", 11)
	pdf.SetXY(margin, y)
	pdf.CellFormat(contentW, h, text, "", 0, "C", true, 0, "")
}

// testStamps writes a large upright "TEST" on both sides of the QR code,
// where the page is otherwise empty, and frames the page in amber: a
// sandbox ticket cannot be cropped or copied into one that looks real. The
// codes are left clear so that a scanner still reads them.
func testStamps(pdf *fpdf.Fpdf, qrX, qrY float64) {
	const size = 30.0 // pt: "TEST" is about 26 mm long, less than the QR's side
	pdf.SetFont(fontBold, "", size)
	setColor(pdf, colorTestStamp)
	w := pdf.GetStringWidth("TEST")
	cy := qrY + qrSizeMM/2
	capH := size * ptToMM * 0.7
	for _, side := range []struct{ cx, angle float64 }{
		{(margin + qrX) / 2, 90},                     // left of the QR, read upwards
		{(qrX + qrSizeMM + pageW - margin) / 2, -90}, // right of it, read downwards
	} {
		pdf.TransformBegin()
		pdf.TransformRotate(side.angle, side.cx, cy)
		pdf.Text(side.cx-w/2, cy+capH/2, "TEST")
		pdf.TransformEnd()
	}
	pdf.SetDrawColor(colorTest[0], colorTest[1], colorTest[2])
	pdf.SetLineWidth(1.5)
	pdf.Rect(3, 3, pageW-6, pageH-6, "D")
}

func field(pdf *fpdf.Fpdf, label, value string, x, y, w float64) {
	setColor(pdf, colorLabel)
	pdf.SetFont(fontRegular, "", 7)
	pdf.SetXY(x, y)
	pdf.CellFormat(w, 3.5, label, "", 0, "L", false, 0, "")
	if value == "" {
		value = "—"
	}
	singleLine(pdf, fontBold, value, x, y+3.5, w, 11, 7, colorText)
}

// singleLine draws text on one line, shrinking the font down to minSize and
// then truncating with an ellipsis, so long values never spill over.
func singleLine(pdf *fpdf.Fpdf, font, text string, x, y, w, size, minSize float64, c [3]int) {
	setColor(pdf, c)
	lines, sz := fitLines(pdf, font, text, w, size, minSize, 1)
	pdf.SetXY(x, y)
	pdf.CellFormat(w, sz*ptToMM*1.2, lines[0], "", 0, "L", false, 0, "")
}

// fitLines wraps text into at most maxLines lines of width w, trying font
// sizes from size down to minSize. If even minSize needs more lines, the
// last line is cut and ends with "…". It leaves the chosen font selected.
func fitLines(pdf *fpdf.Fpdf, font, text string, w, size, minSize float64, maxLines int) ([]string, float64) {
	text = strings.Join(strings.Fields(text), " ") // no control chars or newlines in a cell
	// CellFormat adds cMargin on both sides; SplitText accounts for it too.
	for sz := size; ; sz-- {
		if sz < minSize {
			sz = minSize
		}
		pdf.SetFont(font, "", sz)
		lines := wrap(pdf, text, w, maxLines)
		if len(lines) <= maxLines {
			return lines, sz
		}
		if sz == minSize {
			lines = lines[:maxLines]
			lines[maxLines-1] = truncate(pdf, lines[maxLines-1], w)
			return lines, sz
		}
	}
}

func wrap(pdf *fpdf.Fpdf, text string, w float64, maxLines int) []string {
	if maxLines == 1 {
		if pdf.GetStringWidth(text) <= w-2*pdf.GetCellMargin() {
			return []string{text}
		}
		return []string{text, ""} // signals "does not fit"
	}
	lines := pdf.SplitText(text, w)
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}

// truncate shortens s rune by rune until s+"…" fits w.
func truncate(pdf *fpdf.Fpdf, s string, w float64) string {
	r := []rune(s)
	for len(r) > 0 && pdf.GetStringWidth(string(r)+"…") > w-2*pdf.GetCellMargin() {
		r = r[:len(r)-1]
	}
	return strings.TrimRight(string(r), " ,") + "…"
}

func hr(pdf *fpdf.Fpdf, y float64) {
	pdf.SetDrawColor(200, 200, 200)
	pdf.SetLineWidth(0.2)
	pdf.Line(margin, y, pageW-margin, y)
}

// drawModules fills the dark modules of bc at (x, y), each w×h mm, as one
// vector path: crisp at any printer resolution, no image to encode (PNG
// encoding was two thirds of the worker's CPU in the sell-out), and one
// fill, so renderers draw no seams between neighbouring modules.
func drawModules(pdf *fpdf.Fpdf, bc barcode.Barcode, x, y, w, h float64) {
	for _, r := range darkRuns(bc) {
		x0, x1 := x+float64(r.from)*w, x+float64(r.to)*w
		y0 := y + float64(r.row)*h
		pdf.MoveTo(x0, y0)
		pdf.LineTo(x1, y0)
		pdf.LineTo(x1, y0+h)
		pdf.LineTo(x0, y0+h)
		pdf.ClosePath()
	}
	pdf.SetFillColor(0, 0, 0)
	pdf.DrawPath("F")
}

func setColor(pdf *fpdf.Fpdf, c [3]int) { pdf.SetTextColor(c[0], c[1], c[2]) }

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

package delivery

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/ticketsales/ticketsales/internal/states"
)

// pageTmpl is parsed once at start-up; a broken template is a programming
// error and should fail fast, not on the first customer request.
//
// html/template escapes every value contextually (event titles come from
// organisers and must not be able to inject markup) and rejects unsafe URL
// schemes such as javascript: in the PDF link. The page is self-contained
// (inline CSS, QR codes as data: URIs) so it works offline, in e-mail
// clients and under a strict CSP without extra endpoints.
var pageTmpl = template.Must(template.New("order").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.Title}}</title>
<style>
*{box-sizing:border-box}
body{margin:0;background:#f2f2f4;color:#141414;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:960px;margin:0 auto;padding:24px 16px}
header.event{background:#fff;border-radius:12px;padding:20px;margin-bottom:20px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{margin:0 0 8px;font-size:1.6rem;line-height:1.2;overflow-wrap:anywhere}
.meta{margin:2px 0;color:#444}
.order{margin:8px 0 0;color:#777;font-size:.9rem}
a.download{display:inline-block;margin-top:14px;padding:10px 18px;border-radius:8px;background:#1a56db;color:#fff;text-decoration:none;font-weight:600}
a.download:hover,a.download:focus{background:#1544b0}
.tickets{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));gap:16px}
.ticket{position:relative;background:#fff;border-radius:12px;padding:16px;box-shadow:0 1px 3px rgba(0,0,0,.08);border-top:6px solid #1a56db;overflow:hidden}
.ticket[data-status="refunded"]{border-top-color:#c80000}
.ticket[data-status="refunded"] img.qr{opacity:.35}
img.qr{display:block;width:200px;height:200px;margin:0 auto 12px;image-rendering:pixelated}
dl{display:grid;grid-template-columns:auto 1fr;gap:4px 12px;margin:0}
dt{color:#777;font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;align-self:center}
dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.digits{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;letter-spacing:.08em}
.status{display:inline-block;padding:1px 8px;border-radius:999px;font-size:.85rem;background:#e3f5e8;color:#176b2c}
.ticket[data-status="refunded"] .status{background:#fde2e2;color:#c80000}
.test-banner,.test-mark{-webkit-print-color-adjust:exact;print-color-adjust:exact}
.test-banner{margin:0 0 12px;padding:8px 12px;border-radius:8px;background:#ffc21a;color:#1a1300;font-weight:600}
.test-banner strong{font-weight:800;letter-spacing:.12em;margin-right:6px}
.ticket[data-sandbox]{border-top-color:#1a1300}
.test-mark{margin:-16px -16px 12px;padding:6px 12px;background:#ffc21a;color:#1a1300;text-align:center;font-weight:800;letter-spacing:.08em;overflow-wrap:anywhere}
.void{position:absolute;top:70px;left:50%;transform:translateX(-50%) rotate(-20deg);margin:0;padding:2px 14px;border:4px solid #c80000;border-radius:8px;color:#c80000;background:rgba(255,255,255,.85);font-size:2.6rem;font-weight:800;letter-spacing:.12em;pointer-events:none}
.ticket[data-sandbox] .void{top:101px}
@media print{body{background:#fff}a.download{display:none}.ticket,header.event{box-shadow:none;border:1px solid #ccc;break-inside:avoid}}
</style>
</head>
<body>
<main>
<header class="event">
{{if .Sandbox}}<p class="test-banner" role="note"><strong>TEST</strong> A sandbox order: these tickets are for testing and admit no one.</p>
{{end}}<h1>{{.EventTitle}}</h1>
{{with .Place}}<p class="meta venue">{{.}}</p>{{end}}
<p class="meta when">{{if .StartsISO}}<time datetime="{{.StartsISO}}">{{.When}}</time>{{else}}{{.When}}{{end}}</p>
<p class="order">Order #{{.OrderID}} · {{len .Tickets}} ticket{{if ne (len .Tickets) 1}}s{{end}}</p>
{{with .PDFURL}}<a class="download" href="{{.}}" download>Download PDF</a>{{end}}
</header>
<section class="tickets">
{{range .Tickets}}<article class="ticket" data-barcode="{{.Barcode}}" data-status="{{.StatusKey}}"{{if $.Sandbox}} data-sandbox{{end}}>
{{if $.Sandbox}}<p class="test-mark">TEST · not valid for entry</p>
{{end}}<img class="qr" src="{{.QR}}" alt="QR code for ticket {{.Number}}" width="200" height="200">
{{if .Void}}<p class="void" aria-hidden="true">VOID</p>
{{end}}<dl>
<dt>Ticket</dt><dd>{{.Number}}</dd>
<dt>Barcode</dt><dd class="digits">{{.Barcode}}</dd>
<dt>Seat</dt><dd>{{.Seat}}</dd>
{{with .Category}}<dt>Category</dt><dd>{{.}}</dd>
{{end}}<dt>Price</dt><dd>{{.Price}}</dd>
<dt>Status</dt><dd><span class="status">{{if .Void}}Refunded · VOID{{else}}{{.StatusText}}{{end}}</span></dd>
</dl>
</article>
{{end}}</section>
</main>
</body>
</html>
`))

type pageData struct {
	Order
	Title     string
	Place     string
	When      string
	StartsISO string
	Tickets   []pageTicket // shadows Order.Tickets
}

type pageTicket struct {
	Ticket
	QR         template.URL // trusted: built by us from PNG bytes
	StatusKey  string
	StatusText string
}

// RenderPage writes a complete, self-contained HTML5 order page: event,
// venue, city, local date/time, every ticket with its QR code, number,
// barcode digits, seat, price and status, and a "Download PDF" link to
// o.PDFURL (omitted when empty). A sandbox order's page says TEST in its
// title, above the event and on every ticket.
//
// The page is rendered into a buffer first so that a failure (e.g. a QR code
// that cannot be encoded) never leaves a half-written response in w.
func RenderPage(w io.Writer, o Order) error {
	d := pageData{
		Order: o,
		Title: pdfTitle(o),
		Place: joinNonEmpty(", ", o.Venue, o.City),
		When:  o.whenText(),
	}
	if !o.StartsAt.IsZero() {
		d.StartsISO = o.localStart().Format(time.RFC3339)
	}
	for _, t := range o.Tickets {
		png, err := QRPNG(t.QRContent())
		if err != nil {
			return fmt.Errorf("tickets: ticket %s: %w", t.Number, err)
		}
		pt := pageTicket{
			Ticket:     t,
			QR:         template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)),
			StatusKey:  "active",
			StatusText: "Active",
		}
		if t.Void() {
			pt.StatusKey, pt.StatusText = "refunded", "Refunded"
		} else if t.Status != "" && t.Status != states.TicketActive {
			pt.StatusKey, pt.StatusText = string(t.Status), string(t.Status)
		}
		d.Tickets = append(d.Tickets, pt)
	}

	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("tickets: render order page: %w", err)
	}
	_, err := buf.WriteTo(w)
	return err
}

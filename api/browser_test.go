package api_test

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ticketsales/ticketsales/test/testenv"
)

// TestGatewayPaymentInBrowser pays a gateway order on the built-in test
// payment page in headless Chromium (declining first, then paying), waits
// for the order workflow to issue the tickets, and opens the buyer's order
// page in the same browser: both tickets with their QR codes must render.
func TestGatewayPaymentInBrowser(t *testing.T) {
	f := newFixture(t)
	f.StartWorker(t)

	res := f.reserve(t, f.keyA, "parterre-3-20", "parterre-3-21")
	if res.Status != 201 {
		t.Fatalf("reserve: %d %s", res.Status, res.Body)
	}
	var r reservationBody
	res.Decode(t, &r)
	res = f.orderFromReservation(t, f.keyA, r.Data.ID, "gateway")
	if res.Status != 201 {
		t.Fatalf("order: %d %s", res.Status, res.Body)
	}
	var ob orderBody
	res.Decode(t, &ob)
	o := ob.Data
	if o.Status != "pending_payment" || o.Payment != "gateway" || !strings.HasPrefix(o.PaymentURL, f.URL+"/pay/") {
		t.Fatalf("gateway order: %+v", o)
	}

	ctx := newBrowser(t, 60*time.Second)
	browse := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	text := func(step string, sel chromedp.CSS) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return s
	}
	// submit clicks a form button and waits for the page the POST redirects to.
	submit := func(button chromedp.CSS) {
		t.Helper()
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(button))
		if err != nil {
			t.Fatalf("click %s: %v", button, err)
		}
		if resp.Status != 200 || resp.URL != o.PaymentURL {
			t.Fatalf("after %s: %d %s, want 200 %s", button, resp.Status, resp.URL, o.PaymentURL)
		}
	}

	// The payment page.
	browse("open the payment page", chromedp.Navigate(o.PaymentURL))
	wantAmount := fmt.Sprintf("%d.%02d %s", o.Amount.Amount/100, o.Amount.Amount%100, o.Amount.Currency)
	if got := text("amount", "#amount"); !strings.Contains(got, wantAmount) {
		t.Fatalf("payment page amount %q, want %q", got, wantAmount)
	}
	if got := text("description", "#description"); !strings.Contains(got, "Swan Lake") {
		t.Fatalf("payment page description %q", got)
	}
	submit("#decline")
	if got := text("result after decline", "#result"); !strings.Contains(got, "declined") {
		t.Fatalf("result after decline: %q", got)
	}
	var still orderBody
	f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyA).Decode(t, &still)
	if still.Data.Status != "pending_payment" {
		t.Fatalf("after a decline the order is %s", still.Data.Status)
	}
	submit("#pay")
	if got := text("result after payment", "#result"); !strings.Contains(got, "accepted") {
		t.Fatalf("result after payment: %q", got)
	}
	if gone, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#pay') === null`)); err != nil || !gone {
		t.Fatalf("a paid payment still offers to pay: %v %v", gone, err)
	}

	// The callback reaches the order workflow, which marks the order paid
	// and issues its tickets in one transaction: paid always means tickets.
	var (
		paid orderBody
		tb   struct{ Data []ticket }
		tres *testenv.Response
	)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		f.Get(t, fmt.Sprintf("/v1/orders/%d", o.ID), f.keyA).Decode(t, &paid)
		if paid.Data.Status == "paid" {
			break
		}
	}
	if paid.Data.Status != "paid" || paid.Data.PaidAt == nil {
		t.Fatalf("order after the gateway payment: %+v", paid.Data)
	}
	tres = f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", o.ID), f.keyA)
	tres.Decode(t, &tb)
	if tres.Status != 200 || len(tb.Data) != 2 {
		t.Fatalf("a paid order without its tickets: %d %s", tres.Status, tres.Body)
	}
	var barcodes []string
	orderURL := tb.Data[0].OrderURL
	for _, tk := range tb.Data {
		if tk.Status != "active" || len(tk.Barcode) != 13 || tk.OrderURL != orderURL {
			t.Fatalf("ticket: %+v", tk)
		}
		barcodes = append(barcodes, tk.Barcode)
	}
	if !strings.HasPrefix(orderURL, fmt.Sprintf("%s/o/%d?access_token=", f.URL, o.ID)) {
		t.Fatalf("order_url %q", orderURL)
	}

	// The order page, in the same browser.
	browse("open the order page", chromedp.Navigate(orderURL), chromedp.WaitVisible(chromedp.CSS("article.ticket")))
	type pageState struct {
		Barcodes []string `json:"barcodes"`
		QRLoaded []bool   `json:"qrLoaded"`
		Text     string   `json:"text"`
	}
	st, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](`({
		barcodes: Array.from(document.querySelectorAll('article.ticket'), a => a.dataset.barcode),
		qrLoaded: Array.from(document.querySelectorAll('img.qr'), i => i.complete && i.naturalWidth > 0),
		text: document.body.innerText,
	})`))
	if err != nil {
		t.Fatalf("read the order page: %v", err)
	}
	slices.Sort(barcodes)
	slices.Sort(st.Barcodes)
	if !slices.Equal(st.Barcodes, barcodes) {
		t.Fatalf("order page barcodes %v, want %v", st.Barcodes, barcodes)
	}
	if len(st.QRLoaded) != 2 || slices.Contains(st.QRLoaded, false) {
		t.Fatalf("QR images loaded: %v", st.QRLoaded)
	}
	if !strings.Contains(st.Text, "Swan Lake") {
		t.Fatalf("order page text has no event title:\n%s", st.Text)
	}
	for _, b := range barcodes {
		if !strings.Contains(st.Text, b) {
			t.Fatalf("order page text has no barcode %s:\n%s", b, st.Text)
		}
	}

	// A screenshot of the whole page is a real picture, not a blank one.
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "order-page.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() <= 300 || b.Dy() <= 300 {
		t.Fatalf("screenshot is %dx%d", b.Dx(), b.Dy())
	}
	if n := distinctColours(img); n <= 10 {
		t.Fatalf("screenshot has %d colours in a sample: blank", n)
	}

	// It is a sandbox order: the page says TEST above the event and on
	// every ticket, refunded ones too, each marking legible and over nothing
	// else (the VOID stamp stays below it), and the page does not scroll
	// sideways on a desktop or a phone.
	if res := f.refund(t, o.ID, tb.Data[1].ID); res.Status != 201 && res.Status != 202 {
		t.Fatalf("refund a ticket: %d %s", res.Status, res.Body)
	}
	browse("reload the order page", chromedp.Navigate(orderURL), chromedp.WaitVisible(chromedp.CSS("article.ticket")))
	type marking struct {
		Title    string   `json:"title"`
		Banner   string   `json:"banner"`
		Marks    []string `json:"marks"`
		Clear    []string `json:"clear"`
		Voids    int      `json:"voids"`
		Overflow bool     `json:"overflow"`
	}
	for _, vp := range []struct {
		name string
		w, h int64
		opts []chromedp.EmulateViewportOption
	}{{"desktop", 1280, 900, nil}, {"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}}} {
		browse(vp.name+" width", chromedp.EmulateViewport(vp.w, vp.h, vp.opts...))
		m, err := chromedp.Run(ctx, chromedp.Evaluate[marking](`(() => {
			const shown = e => e && e.checkVisibility() && e.getBoundingClientRect().height > 0 ? e.innerText.trim() : '';
			const box = e => e.getBoundingClientRect();
			return {
				title: document.title,
				banner: shown(document.querySelector('.test-banner')),
				marks: Array.from(document.querySelectorAll('article.ticket'), a => shown(a.querySelector('.test-mark'))),
				// What each mark overlaps or spills over, if anything.
				clear: Array.from(document.querySelectorAll('article.ticket'), a => {
					const m = a.querySelector('.test-mark');
					if (!m) return 'no mark';
					const mb = box(m), ab = box(a), q = box(a.querySelector('img.qr')), v = a.querySelector('.void');
					if (mb.left < ab.left - 0.5 || mb.right > ab.right + 0.5 || m.scrollWidth > m.clientWidth) return 'spills out of its ticket';
					if (mb.bottom > q.top) return 'covers the QR code';
					if (v && box(v).top < mb.bottom) return 'under the VOID stamp';
					return '';
				}),
				voids: document.querySelectorAll('article.ticket .void').length,
				overflow: document.documentElement.scrollWidth > window.innerWidth + 1,
			};
		})()`))
		if err != nil {
			t.Fatalf("%s: read the markings: %v", vp.name, err)
		}
		if !strings.HasPrefix(m.Title, "TEST") || !strings.HasPrefix(m.Banner, "TEST") || m.Voids != 1 || m.Overflow {
			t.Fatalf("%s: title %q, banner %q, %d VOID stamps, sideways scroll %v", vp.name, m.Title, m.Banner, m.Voids, m.Overflow)
		}
		if len(m.Marks) != 2 || len(m.Clear) != 2 {
			t.Fatalf("%s: marks %q", vp.name, m.Marks)
		}
		for i := range m.Marks {
			if !strings.HasPrefix(m.Marks[i], "TEST") || m.Clear[i] != "" {
				t.Fatalf("%s: ticket %d's mark %q: %s", vp.name, i+1, m.Marks[i], m.Clear[i])
			}
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s screenshot: %v", vp.name, err)
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "order-page-sandbox-"+vp.name+".png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDocsRenderOffline opens /docs in headless Chromium: the reference UI
// renders the operations from the served document, and every file the
// page loads comes from this server (its assets are in the binary), so it
// works behind a firewall.
func TestDocsRenderOffline(t *testing.T) {
	s := testenv.NewStack(t)
	ctx := newBrowser(t, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/docs#/operations/list-events")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes("List the company's events")`,
		chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("docs did not render the operations: %v\n%s", err, text)
	}
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`[location.href, ...performance.getEntriesByType('resource').map(e => e.name)]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) < 4 { // the page, its script, its styles, the document
		t.Fatalf("the docs page loaded only %v", loaded)
	}
	for _, u := range loaded {
		if !strings.HasPrefix(u, s.URL+"/") {
			t.Errorf("the docs page loaded %s from outside this server", u)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(80))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "docs.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProblemTypesPage: every problem's type links to a section of
// /docs/problems: the page has one for each code the document declares,
// naming its status, meaning and what to do; it fits 1280 and 390 px,
// passes the WCAG A/AA check and loads nothing from elsewhere.
func TestProblemTypesPage(t *testing.T) {
	s := testenv.NewStack(t)
	res := s.Get(t, "/v1/no-such-route", "")
	p := expectProblem(t, res, http.StatusNotFound, "not_found")
	ctx := newBrowser(t, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/v1/no-such-route")); err != nil {
		t.Fatal(err)
	}
	// The type, resolved against the request's URL as RFC 9457 says.
	target := s.URL + p.Type
	if err := chromedp.Do(ctx, chromedp.Navigate(target)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(':target h2') || {}).textContent || ''`))
	if err != nil || !strings.Contains(got, "not_found") || !strings.Contains(got, "404 Not Found") {
		t.Fatalf("%s: the targeted section says %q (%v)", target, got, err)
	}
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('main section[id]'), s => s.id)`))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	s.Get(t, "/openapi.json", "").Decode(t, &doc)
	codes := doc.Components.Schemas["Problem"].Properties["code"].Enum
	if len(codes) < 30 || !slices.Equal(ids, codes) {
		t.Fatalf("the page documents %v, the document declares %v", ids, codes)
	}
	pageFits(t, ctx, "problem-types", nil)
}

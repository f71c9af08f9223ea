package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	msgmail "github.com/emersion/go-message/mail"

	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/mail"
	"github.com/ticketsales/ticketsales/test/pdftext"
	"github.com/ticketsales/ticketsales/test/testenv/smtptest"
)

func TestProductionOrderTicketsAreEmailed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	be := &smtptest.Backend{}
	addr := smtptest.Start(t, be)
	mailer, err := mail.New("smtp://"+addr+"?tls=none", "", "tickets@ticketsales.test") // smtptest offers no STARTTLS
	if err != nil {
		t.Fatal(err)
	}
	f.Mailer = mailer
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	sandboxOrder := f.paidOrder(t, f.keyA, "parterre-1-20")
	prodOrder := f.paidOrder(t, prod, "parterre-1-21", "parterre-1-22")

	var got []smtptest.Message
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && len(got) == 0; time.Sleep(100 * time.Millisecond) {
		got = be.All()
	}
	time.Sleep(500 * time.Millisecond) // a second (sandbox) message would have arrived by now
	got = be.All()
	if len(got) != 1 {
		t.Fatalf("want exactly one e-mail (production only), got %d", len(got))
	}
	m := got[0]
	if len(m.Rcpt) != 1 || m.Rcpt[0] != "anna@example.com" {
		t.Fatalf("recipient: %v", m.Rcpt)
	}
	mr, err := msgmail.CreateReader(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := mr.Header.Subject()
	if subject != "Your tickets: Swan Lake" {
		t.Fatalf("subject %q", subject)
	}
	var text string
	var attachments int
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(part.Body)
		switch part.Header.(type) {
		case *msgmail.AttachmentHeader:
			attachments++
		case *msgmail.InlineHeader:
			text += string(body)
		}
	}
	// The tickets come as the order page's link and a list, the PDF made
	// when the buyer asks for it (docs/decisions.md, "The tickets e-mail").
	if attachments != 0 {
		t.Fatalf("the e-mail carries %d attachments, want none", attachments)
	}
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", prodOrder), prod).Decode(t, &tb)
	if len(tb.Data) != 2 {
		t.Fatalf("want 2 tickets, got %d", len(tb.Data))
	}
	for _, tk := range tb.Data {
		if !strings.Contains(text, tk.Number+": ") || strings.Contains(text, tk.Barcode) {
			t.Fatalf("the e-mail must list ticket %s without its code %s: %q", tk.Number, tk.Barcode, text)
		}
	}
	link := regexp.MustCompile(`https?://\S+/o/\d+\?access_token=\S+`).FindString(text)
	if !strings.Contains(link, fmt.Sprintf("/o/%d?access_token=", prodOrder)) {
		t.Fatalf("the e-mail lacks the order link: %q", text)
	}
	page := f.Get(t, strings.TrimPrefix(link, f.URL), "")
	pdfLink := regexp.MustCompile(`href="(/o/\d+/tickets\.pdf\?access_token=[^"]+)"`).FindSubmatch(page.Body)
	if page.Status != 200 || pdfLink == nil {
		t.Fatalf("the e-mail's link: %d, PDF link %q", page.Status, pdfLink)
	}
	pdf := f.Get(t, strings.ReplaceAll(string(pdfLink[1]), "&amp;", "&"), "")
	if pdf.Status != 200 || !bytes.HasPrefix(pdf.Body, []byte("%PDF")) || bytes.Count(pdf.Body, []byte("/Type /Page\n"))+bytes.Count(pdf.Body, []byte("/Type /Page ")) != 2 {
		t.Fatalf("the PDF behind the e-mail's link: %d, %d bytes", pdf.Status, len(pdf.Body))
	}
	var sandboxMailed, prodMailed bool
	_ = f.DB.NewRaw("SELECT emailed_at IS NOT NULL FROM orders WHERE id = ?", sandboxOrder).Scan(context.Background(), &sandboxMailed)
	_ = f.DB.NewRaw("SELECT emailed_at IS NOT NULL FROM orders WHERE id = ?", prodOrder).Scan(context.Background(), &prodMailed)
	if sandboxMailed || !prodMailed {
		t.Fatalf("emailed_at: sandbox %v, production %v", sandboxMailed, prodMailed)
	}
}

func TestPublicOrderPageAndPDF(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	id := f.paidOrder(t, f.keyA, "parterre-3-10", "parterre-3-11")
	var tb struct{ Data []ticket }
	f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), f.keyA).Decode(t, &tb)
	link := strings.TrimPrefix(tb.Data[0].OrderURL, f.URL)

	page := f.Get(t, link, "")
	if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("order page: %d %s", page.Status, page.Header.Get("Content-Type"))
	}
	html := string(page.Body)
	for _, tk := range tb.Data {
		if !strings.Contains(html, tk.Barcode) {
			t.Fatalf("order page lacks ticket %s", tk.Barcode)
		}
	}
	if strings.Count(html, `class="qr"`) != 2 || !strings.Contains(html, "Swan Lake") || !strings.Contains(html, "tickets.pdf?access_token=") {
		t.Fatal("order page lacks QR codes, the event or the PDF link")
	}
	pdf := f.Get(t, strings.Replace(link, "?", "/tickets.pdf?", 1), "")
	if pdf.Status != 200 || pdf.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(pdf.Body, []byte("%PDF")) {
		t.Fatalf("pdf: %d %s", pdf.Status, pdf.Header.Get("Content-Type"))
	}
	// A wrong or missing token is a 404, like an unknown order.
	for _, bad := range []string{
		fmt.Sprintf("/o/%d?access_token=wrong", id), fmt.Sprintf("/o/%d", id),
		fmt.Sprintf("/o/%d/tickets.pdf?access_token=wrong", id), "/o/1?access_token=x", "/o/abc",
	} {
		res := f.Get(t, bad, "")
		if res.Status != http.StatusNotFound || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%s: %d", bad, res.Status)
		}
	}
}

// TestSandboxTicketsAreMarkedTest pays a sandbox and a production order and
// reads their tickets as partner, buyer (the order page) and printer (the
// PDF): a sandbox ticket says TEST everywhere and its barcode is in the
// sandbox space; a production ticket says it nowhere and is outside it.
func TestSandboxTicketsAreMarkedTest(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.StartWorker(t)
	prod, _ := f.Key(t, f.companyA, apikey.Production)
	for _, tc := range []struct {
		name    string
		key     string
		sandbox bool
		seats   []string
	}{
		{"sandbox", f.keyA, true, []string{"parterre-2-10", "parterre-2-11", "parterre-2-12"}},
		{"production", prod, false, []string{"parterre-2-13", "parterre-2-14"}},
	} {
		id := f.paidOrder(t, tc.key, tc.seats...)
		var tb struct{ Data []ticket }
		f.Get(t, fmt.Sprintf("/v1/orders/%d/tickets", id), tc.key).Decode(t, &tb)
		if len(tb.Data) != len(tc.seats) {
			t.Fatalf("%s: %d tickets", tc.name, len(tb.Data))
		}
		for _, tk := range tb.Data {
			if tk.IsTest != tc.sandbox || delivery.IsSandboxBarcode(tk.Barcode) != tc.sandbox || !delivery.ValidEAN13(tk.Barcode) {
				t.Fatalf("%s ticket %s: is_test %v, barcode %s", tc.name, tk.Number, tk.IsTest, tk.Barcode)
			}
		}
		link := strings.TrimPrefix(tb.Data[0].OrderURL, f.URL)

		page := f.Get(t, link, "")
		if page.Status != 200 {
			t.Fatalf("%s order page: %d", tc.name, page.Status)
		}
		articles := regexp.MustCompile(`(?s)<article class="ticket".*?</article>`).FindAllString(string(page.Body), -1)
		if len(articles) != len(tc.seats) {
			t.Fatalf("%s order page: %d tickets", tc.name, len(articles))
		}
		for i, a := range articles {
			if marked := strings.Contains(a, `<p class="test-mark">TEST · not valid for entry</p>`); marked != tc.sandbox {
				t.Errorf("%s order page, ticket %d: marked TEST %v:\n%s", tc.name, i+1, marked, a)
			}
		}
		if banner := strings.Contains(string(page.Body), `<p class="test-banner"`); banner != tc.sandbox {
			t.Errorf("%s order page: TEST banner %v", tc.name, banner)
		}

		res := f.Get(t, strings.Replace(link, "?", "/tickets.pdf?", 1), "")
		if res.Status != 200 {
			t.Fatalf("%s pdf: %d", tc.name, res.Status)
		}
		pages, err := pdftext.Pages(res.Body)
		if err != nil || len(pages) != len(tc.seats) {
			t.Fatalf("%s pdf: %d pages (%v)", tc.name, len(pages), err)
		}
		for i, p := range pages {
			text := p.Text()
			if marked := strings.Contains(text, "TEST TICKET — NOT VALID FOR ENTRY"); marked != tc.sandbox || strings.Contains(text, "TEST") != tc.sandbox {
				t.Errorf("%s pdf page %d: marked TEST %v:\n%s", tc.name, i+1, marked, text)
			}
		}
	}
}

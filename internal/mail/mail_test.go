package mail

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	msgmail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-smtp"

	"github.com/ticketsales/ticketsales/test/testenv/smtptest"
)

const (
	cyrSubject = "Ваши билеты на концерт — заказ №42"
	pdfName    = "tickets-42.pdf"
	msgID      = "order-42-tickets@ticketsales"
)

var pdfData = append([]byte("%PDF-1.4 test\n"), bytes.Repeat([]byte{0, 0xff, 'x', '\n'}, 300)...)

func ticketMessage() Message {
	return Message{
		To:      "buyer@example.test",
		Subject: cyrSubject,
		Text:    "Здравствуйте! Билеты во вложении.",
		HTML:    "<p>Здравствуйте! Билеты во вложении.</p>",
		Attachments: []Attachment{
			{Filename: pdfName, ContentType: "application/pdf", Data: pdfData},
		},
		MessageID: msgID,
	}
}

// parsed is what the tests check in a delivered message.
type parsed struct {
	header      msgmail.Header
	texts       map[string]string // content type -> decoded body
	attachments map[string]attachmentPart
}

type attachmentPart struct {
	contentType string
	data        []byte
}

// parseWithGoMessage walks the MIME tree with go-message (transfer decoding included).
func parseWithGoMessage(t *testing.T, raw []byte) parsed {
	t.Helper()
	mr, err := msgmail.CreateReader(bytes.NewReader(raw))
	require.NoError(t, err)
	defer mr.Close()
	p := parsed{header: mr.Header, texts: map[string]string{}, attachments: map[string]attachmentPart{}}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		body, err := io.ReadAll(part.Body)
		require.NoError(t, err)
		switch h := part.Header.(type) {
		case *msgmail.InlineHeader:
			ct, _, err := h.ContentType()
			require.NoError(t, err)
			p.texts[ct] = string(body)
		case *msgmail.AttachmentHeader:
			name, err := h.Filename()
			require.NoError(t, err)
			ct, _, err := h.ContentType()
			require.NoError(t, err)
			p.attachments[name] = attachmentPart{contentType: ct, data: body}
		}
	}
	return p
}

func TestSMTPSend(t *testing.T) {
	be := &smtptest.Backend{}
	addr := smtptest.Start(t, be)

	s, err := New("smtp://"+addr+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	require.IsType(t, &SMTP{}, s)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Send(ctx, ticketMessage()))

	msgs := be.All()
	require.Len(t, msgs, 1)
	got := msgs[0]
	assert.Equal(t, []string{"buyer@example.test"}, got.Rcpt, "envelope recipient")
	assert.Equal(t, "tickets@example.test", got.From, "envelope sender")

	// The raw header must be 7-bit: the Cyrillic subject travels as encoded words.
	rawHeader, _, _ := bytes.Cut(got.Data, []byte("\r\n\r\n"))
	for _, c := range rawHeader {
		require.Less(t, c, byte(0x80), "non-ASCII byte in header:\n%s", rawHeader)
	}

	p := parseWithGoMessage(t, got.Data)
	subject, err := p.header.Subject()
	require.NoError(t, err)
	assert.Equal(t, cyrSubject, subject)
	assert.Equal(t, "<"+msgID+">", p.header.Get("Message-Id"))
	id, err := p.header.MessageID()
	require.NoError(t, err)
	assert.Equal(t, msgID, id)
	from, err := p.header.AddressList("From")
	require.NoError(t, err)
	require.Len(t, from, 1)
	assert.Equal(t, "tickets@example.test", from[0].Address)
	to, err := p.header.AddressList("To")
	require.NoError(t, err)
	require.Len(t, to, 1)
	assert.Equal(t, "buyer@example.test", to[0].Address)
	date, err := p.header.Date()
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), date, time.Minute)

	assert.Equal(t, "Здравствуйте! Билеты во вложении.", strings.TrimSpace(p.texts["text/plain"]))
	assert.Equal(t, "<p>Здравствуйте! Билеты во вложении.</p>", strings.TrimSpace(p.texts["text/html"]))

	att, ok := p.attachments[pdfName]
	require.True(t, ok, "attachment %q missing; got %v", pdfName, p.attachments)
	assert.Equal(t, "application/pdf", att.contentType)
	assert.Equal(t, pdfData, att.data)
}

func TestSMTPAuthPlainOverLoopback(t *testing.T) {
	be := &smtptest.Backend{Creds: [2]string{"shop", "s3cr:et/pw"}}
	addr := smtptest.Start(t, be)

	s, err := New("smtp://shop:s3cr%3Aet%2Fpw@"+addr+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s)} {
		assert.NotContains(t, out, "s3cr", "password printed: %s", out)
	}
	require.NoError(t, s.Send(context.Background(), ticketMessage()))
	msgs := be.All()
	require.Len(t, msgs, 1)
	assert.Equal(t, "shop", msgs[0].User)

	// Wrong password: wrapped error, no password in it.
	bad, err := New("smtp://shop:wrongpass@"+addr+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	err = bad.Send(context.Background(), ticketMessage())
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "send mail: "), err.Error())
	assert.NotContains(t, err.Error(), "wrongpass")
	assert.NotContains(t, err.Error(), "buyer")
	assert.False(t, IsPermanent(err), "a wrong password is fixed on this side, then a retry works")
}

func TestSMTPRespectsContext(t *testing.T) {
	// Accepts TCP connections (kernel backlog) but never greets.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })

	s, err := New("smtp://"+l.Addr().String()+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Send(ctx, ticketMessage())
	require.Error(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.True(t, strings.HasPrefix(err.Error(), "send mail: "), err.Error())
	assert.False(t, IsPermanent(err))
}

// smtp:// requires STARTTLS: a server that does not offer it (or a man in
// the middle that strips it) gets nothing; tls=none opts out explicitly.
func TestSMTPRequiresSTARTTLS(t *testing.T) {
	be := &smtptest.Backend{}
	addr := smtptest.Start(t, be) // offers no STARTTLS

	s, err := New("smtp://"+addr, "", "tickets@example.test")
	require.NoError(t, err)
	err = s.Send(context.Background(), ticketMessage())
	require.Error(t, err, "sent without TLS")
	assert.Contains(t, err.Error(), "STARTTLS")
	assert.False(t, IsPermanent(err), "a TLS failure is fixed on the servers' side, then a retry works")
	assert.Empty(t, be.All())

	plain, err := New("smtp://"+addr+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	assert.Equal(t, "smtp://"+addr+"?tls=none", fmt.Sprint(plain))
	require.NoError(t, plain.Send(context.Background(), ticketMessage()))
	require.Len(t, be.All(), 1)
	assert.False(t, be.All()[0].TLS)
}

func TestSMTPStartTLS(t *testing.T) {
	be := &smtptest.Backend{}
	addr, roots := smtptest.StartTLS(t, be)
	s, err := NewSMTP("smtp://"+addr, "tickets@example.test")
	require.NoError(t, err)
	s.rootCAs = roots
	require.NoError(t, s.Send(context.Background(), ticketMessage()))
	msgs := be.All()
	require.Len(t, msgs, 1)
	assert.True(t, msgs[0].TLS, "the message travelled in clear")
	assert.Equal(t, []string{"buyer@example.test"}, msgs[0].Rcpt)

	// The certificate is verified: a server this client does not trust is refused.
	untrusted, err := NewSMTP("smtp://"+addr, "tickets@example.test")
	require.NoError(t, err)
	require.Error(t, untrusted.Send(context.Background(), ticketMessage()))
	assert.Len(t, be.All(), 1)
}

// A refused recipient: 5xx is permanent, 4xx is not, and neither error
// names the recipient, though the server's reply does.
func TestSMTPRefusedRecipient(t *testing.T) {
	for _, c := range []struct {
		code      int
		permanent bool
	}{{550, true}, {451, false}} {
		t.Run(fmt.Sprint(c.code), func(t *testing.T) {
			be := &smtptest.Backend{Rcpt: func(to string) error {
				return &smtp.SMTPError{Code: c.code, EnhancedCode: smtp.EnhancedCode{c.code / 100, 1, 1},
					Message: fmt.Sprintf("<%s>: Recipient address rejected (user %s, %s)", to, "Buyer", strings.ToUpper(to))}
			}}
			addr := smtptest.Start(t, be)
			s, err := New("smtp://"+addr+"?tls=none", "", "tickets@example.test")
			require.NoError(t, err)
			err = s.Send(context.Background(), ticketMessage())
			require.Error(t, err)
			assert.Equal(t, c.permanent, IsPermanent(err), err.Error())
			assert.Contains(t, err.Error(), fmt.Sprint(c.code))
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				assert.NotContains(t, strings.ToLower(e.Error()), "buyer", "the recipient leaks: %s", e.Error())
			}
			assert.Empty(t, be.All())
		})
	}
}

// TestSMTPRefusedSender: a 5xx to MAIL FROM refuses our sender, a setting
// fixed on our side: not permanent, a retry after the fix delivers — but
// for a message too big.
func TestSMTPRefusedSender(t *testing.T) {
	be := &smtptest.Backend{MailFrom: func(string) error {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "sender not allowed"}
	}}
	s, err := New("smtp://"+smtptest.Start(t, be)+"?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	err = s.Send(context.Background(), ticketMessage())
	require.Error(t, err)
	assert.False(t, IsPermanent(err), err.Error())

	// But a message too big for the server (552, or 5.3.4 under another
	// code) stays too big: no retry can deliver it.
	for _, refusal := range []*smtp.SMTPError{
		{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: "message size exceeds fixed maximum message size"},
		{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 3, 4}, Message: "message too big for system"},
	} {
		be := &smtptest.Backend{MailFrom: func(string) error { return refusal }}
		s, err := New("smtp://"+smtptest.Start(t, be)+"?tls=none", "", "tickets@example.test")
		require.NoError(t, err)
		err = s.Send(context.Background(), ticketMessage())
		require.Error(t, err)
		assert.True(t, IsPermanent(err), err.Error())
	}
}

// mimeParts walks a message with only the standard library and returns
// leaf parts (header + transfer-decoded body).
func mimeParts(t *testing.T, header map[string][]string, body io.Reader) []stdPart {
	t.Helper()
	get := func(k string) string {
		if v := header[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	ct, params, err := mime.ParseMediaType(get("Content-Type"))
	require.NoError(t, err)
	if strings.HasPrefix(ct, "multipart/") {
		var out []stdPart
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart() // raw: we decode base64 ourselves below
			if errors.Is(err, io.EOF) {
				return out
			}
			require.NoError(t, err)
			out = append(out, mimeParts(t, p.Header, p)...)
		}
	}
	data, err := io.ReadAll(body)
	require.NoError(t, err)
	if strings.EqualFold(get("Content-Transfer-Encoding"), "base64") {
		data, err = io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
		require.NoError(t, err)
	}
	return []stdPart{{contentType: ct, disposition: get("Content-Disposition"), data: data}}
}

type stdPart struct {
	contentType, disposition string
	data                     []byte
}

func TestOutbox(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox") // must be created by New
	s, err := New("", dir, "tickets@example.test")
	require.NoError(t, err)
	require.IsType(t, &Outbox{}, s)

	ctx := context.Background()
	m := ticketMessage()
	require.NoError(t, s.Send(ctx, m))
	m.Text = "retry" // a retried send replaces the earlier file
	require.NoError(t, s.Send(ctx, m))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "want exactly one file (no duplicates, no temp leftovers)")
	assert.Equal(t, msgID+".eml", entries[0].Name())

	f, err := os.Open(filepath.Join(dir, entries[0].Name()))
	require.NoError(t, err)
	defer f.Close()
	msg, err := netmail.ReadMessage(f)
	require.NoError(t, err)

	to, err := msg.Header.AddressList("To")
	require.NoError(t, err)
	require.Len(t, to, 1)
	assert.Equal(t, "buyer@example.test", to[0].Address)
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	require.NoError(t, err)
	assert.Equal(t, cyrSubject, subject)
	assert.Equal(t, "<"+msgID+">", msg.Header.Get("Message-ID"))

	var found bool
	for _, p := range mimeParts(t, msg.Header, msg.Body) {
		if p.contentType == "text/plain" {
			assert.Contains(t, string(p.data), "retry")
		}
		disp, params, err := mime.ParseMediaType(p.disposition)
		if err != nil || disp != "attachment" {
			continue
		}
		found = true
		assert.Equal(t, pdfName, params["filename"])
		assert.Equal(t, "application/pdf", p.contentType)
		assert.Equal(t, pdfData, p.data)
	}
	assert.True(t, found, "no attachment part")

	// Without a MessageID every send gets its own file.
	m.MessageID = ""
	require.NoError(t, s.Send(ctx, m))
	require.NoError(t, s.Send(ctx, m))
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3)
}

func TestFileName(t *testing.T) {
	assert.Equal(t, "order-42-tickets@ticketsales.eml", fileName("<order-42-tickets@ticketsales>"))
	a, b := fileName("../a/b"), fileName("../a:b")
	assert.NotEqual(t, a, b, "distinct IDs must not collide")
	for _, n := range []string{a, b, fileName(strings.Repeat("x", 500)), fileName("")} {
		assert.Equal(t, n, filepath.Base(n))
		assert.False(t, strings.HasPrefix(n, "."), n)
		assert.True(t, strings.HasSuffix(n, ".eml"), n)
		assert.LessOrEqual(t, len(n), 120)
	}
}

func TestNewErrors(t *testing.T) {
	for _, u := range []string{"http://x", "smtp://", "smtp://host:notaport", "smtp://host:0"} {
		_, err := New(u, "", "tickets@example.test")
		assert.Error(t, err, u)
	}
	_, err := New("smtp://user:topsecret@host:bad", "", "tickets@example.test")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "topsecret")

	_, err = New("smtp://localhost", "", "not an address")
	assert.Error(t, err)
	_, err = New("", t.TempDir(), "not an address")
	assert.Error(t, err)
	_, err = New("", "", "tickets@example.test")
	assert.Error(t, err)
	_, err = New("", t.TempDir(), "")
	assert.Error(t, err)

	s, err := New("smtps://mail.example.test", "", "tickets@example.test")
	require.NoError(t, err)
	assert.Equal(t, "smtps://mail.example.test:465", fmt.Sprint(s))
	s, err = New("smtp://mail.example.test", "", "tickets@example.test")
	require.NoError(t, err)
	assert.Equal(t, "smtp://mail.example.test:587", fmt.Sprint(s))
	s, err = New("smtp://mail.example.test:25?tls=none", "", "tickets@example.test")
	require.NoError(t, err)
	assert.Equal(t, "smtp://mail.example.test:25?tls=none", fmt.Sprint(s))

	// TLS is given up only by tls=none, on smtp:// only; anything else is
	// refused at start-up rather than guessed.
	for _, u := range []string{"smtp://host?tls=", "smtp://host?tls=opportunistic", "smtp://host?tsl=none",
		"smtps://host?tls=none", "smtp://host?tls=none&x=1"} {
		_, err := New(u, "", "tickets@example.test")
		assert.Error(t, err, u)
	}
}

// An outbox failure leaves the recipient out too.
func TestOutboxErrorOmitsRecipient(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	s, err := New("", dir, "tickets@example.test")
	require.NoError(t, err)
	m := ticketMessage()
	m.To = "buyer@example.test\r\nBcc: x"
	err = s.Send(context.Background(), m)
	require.Error(t, err)
	assert.True(t, IsPermanent(err), "a message that cannot be composed never can")
	assert.NotContains(t, strings.ToLower(err.Error()), "buyer")
}

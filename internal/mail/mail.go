// Package mail sends buyers their tickets by e-mail: over SMTP in production,
// or as .eml files in an outbox directory when no SMTP server is configured
// (development, tests).
//
// SMTP is encrypted unless the URL says otherwise: smtp:// requires STARTTLS
// (a server that does not offer it is refused, so a man in the middle cannot
// strip it), smtp://host?tls=none opts out for a local mail catcher, and
// smtps:// is implicit TLS.
//
// A failed send returns an *Error: its text never holds the recipient's
// address, and Permanent says whether retrying can help.
package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// DefaultTimeout bounds one SMTP delivery when ctx has no earlier deadline.
const DefaultTimeout = 30 * time.Second

// Message is one e-mail.
type Message struct {
	To          string // one recipient address
	Subject     string
	Text        string // plain-text body
	HTML        string // optional HTML alternative
	Attachments []Attachment
	// MessageID makes re-sending the same message recognisable (e.g.
	// "order-42-tickets@ticketsales"); set as the Message-ID header.
	MessageID string
}

// Attachment is one file attached to a Message.
type Attachment struct {
	Filename    string
	ContentType string // e.g. "application/pdf"
	Data        []byte
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// New returns an SMTP sender when smtpURL is set, else an Outbox writing
// into outboxDir (created if missing). from is the From address.
//
// smtpURL is smtp://[user:pass@]host[:port] (port 587, STARTTLS required),
// smtp://[user:pass@]host[:port]?tls=none (no TLS at all: only for a mail
// catcher on a trusted network) or smtps://[user:pass@]host[:port] (port 465,
// implicit TLS).
func New(smtpURL, outboxDir, from string) (Sender, error) {
	if from == "" {
		return nil, errors.New("mail: from address is empty")
	}
	if smtpURL != "" {
		return NewSMTP(smtpURL, from)
	}
	if outboxDir == "" {
		return nil, errors.New("mail: neither SMTP URL nor outbox directory set")
	}
	if _, err := buildMsg(from, Message{To: "check@example.invalid"}); err != nil {
		return nil, fmt.Errorf("mail: from address: %w", err)
	}
	o := &Outbox{Dir: outboxDir, From: from}
	if err := o.init(); err != nil {
		return nil, err
	}
	return o, nil
}

// SMTP sends over SMTP. Create it with New or NewSMTP. Fields are unexported
// and String is overridden so the password never ends up in logs.
type SMTP struct {
	host        string
	port        int
	user, pass  string
	implicitTLS bool
	noTLS       bool // the URL opted out of TLS (tls=none)
	from        string
	// rootCAs verifies the server's certificate; nil: the system's roots.
	// Tests set it to trust their own server.
	rootCAs *x509.CertPool
	// Timeout bounds one delivery; DefaultTimeout if zero.
	Timeout time.Duration
}

// NewSMTP parses smtpURL (see New) into an SMTP sender.
func NewSMTP(smtpURL, from string) (*SMTP, error) {
	u, err := url.Parse(smtpURL)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep only the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("mail: parse SMTP URL: %w", err)
	}
	s := &SMTP{from: from, host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		s.port = 587
	case "smtps":
		s.port, s.implicitTLS = 465, true
	default:
		return nil, fmt.Errorf("mail: SMTP URL scheme %q not supported (want smtp or smtps)", u.Scheme)
	}
	if s.host == "" {
		return nil, errors.New("mail: SMTP URL has no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("mail: SMTP URL port %q invalid", p)
		}
		s.port = n
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
	}
	q := u.Query()
	for k := range q {
		if k != "tls" {
			return nil, fmt.Errorf("mail: SMTP URL parameter %q not supported (only tls)", k)
		}
	}
	switch mode := q.Get("tls"); {
	case q.Has("tls") && s.implicitTLS:
		return nil, errors.New("mail: SMTP URL parameter tls applies to smtp:// only (smtps:// is always TLS)")
	case mode == "none":
		s.noTLS = true
	case q.Has("tls"):
		return nil, fmt.Errorf("mail: SMTP URL parameter tls=%q not supported (only tls=none; STARTTLS is required otherwise)", mode)
	}
	// Fail at start-up rather than on the first order.
	if _, err := buildMsg(s.from, Message{To: "check@example.invalid"}); err != nil {
		return nil, fmt.Errorf("mail: from address: %w", err)
	}
	return s, nil
}

// String describes the server without the password.
func (s *SMTP) String() string {
	scheme := "smtp"
	if s.implicitTLS {
		scheme = "smtps"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(s.host, strconv.Itoa(s.port))}
	if s.user != "" {
		u.User = url.User(s.user)
	}
	if s.noTLS {
		u.RawQuery = "tls=none"
	}
	return u.String()
}

// GoString keeps %#v from printing the password too.
func (s *SMTP) GoString() string { return "mail.SMTP(" + s.String() + ")" }

// Send delivers m over one fresh connection, so concurrent sends share no
// state. A failure is an *Error.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if err := s.send(ctx, m); err != nil {
		return deliveryError(err, m.To)
	}
	return nil
}

// Error is a failed delivery as it leaves this package. Its text is scrubbed
// of the recipient's address (servers often echo it, and the text ends up in
// Temporal's history, which holds no personal data) and it wraps no raw
// cause that could carry the address, only a context error that cut the
// delivery short.
type Error struct {
	msg string
	// Permanent: the server refused the message for good (a 5xx reply to
	// RCPT TO or DATA, or 552 / 5.3.4 "too big" to MAIL FROM), or it cannot
	// be composed; sending it
	// again cannot succeed. Connection, TLS and authentication failures are
	// not permanent: they are fixed on the sending side, then a retry works.
	Permanent bool
	ctxErr    error
}

func (e *Error) Error() string { return e.msg }

// Unwrap exposes context.Canceled or context.DeadlineExceeded, if either
// ended the delivery.
func (e *Error) Unwrap() error { return e.ctxErr }

// IsPermanent reports whether err is a delivery that cannot succeed on retry.
func IsPermanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}

// errCompose marks a message that cannot be built (e.g. an invalid address).
var errCompose = errors.New("compose message")

func deliveryError(err error, to string) *Error {
	e := &Error{msg: "send mail: " + scrub(err.Error(), to), Permanent: errors.Is(err, errCompose)}
	var se *gomail.SendError
	if errors.As(err, &se) {
		// A 5xx to RCPT TO or DATA refuses this message for good. One to
		// MAIL FROM mostly refuses our sender (a configuration to fix on
		// our side): a retry after the fix works, so it is not permanent —
		// but for 552 / 5.3.4, the message's declared size over the
		// server's limit (RFC 1870, RFC 3463), which no retry changes.
		code := se.ErrorCode()
		tooBig := code == 552 || se.EnhancedStatusCode() == "5.3.4"
		e.Permanent = e.Permanent || (code >= 500 && code < 600 && (se.Reason != gomail.ErrSMTPMailFrom || tooBig))
	}
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			e.ctxErr = c
		}
	}
	return e
}

// addressLike matches anything shaped like an e-mail address, however a
// server quotes or re-cases the recipient it echoes.
var addressLike = regexp.MustCompile(`[^\s<>()\[\]"',;:]+@[^\s<>()\[\]"',;:]+`)

// scrub removes the recipient from a server's or library's text: every
// address-shaped word, and the recipient's local part on its own ("no such
// user: anna").
func scrub(text, to string) string {
	text = addressLike.ReplaceAllString(text, "[redacted]")
	if i := strings.LastIndex(to, "@"); i > 0 {
		local := regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(to[:i]) + `\b`)
		text = local.ReplaceAllString(text, "[redacted]")
	}
	return text
}

func (s *SMTP) send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg, err := buildMsg(s.from, m)
	if err != nil {
		return fmt.Errorf("%w: %w", errCompose, err)
	}

	// go-mail applies its timeout as the connection deadline; shrink it to
	// ctx's deadline so that one covers the whole exchange too.
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
		if timeout <= 0 {
			return context.DeadlineExceeded
		}
	}

	// Mandatory: a server (or a man in the middle) that offers no STARTTLS
	// is refused rather than sent the message in clear. No
	// WithTLSPortPolicy: it adds a silent port-25 fallback.
	policy := gomail.TLSMandatory
	if s.noTLS {
		policy = gomail.NoTLS
	}
	opts := []gomail.Option{
		gomail.WithPort(s.port),
		gomail.WithTimeout(timeout),
		gomail.WithTLSPolicy(policy),
	}
	if s.rootCAs != nil {
		opts = append(opts, gomail.WithTLSConfig(&tls.Config{ServerName: s.host, RootCAs: s.rootCAs, MinVersion: tls.VersionTLS12}))
	}
	if s.implicitTLS {
		opts = append(opts, gomail.WithSSL())
	}
	if s.user != "" {
		// PLAIN/LOGIN refuse to send the password unencrypted except to
		// localhost, so even tls=none cannot leak it to a remote host.
		opts = append(opts,
			gomail.WithUsername(s.user), gomail.WithPassword(s.pass),
			gomail.WithOpportunisticSMTPAuth(
				gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA1,
				gomail.SMTPAuthCramMD5, gomail.SMTPAuthPlain, gomail.SMTPAuthLogin,
			))
	}
	// Debug logging stays off: it would record the SMTP dialogue.
	c, err := gomail.NewClient(s.host, opts...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}

	conn, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return errors.Join(fmt.Errorf("connect to %s: %w", net.JoinHostPort(s.host, strconv.Itoa(s.port)), err), ctx.Err())
	}
	// Cancelling ctx aborts a transfer in progress, not just the dial.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()

	if err := c.SendWithSMTPClient(conn, msg); err != nil {
		_ = conn.Close()
		return errors.Join(err, ctx.Err())
	}
	// The server has accepted the message; a failing QUIT must not trigger a resend.
	_ = c.CloseWithSMTPClient(conn)
	return nil
}

// buildMsg composes m as a MIME message: text/plain, optional text/html
// alternative, then attachments. go-mail encodes non-ASCII headers (e.g.
// Cyrillic subjects) as RFC 2047 UTF-8 encoded words.
func buildMsg(from string, m Message) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("from %q: %w", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	if id := strings.Trim(strings.TrimSpace(m.MessageID), "<>"); id != "" {
		msg.SetMessageIDWithValue(id)
	} else {
		msg.SetMessageID()
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if m.HTML != "" {
		msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	}
	for _, a := range m.Attachments {
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		if err := msg.AttachReader(a.Filename, bytes.NewReader(a.Data),
			gomail.WithFileContentType(gomail.ContentType(ct))); err != nil {
			return nil, fmt.Errorf("attach %s: %w", a.Filename, err)
		}
	}
	return msg, nil
}

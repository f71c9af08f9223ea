// Package mail sends buyers their tickets by e-mail: over SMTP in production,
// or as .eml files in an outbox directory when no SMTP server is configured
// (development, tests).
package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
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
// smtpURL is smtp://[user:pass@]host[:port] (port 587, STARTTLS when the
// server offers it, plain otherwise) or smtps://[user:pass@]host[:port]
// (port 465, implicit TLS).
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
	from        string
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
	return u.String()
}

// GoString keeps %#v from printing the password too.
func (s *SMTP) GoString() string { return "mail.SMTP(" + s.String() + ")" }

// Send delivers m over one fresh connection, so concurrent sends share no state.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if err := s.send(ctx, m); err != nil {
		return fmt.Errorf("send mail to %s: %w", m.To, err)
	}
	return nil
}

func (s *SMTP) send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg, err := buildMsg(s.from, m)
	if err != nil {
		return err
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

	opts := []gomail.Option{
		gomail.WithPort(s.port),
		gomail.WithTimeout(timeout),
		// Opportunistic: STARTTLS when offered, plain for local catchers that
		// offer none. No WithTLSPortPolicy: it adds a silent port-25 fallback.
		gomail.WithTLSPolicy(gomail.TLSOpportunistic),
	}
	if s.implicitTLS {
		opts = append(opts, gomail.WithSSL())
	}
	if s.user != "" {
		// PLAIN/LOGIN refuse to send the password unencrypted except to
		// localhost, so opportunistic TLS cannot leak it to a remote host.
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

// Package smtptest runs a real SMTP server in-process for tests, keeping
// what it receives in memory.
package smtptest

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one message as the server received it.
type Message struct {
	From string
	Rcpt []string
	Data []byte
	User string // authenticated user, if any
}

// Backend keeps received messages; with Creds set it offers AUTH PLAIN and
// requires it.
type Backend struct {
	Creds [2]string

	mu   sync.Mutex
	msgs []Message
}

func (b *Backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{b: b}, nil }

// All returns what arrived so far.
func (b *Backend) All() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs...)
}

type session struct {
	b   *Backend
	cur Message
}

func (s *session) AuthMechanisms() []string {
	if s.b.Creds[0] == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.b.Creds[0] || pass != s.b.Creds[1] {
			return smtp.ErrAuthFailed
		}
		s.cur.User = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.b.Creds[0] != "" && s.cur.User == "" {
		return smtp.ErrAuthRequired
	}
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.Rcpt = append(s.cur.Rcpt, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = data
	s.b.mu.Lock()
	s.b.msgs = append(s.b.msgs, s.cur)
	s.b.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = Message{User: s.cur.User} }
func (s *session) Logout() error { return nil }

// Start runs a plain (no TLS, so no STARTTLS) SMTP server on loopback until
// the test ends and returns its address.
func Start(t testing.TB, be *Backend) string {
	t.Helper()
	srv := smtp.NewServer(be)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

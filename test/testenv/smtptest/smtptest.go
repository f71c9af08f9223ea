// Package smtptest runs a real SMTP server in-process for tests, keeping
// what it receives in memory.
package smtptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
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
	TLS  bool   // the message came over TLS
}

// Backend keeps received messages; with Creds set it offers AUTH PLAIN and
// requires it.
type Backend struct {
	Creds [2]string
	// Rcpt, when set, answers each RCPT TO: a non-nil error (e.g. an
	// *smtp.SMTPError with code 550 or 451) refuses the recipient.
	Rcpt func(to string) error
	// MailFrom, when set, answers MAIL FROM the same way.
	MailFrom func(from string) error

	mu   sync.Mutex
	msgs []Message
}

func (b *Backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	_, isTLS := c.TLSConnectionState()
	return &session{b: b, tls: isTLS}, nil
}

// All returns what arrived so far.
func (b *Backend) All() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs...)
}

type session struct {
	b   *Backend
	tls bool // over TLS (STARTTLS ends the plain session and begins a new one)
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
	if s.b.MailFrom != nil {
		if err := s.b.MailFrom(from); err != nil {
			return err
		}
	}
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.b.Rcpt != nil {
		if err := s.b.Rcpt(to); err != nil {
			return err
		}
	}
	s.cur.Rcpt = append(s.cur.Rcpt, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.Data = data
	s.cur.TLS = s.tls
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
	return serve(t, be, nil)
}

// StartTLS runs an SMTP server on loopback that offers STARTTLS with a
// certificate for 127.0.0.1, and returns its address and the pool that
// trusts that certificate.
func StartTLS(t testing.TB, be *Backend) (string, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "smtptest"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return serve(t, be, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}), roots
}

func serve(t testing.TB, be *Backend, tlsConfig *tls.Config) string {
	t.Helper()
	srv := smtp.NewServer(be)
	srv.TLSConfig = tlsConfig
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

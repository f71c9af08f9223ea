package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrForbiddenAddress: an endpoint's host is or resolves to an address no
// delivery may go to.
var ErrForbiddenAddress = errors.New("address not allowed for webhooks")

// Policy says where deliveries may go. Outside development, and always for
// production endpoints, they go only to public addresses over https.
type Policy struct {
	// AllowPrivate lets deliveries reach loopback, private and link-local
	// addresses: a sandbox endpoint in development only.
	AllowPrivate bool
	// RequireHTTPS refuses plain http (production endpoints).
	RequireHTTPS bool
}

// PolicyFor is the rule for an endpoint of the environment in a deployment.
func PolicyFor(development, sandbox bool) Policy {
	return Policy{AllowPrivate: development && sandbox, RequireHTTPS: !sandbox}
}

// Rules are a deployment's address rules.
type Rules struct {
	Development bool
	// AnyAddress lifts the rule for every endpoint: a development
	// deployment's test harnesses only (config refuses it elsewhere).
	AnyAddress bool
}

// For is the policy of an endpoint of the environment.
func (r Rules) For(sandbox bool) Policy {
	if r.AnyAddress && r.Development {
		return Policy{AllowPrivate: true}
	}
	return PolicyFor(r.Development, sandbox)
}

// forbidden are ranges never reached outside development beyond the
// standard library's classes: "this network", shared address space
// (carrier-grade NAT), benchmarking, IPv4-mapped and NAT64 forms are
// unmapped first.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (::a.b.c.d), deprecated
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to any IPv4 address
	netip.MustParsePrefix("2002::/16"),       // 6to4: likewise
	netip.MustParsePrefix("fec0::/10"),       // site-local, deprecated
}

// Forbidden tells whether no delivery may reach ip outside development:
// loopback, private, link-local (169.254.0.0/16, the cloud metadata
// address among them), unspecified, multicast and reserved ranges.
func Forbidden(ip netip.Addr) bool {
	ip = ip.Unmap()
	// Only globally routable unicast may be reached; the checks below
	// name the classes IsGlobalUnicast still lets through.
	if !ip.IsGlobalUnicast() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || !ip.IsValid() {
		return true
	}
	for _, p := range forbidden {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// CheckURL validates an endpoint address under the policy: an absolute
// http(s) URL without credentials, https when required, and a host that is
// not, and does not resolve to, a forbidden address. It returns a message
// fit for the partner.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%w: not an absolute URL", ErrBadURL)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("%w: the scheme must be https (or http for sandbox endpoints)", ErrBadURL)
	case p.RequireHTTPS && u.Scheme != "https":
		return fmt.Errorf("%w: production endpoints must use https", ErrBadURL)
	case u.User != nil:
		return fmt.Errorf("%w: credentials in the URL are not allowed", ErrBadURL)
	case u.Fragment != "":
		return fmt.Errorf("%w: a fragment is not allowed", ErrBadURL)
	}
	if p.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return fmt.Errorf("%w: %s is a loopback name", ErrForbiddenAddress, host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Forbidden(ip) {
			return fmt.Errorf("%w: %s is a loopback, private, link-local or reserved address", ErrForbiddenAddress, ip)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("%w: the host %s does not resolve", ErrBadURL, host)
	}
	for _, ip := range ips {
		if Forbidden(ip) {
			return fmt.Errorf("%w: %s resolves to %s, a loopback, private, link-local or reserved address", ErrForbiddenAddress, host, ip.Unmap())
		}
	}
	return nil
}

// ErrBadURL: an endpoint URL is malformed or of a scheme not allowed.
var ErrBadURL = errors.New("bad webhook URL")

// Control is a net.Dialer Control hook that refuses to connect to a
// forbidden address: it checks the address actually dialled, after DNS, so
// a name that resolved to a public address when the endpoint was saved and
// to a private one now (DNS rebinding) is refused too.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	if p.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
	}
	if Forbidden(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr().Unmap())
	}
	return nil
}

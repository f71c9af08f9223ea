package ratelimit

import (
	"net/netip"
	"strings"
)

// Client is the key a client's failures count under: the address a trusted
// proxy put in its header (the last of a list: the one the proxy saw
// itself) when the deployment has one, else the TCP peer's, grouped by
// AddressGroup. A missing or unusable header counts under the peer, the
// proxy.
func Client(trustedHeader, remoteAddr string) string {
	if trustedHeader != "" {
		v := trustedHeader
		if i := strings.LastIndexByte(v, ','); i >= 0 {
			v = v[i+1:]
		}
		if a, err := netip.ParseAddr(strings.TrimSpace(v)); err == nil {
			return AddressGroup(a.String())
		}
	}
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return AddressGroup(ap.Addr().String())
	}
	return AddressGroup(remoteAddr)
}

// AddressGroup is the client an address belongs to: an IPv4 address
// itself, an IPv6 address's /64 (one client usually has a whole /64 and
// could otherwise change address at every attempt).
func AddressGroup(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

package ratelimit

import "testing"

func TestAddressGroup(t *testing.T) {
	for in, want := range map[string]string{
		"203.0.113.7":          "203.0.113.7",
		"::ffff:203.0.113.7":   "203.0.113.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"not an address":       "not an address",
	} {
		if got := AddressGroup(in); got != want {
			t.Errorf("AddressGroup(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClient(t *testing.T) {
	for _, c := range []struct{ header, peer, want string }{
		{"", "203.0.113.7:5000", "203.0.113.7"},
		{"", "[2001:db8:1:2::9]:5000", "2001:db8:1:2::/64"},
		{"", "[::ffff:203.0.113.7]:5000", "203.0.113.7"},
		{"198.51.100.1", "10.0.0.1:5000", "198.51.100.1"},
		{"192.0.2.1, 2001:db8:7:7::1", "10.0.0.1:5000", "2001:db8:7:7::/64"},
		{"not an address", "10.0.0.1:5000", "10.0.0.1"},
		{"", "pipe", "pipe"},
	} {
		if got := Client(c.header, c.peer); got != c.want {
			t.Errorf("Client(%q, %q) = %q, want %q", c.header, c.peer, got, c.want)
		}
	}
}

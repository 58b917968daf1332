package ratelimit

import (
	"strings"
	"testing"
)

// FuzzClientKey: any remote address gives a key no longer than itself
// (IPv6 addresses become their /64), and an address's key is its own key.
func FuzzClientKey(f *testing.F) {
	for _, s := range []string{"192.0.2.1:80", "[2001:db8::1]:443", "[::ffff:192.0.2.1]:1", "unix", "", "[::1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		k := ClientKey(addr)
		if strings.Contains(k, "/") {
			return
		}
		if again := ClientKey(k); again != k && !strings.Contains(again, "/") {
			t.Fatalf("ClientKey(%q) = %q, but ClientKey(%q) = %q", addr, k, k, again)
		}
	})
}

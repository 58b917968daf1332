package forwarded

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ParsePrefixes reads a comma-separated list of CIDR prefixes or single
// addresses ("10.0.0.0/8,127.0.0.1").
func ParsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if !strings.Contains(item, "/") {
			addr, err := netip.ParseAddr(item)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR prefix", item)
			}
			out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR prefix", item)
		}
		if p.Addr().Is4In6() {
			// Client addresses are unmapped before matching, so an
			// IPv4-mapped prefix would silently match nothing.
			return nil, fmt.Errorf("%q: write IPv4-mapped prefixes in IPv4 form", item)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Middleware rewrites RemoteAddr to the client address when the request
// came through trusted proxies.
func Middleware(trusted []netip.Prefix, next http.Handler) http.Handler {
	if len(trusted) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := ClientAddr(trusted, r.RemoteAddr, r.Header.Values("X-Forwarded-For")); ok {
			r.RemoteAddr = net.JoinHostPort(client.String(), "0")
		}
		next.ServeHTTP(w, r)
	})
}

// ClientAddr returns the rightmost untrusted address of the chain
// "xff..., peer", or false if the peer itself is not trusted or the chain
// is malformed.
func ClientAddr(trusted []netip.Prefix, remoteAddr string, xff []string) (netip.Addr, bool) {
	peer, ok := parseHostPort(remoteAddr)
	if !ok || !isTrusted(trusted, peer) {
		return netip.Addr{}, false
	}
	var hops []string
	for _, h := range xff {
		hops = append(hops, strings.Split(h, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return netip.Addr{}, false // a garbled chain proves nothing
		}
		if addr = addr.Unmap(); !isTrusted(trusted, addr) {
			return addr, true
		}
	}
	return netip.Addr{}, false
}

func parseHostPort(hostport string) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

func isTrusted(trusted []netip.Prefix, a netip.Addr) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

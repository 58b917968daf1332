package ratelimit

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Rate is a token bucket: Burst requests at once, refilled at one token
// every Every. A zero Burst disables the limit.
type Rate struct {
	Burst int
	Every time.Duration
}

// Limiter enforces a Rate per key, in memory, as the generic cell rate
// algorithm: per key only the theoretical arrival time of the next request
// is kept, which is equivalent to a token bucket without floating point.
type Limiter struct {
	rate    Rate
	maxKeys int

	mu        sync.Mutex
	tat       map[string]time.Time
	lastSweep time.Time
}

// New returns a Limiter of rate r that tracks at most maxKeys keys.
func New(r Rate, maxKeys int) *Limiter {
	return &Limiter{rate: r, maxKeys: maxKeys, tat: map[string]time.Time{}}
}

// Allow takes one token for key at now. When none is left it returns the
// wait until one is.
func (l *Limiter) Allow(key string, now time.Time) (wait time.Duration, ok bool) {
	if l.rate.Burst <= 0 {
		return 0, true
	}
	tolerance := time.Duration(l.rate.Burst-1) * l.rate.Every
	l.mu.Lock()
	defer l.mu.Unlock()
	tat, known := l.tat[key]
	if !known && !l.room(now) {
		// The table is full of active keys. Refusing the newcomer would let
		// whoever filled the table lock everyone else out; growing would
		// let them exhaust memory. Instead an arbitrary active key (Go map
		// iteration starts at a random entry) forgets its debt.
		l.evictOne()
	}
	if tat.Before(now) {
		tat = now
	}
	if wait := tat.Sub(now) - tolerance; wait > 0 {
		return wait, false
	}
	l.tat[key] = tat.Add(l.rate.Every)
	return 0, true
}

// evictOne drops one key. The dropped key restarts with a full bucket:
// under a flood of more than maxKeys active keys the limit is enforced on
// a best-effort basis (see doc.go), memory stays at maxKeys entries.
func (l *Limiter) evictOne() {
	for k := range l.tat {
		delete(l.tat, k)
		return
	}
}

// room reports whether a new key fits, first dropping keys whose bucket
// has refilled completely (they behave exactly like absent keys). A sweep
// runs at most once per second so a full table cannot make every request
// pay for a scan.
func (l *Limiter) room(now time.Time) bool {
	if len(l.tat) < l.maxKeys {
		return true
	}
	if now.Sub(l.lastSweep) >= time.Second {
		l.lastSweep = now
		for k, tat := range l.tat {
			if !tat.After(now) {
				delete(l.tat, k)
			}
		}
	}
	return len(l.tat) < l.maxKeys
}

// ClientKey is the per-client key of a request's remote address (as the
// forwarded middleware left it): the IP, IPv6 clients by their /64, the
// smallest block a host usually controls.
func ClientKey(remoteAddr string) string {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// RetryAfter is the wait as whole seconds, rounded up, at least 1 (an
// HTTP Retry-After value).
func RetryAfter(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Keys is the number of keys tracked now (at most maxKeys).
func (l *Limiter) Keys() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tat)
}

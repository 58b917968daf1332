package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// Options are a listener's limits; zero means no limit of that kind.
type Options struct {
	Total     int            // open connections in all
	PerClient int            // open connections from one address
	Exempt    []netip.Prefix // addresses (trusted proxies) without a per-address limit
	// PlainHTTP makes a refused connection get a 503 response before
	// it is closed.
	PlainHTTP bool
	// Refused, if not nil, is called for every connection refused, with
	// "total" or "client".
	Refused func(limit string)
}

// Listener wraps a net.Listener with Options' limits.
type Listener struct {
	net.Listener
	opts Options

	mu     sync.Mutex
	open   int
	byAddr map[netip.Addr]int
}

// New wraps ln.
func New(ln net.Listener, opts Options) *Listener {
	return &Listener{Listener: ln, opts: opts, byAddr: map[netip.Addr]int{}}
}

// Open returns how many accepted connections are still open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

// Accept returns the next connection within the limits; connections over
// them are refused and closed without being returned.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := peerAddr(c)
		if limit := l.admit(addr); limit != "" {
			l.refuse(c, limit)
			continue
		}
		return &conn{Conn: c, l: l, addr: addr}, nil
	}
}

// admit counts a new connection from addr, or names the limit it exceeds.
func (l *Listener) admit(addr netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.opts.Total > 0 && l.open >= l.opts.Total {
		return "total"
	}
	perClient := l.opts.PerClient > 0 && addr.IsValid() && !l.exempt(addr)
	if perClient && l.byAddr[addr] >= l.opts.PerClient {
		return "client"
	}
	l.open++
	if addr.IsValid() {
		l.byAddr[addr]++
	}
	return ""
}

func (l *Listener) exempt(addr netip.Addr) bool {
	for _, p := range l.opts.Exempt {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func (l *Listener) release(addr netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if addr.IsValid() {
		if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
			delete(l.byAddr, addr) // the map holds only addresses with open connections
		}
	}
}

// refusal is what a plain-HTTP client over a limit reads (RFC 9110 §15.6.4).
const refusal = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: 0\r\n\r\n"

// refuseWriteTimeout bounds the refusal's write: a fresh connection's send
// buffer takes it at once unless the peer is gone.
const refuseWriteTimeout = 100 * time.Millisecond

func (l *Listener) refuse(c net.Conn, limit string) {
	if l.opts.PlainHTTP {
		c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
		c.Write([]byte(refusal))
	}
	c.Close()
	if l.opts.Refused != nil {
		l.opts.Refused(limit)
	}
}

func peerAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

type conn struct {
	net.Conn
	l    *Listener
	addr netip.Addr
	once sync.Once
}

// CloseWrite half-closes a TCP connection. net/http uses it to let a
// client read an error answer (431, 413) before the connection is reset;
// without it the wrapper would turn those answers into resets.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *conn) Close() error {
	c.once.Do(func() { c.l.release(c.addr) })
	return c.Conn.Close()
}

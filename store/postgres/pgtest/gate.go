package pgtest

import (
	"net"
	"net/url"
	"sync"
	"testing"
)

// Gate forwards bytes between connections and can hold them. A frozen gate
// keeps every connection open and forwards nothing: what a PostgreSQL
// server stopped with SIGSTOP looks like to its clients (the kernel still
// accepts connections and data; nothing comes back).
type Gate struct {
	mu     sync.Mutex
	thawed chan struct{} // non-nil while frozen; closed by Thaw
}

// Freeze stops forwarding on every connection, old and new.
func (g *Gate) Freeze() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.thawed == nil {
		g.thawed = make(chan struct{})
	}
}

// Thaw forwards again, starting with what was held.
func (g *Gate) Thaw() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.thawed != nil {
		close(g.thawed)
		g.thawed = nil
	}
}

func (g *Gate) wait() {
	g.mu.Lock()
	ch := g.thawed
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// Pipe copies src to dst until either fails, holding what it read while
// the gate is frozen, then closes dst.
func (g *Gate) Pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			g.wait()
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// GatedDSN returns dsn (a URL connection string) pointing at a local
// proxy that forwards to dsn's server through a Gate, and the gate. The
// proxy stops when t ends.
func GatedDSN(t testing.TB, dsn string) (string, *Gate) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("%s is not a URL with a host: cannot put a proxy in front of it", EnvVar)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &Gate{}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, client, server)
			mu.Unlock()
			wg.Go(func() { g.Pipe(server, client) })
			wg.Go(func() { g.Pipe(client, server) })
		}
	})
	t.Cleanup(func() {
		g.Thaw()
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	u.Host = ln.Addr().String()
	return u.String(), g
}

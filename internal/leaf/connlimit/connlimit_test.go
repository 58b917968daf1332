package connlimit

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve runs an HTTP server on a limited loopback listener.
func serve(t *testing.T, opts Options) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(ln, opts)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l, ln.Addr().String()
}

// dial opens a connection from the loopback address from (127.0.0.x: the
// whole 127/8 range is this machine's).
func dial(t *testing.T, from, to string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// get sends one request on c and returns the status line.
func get(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return "write: " + err.Error()
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "read: " + err.Error()
	}
	return strings.TrimSpace(line)
}

// waitOpen polls until the listener counts want open connections.
func waitOpen(t *testing.T, l *Listener, want int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); l.Open() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("open connections %d, want %d", l.Open(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPerClientAndTotal(t *testing.T) {
	var refusedClient, refusedTotal atomic.Int32
	l, addr := serve(t, Options{Total: 3, PerClient: 2, PlainHTTP: true, Refused: func(limit string) {
		map[string]*atomic.Int32{"client": &refusedClient, "total": &refusedTotal}[limit].Add(1)
	}})
	a1, a2 := dial(t, "127.0.0.1", addr), dial(t, "127.0.0.1", addr)
	waitOpen(t, l, 2)
	if got := get(t, dial(t, "127.0.0.1", addr)); got != "HTTP/1.1 503 Service Unavailable" {
		t.Fatalf("third connection from one address: %q, want the 503 refusal", got)
	}
	// Another address is still served, and the first ones work.
	b1 := dial(t, "127.0.0.2", addr)
	if got := get(t, b1); got != "HTTP/1.1 200 OK" {
		t.Fatalf("another address: %q", got)
	}
	if got := get(t, a1); got != "HTTP/1.1 200 OK" {
		t.Fatalf("an admitted connection: %q", got)
	}
	// The total is reached: a third address is refused too.
	if got := get(t, dial(t, "127.0.0.3", addr)); got != "HTTP/1.1 503 Service Unavailable" {
		t.Fatalf("over the total: %q", got)
	}
	// A closed connection frees its place.
	a2.Close()
	waitOpen(t, l, 2)
	if got := get(t, dial(t, "127.0.0.1", addr)); got != "HTTP/1.1 200 OK" {
		t.Fatalf("after a close: %q", got)
	}
	if refusedClient.Load() != 1 || refusedTotal.Load() != 1 {
		t.Errorf("refused: client %d, total %d; want 1 and 1", refusedClient.Load(), refusedTotal.Load())
	}
}

// A trusted proxy carries many clients: only the total limits it.
func TestExemptAddresses(t *testing.T) {
	l, addr := serve(t, Options{PerClient: 1, Exempt: []netip.Prefix{netip.MustParsePrefix("127.0.0.5/32")}, PlainHTTP: true})
	for range 3 {
		dial(t, "127.0.0.5", addr)
	}
	waitOpen(t, l, 3)
	if got := get(t, dial(t, "127.0.0.5", addr)); got != "HTTP/1.1 200 OK" {
		t.Fatalf("exempt address: %q", got)
	}
}

// An answer the server sends before reading the whole request (here 431
// for headers over MaxHeaderBytes) reaches the client: the wrapper passes
// CloseWrite through, so net/http half-closes instead of resetting.
func TestOversizeHeadersAnswered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), MaxHeaderBytes: 1 << 10}
	go srv.Serve(New(ln, Options{PerClient: 100}))
	t.Cleanup(func() { srv.Close() })
	for range 3 {
		c := dial(t, "127.0.0.1", ln.Addr().String())
		c.SetDeadline(time.Now().Add(5 * time.Second))
		go c.Write([]byte("GET /?" + strings.Repeat("a", 256<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n"))
		// A half-close ends the answer with EOF; a hard close with
		// unread request bytes would end it with a reset.
		answer, err := io.ReadAll(c)
		if err != nil || !strings.HasPrefix(string(answer), "HTTP/1.1 431") {
			t.Fatalf("%q, %v; want the whole 431 answer, then EOF", answer, err)
		}
		c.Close()
	}
}

package e2e

import (
	"bufio"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dialFrom opens a TCP connection to the server of base from the loopback
// address from (the whole of 127/8 is this machine's).
func dialFrom(t *testing.T, from, base string) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// statusLine sends GET /healthz on c and returns the answer's status line.
func statusLine(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return "write: " + err.Error()
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "read: " + err.Error()
	}
	return strings.TrimSpace(line)
}

// One address holding its quota of idle connections is refused more, at
// once, while another address is served; the refusals are counted.
func TestConnectionLimitPerClient(t *testing.T) {
	t.Parallel()
	p := startProc(t, hardenedDataDir(t), "-max-conns-per-client", "3")
	// The server accepts connections in the order the kernel completed
	// them, so these three are counted before the fourth arrives.
	for range 3 {
		dialFrom(t, "127.0.0.3", p.public)
	}
	if got := statusLine(t, dialFrom(t, "127.0.0.3", p.public)); got != "HTTP/1.1 503 Service Unavailable" {
		t.Fatalf("a fourth connection from one address: %q", got)
	}
	if got := statusLine(t, dialFrom(t, "127.0.0.2", p.public)); got != "HTTP/1.1 200 OK" {
		t.Fatalf("another address while the first is at its limit: %q", got)
	}
	waitMetric(t, p, `worldid_connections_refused_total{limit="client"}`, "1")
}

// A client that stalls its request body does not turn SIGTERM into a
// failure: the drain ends after -shutdown-timeout, the connection is cut,
// a WARN says how many, and the exit status is 0 (p.stop checks it).
func TestStalledBodyShutdownIsOrderly(t *testing.T) {
	t.Parallel()
	p := startProc(t, hardenedDataDir(t), "-shutdown-timeout", "500ms")
	c := dialFrom(t, "127.0.0.1", p.public)
	c.Write([]byte("POST /api/v4/verify/rp_0123456789abcdef HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
	// A request on a later connection is answered only after the stalled
	// one was accepted (accepts are in order), so SIGTERM finds it open.
	call(http.MethodGet, p.public+"/healthz", "", "")(t)
	start := time.Now()
	p.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with a 500ms drain", d)
	}
	if !regexp.MustCompile(`level=WARN msg="shutdown: drain time over, connections cut" listener=public cut=1`).MatchString(p.stderr.String()) {
		t.Errorf("no WARN naming the cut connection:\n%s", p.stderr)
	}
}

// Every answer names its request id, and the request's log line carries
// it with the client's address.
func TestRequestIDInLogAndHeader(t *testing.T) {
	t.Parallel()
	p := startProc(t, hardenedDataDir(t))
	resp, err := http.Get(p.public + "/.well-known/openid-configuration?secret=do-not-log")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Request-Id")
	if !regexp.MustCompile(`^[0-9a-f]{12}-[0-9]+$`).MatchString(id) {
		t.Fatalf("X-Request-Id %q", id)
	}
	p.stop(t)
	line := regexp.MustCompile(`msg=request request_id=` + regexp.QuoteMeta(id) + ` server=public client=127\.0\.0\.1 method=GET route=/\.well-known/openid-configuration status=200`)
	if !line.MatchString(p.stderr.String()) {
		t.Errorf("no request line with the id and client:\n%s", p.stderr)
	}
	if strings.Contains(p.stderr.String(), "do-not-log") {
		t.Error("the query string was logged")
	}
}

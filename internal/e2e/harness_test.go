package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"worldid/admin"
	"worldid/field"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/semaphore/prover"
)

// The harness every test of this package shares: the built binary, a
// running server, HTTP helpers and the hostile-case runner.

// The end-to-end suite builds the real binary, runs `worldid serve` on a
// temporary data dir and drives every interface over HTTP with the wallet
// and coreos/go-oidc as an independent relying party.

// binDir holds the binaries the suite builds, once per test process.
var binDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "worldid-e2e-bin-") })

// binary is one command of this module, built once into binDir.
type binary struct {
	once sync.Once
	path string
	err  error
}

var worldidBin, benchBin binary

func (b *binary) build(t testing.TB, name, pkg string) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := binDir()
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func worldidBinary(t testing.TB) string { return worldidBin.build(t, "worldid", "worldid") }

// benchBinary is cmd/worldid-bench, the load tools, beside the worldid
// binary, where its abuse scenario looks for the server.
func benchBinary(t testing.TB) string {
	return benchBin.build(t, "worldid-bench", "worldid/cmd/worldid-bench")
}

// serverProc is a running `worldid serve`.
type serverProc struct {
	cmd         *exec.Cmd
	public, adm string
	stderr      *strings.Builder
	errw        *lockedWriter // writes stderr; log reads it under its lock
	startup     []string      // stdout up to the listener lines
	adminClient *admin.Client
	exited      chan error
}

func startProc(t testing.TB, dataDir string, extra ...string) *serverProc {
	t.Helper()
	p, stdout := execProc(t, dataDir, extra...)
	lines := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(2*time.Minute, func() { p.cmd.Process.Kill() })
	defer deadline.Stop()
	var err error
	p.public, p.adm, err = server.ScanListeners(lines, func(line string) { p.startup = append(p.startup, line) })
	if err != nil {
		p.cmd.Process.Kill()
		t.Fatalf("%v; stderr:\n%s", err, p.stderr)
	}
	go io.Copy(io.Discard, stdout)
	go func() { p.exited <- p.cmd.Wait() }()
	token, err := server.ReadAdminToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	p.adminClient = &admin.Client{BaseURL: p.adm, Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// execProc starts `worldid serve` and returns at once, with its stdout.
func execProc(t testing.TB, dataDir string, extra ...string) (*serverProc, io.Reader) {
	t.Helper()
	args := append([]string{"serve", "-data", dataDir, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(worldidBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serverProc{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan error, 1)}
	p.errw = &lockedWriter{w: p.stderr}
	cmd.Stderr = p.errw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p, stdout
}

// log is what the server wrote to stderr so far.
func (p *serverProc) log() string {
	p.errw.mu.Lock()
	defer p.errw.mu.Unlock()
	return p.stderr.String()
}

// stop sends SIGTERM and waits for a clean, bounded shutdown.
func (p *serverProc) stop(t testing.TB) {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("server exited with %v; stderr:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		t.Errorf("server did not shut down within 20s")
	}
}

// eventually calls ok every interval until it reports true or limit has
// passed; it returns ok's last answer.
func eventually(limit, interval time.Duration, ok func() bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !ok() {
		select {
		case <-deadline.C:
			return ok()
		case <-tick.C:
		}
	}
	return true
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func newWallet(t *testing.T, ctx context.Context, p *serverProc, trees ...[2]string) *wallet.Wallet {
	path := filepath.Join(t.TempDir(), "wallet.json")
	id, err := wallet.NewIdentityFile(path, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c := id.Commitment()
	for _, tree := range trees {
		if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{Identifier: tree[0], Environment: tree[1], IdentityCommitment: field.Format(&c)}); err != nil {
			t.Fatal(err)
		}
	}
	return &wallet.Wallet{Identity: id, Server: p.public, HTTP: wallet.NewHTTPClient(), KeyCache: path + ".pk"}
}

// The hardening suite: hostile input against the real binary
// (this file), crashes and full disks (faults_test.go) and races
// (concurrency_test.go). This file also holds the helpers the three share.

// ---- Shared fixture ----

var (
	sharedKeyOnce sync.Once
	sharedKeyPath string

	sharedPKOnce sync.Once
	sharedPK     *prover.ProvingKey
	sharedPKErr  error
)

// sharedKeyFile returns a local Semaphore proving key made once by the
// real binary (its first start runs the setup). Every hardening data dir
// links to it, so no server runs the setup again.
func sharedKeyFile(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the local proving key, which the binary makes")
	}
	sharedKeyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "worldid-hardening-key-")
		if err != nil {
			t.Fatal(err)
		}
		startProc(t, dir).stop(t)
		sharedKeyPath = filepath.Join(dir, server.ProvingKeyFile)
	})
	if sharedKeyPath == "" {
		t.Fatal("the shared proving key could not be made (see the first test that asked for it)")
	}
	return sharedKeyPath
}

// sharedProvingKey is the key of sharedKeyFile, read once, for tests that
// prove without a wallet.
func sharedProvingKey(t *testing.T) *prover.ProvingKey {
	t.Helper()
	path := sharedKeyFile(t)
	sharedPKOnce.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			sharedPKErr = err
			return
		}
		defer f.Close()
		sharedPK, sharedPKErr = prover.ReadProvingKey(bufio.NewReaderSize(f, 1<<20))
	})
	if sharedPKErr != nil {
		t.Fatal(sharedPKErr)
	}
	return sharedPK
}

// parallelEndToEnd skips t in -short runs (why: what it starts), runs
// it in parallel with the other end-to-end tests and returns the context
// that bounds it (five minutes; canceled when t's cleanups run).
func parallelEndToEnd(t *testing.T, why string) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// hardenedDataDir is an empty data dir that links the shared local keys.
func hardenedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	linkSharedKey(t, dir)
	return dir
}

func linkSharedKey(t testing.TB, dir string) {
	t.Helper()
	for _, name := range []string{server.ProvingKeyFile, server.VerifyingKeyFile} {
		if err := os.Symlink(filepath.Join(filepath.Dir(sharedKeyFile(t)), name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// keyedWallet is newWallet reading the shared key instead of downloading it.
func keyedWallet(t *testing.T, ctx context.Context, p *serverProc, trees ...[2]string) *wallet.Wallet {
	w := newWallet(t, ctx, p, trees...)
	w.KeyCache = sharedKeyFile(t)
	return w
}

// acknowledgedWrites returns the LSN of the newest acknowledged write in a
// data dir's store. Every Update that changes anything appends one journal
// line with the next LSN and fsyncs it before it returns, and a compaction
// carries that LSN into state.json (store doc.go), so the value changes if
// and only if some write was acknowledged. Unlike a byte comparison it
// needs no server stop and ignores compactions. The journal is read first:
// a compaction in between can then only make the snapshot newer.
func acknowledgedWrites(t *testing.T, dataDir string) uint64 {
	t.Helper()
	journal, err := os.ReadFile(filepath.Join(dataDir, "journal.jsonl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile(filepath.Join(dataDir, "state.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var entry struct {
		LSN uint64 `json:"lsn"`
	}
	var lsn uint64
	if len(snapshot) > 0 {
		// The object only: packed records may follow it.
		if err := json.NewDecoder(bytes.NewReader(snapshot)).Decode(&entry); err != nil {
			t.Fatalf("state.json: %v", err)
		}
		lsn = entry.LSN
	}
	lines := bytes.Split(journal, []byte("\n"))
	for _, line := range lines[:len(lines)-1] { // after the last newline: no complete line
		if err := json.Unmarshal(line, &entry); err != nil {
			t.Fatalf("journal.jsonl: %v", err)
		}
		lsn = max(lsn, entry.LSN)
	}
	return lsn
}

// reply is an HTTP answer read in full.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// hardenedClient never follows redirects: where a redirect points is
// what the tests check.
var hardenedClient = &http.Client{
	Timeout:       time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func send(t *testing.T, req *http.Request) reply {
	t.Helper()
	r, err := roundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	return r
}

// roundTrip is send for goroutines, which must not call t.Fatal.
func roundTrip(req *http.Request) (reply, error) {
	resp, err := hardenedClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return reply{resp.StatusCode, resp.Header, body}, err
}

// call returns a sender of one request; header holds name, value pairs.
func call(method, target, contentType, body string, header ...string) func(*testing.T) reply {
	return func(t *testing.T) reply {
		t.Helper()
		req, err := http.NewRequest(method, target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		return send(t, req)
	}
}

// callRaw writes head (request line and headers) and then body to the
// server of base while reading the answer, for requests net/http's client
// would not send or for answers that come before the body is read.
func callRaw(base, head string, body io.Reader) func(*testing.T) reply {
	return func(t *testing.T) reply {
		t.Helper()
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(time.Minute))
		go func() {
			// The server may stop reading early; write errors are expected.
			if _, err := io.WriteString(conn, head); err == nil && body != nil {
				io.Copy(conn, body)
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return reply{resp.StatusCode, resp.Header, b}
	}
}

var pageCode = regexp.MustCompile(`<p><code>([^<]*)</code>`)

// errorCode is the error name of an answer, wherever its interface puts
// it: the "error" parameter of a redirect, the <code> of an HTML error
// page, or the JSON member "code" (sign-in, verify, registry) or "error"
// (refresh, admin).
func (r reply) errorCode() string {
	if loc := r.header.Get("Location"); loc != "" {
		u, err := url.Parse(loc)
		if err != nil {
			return ""
		}
		params := u.Query()
		if u.Fragment != "" {
			params, _ = url.ParseQuery(u.Fragment)
		}
		return params.Get("error")
	}
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		if m := pageCode.FindSubmatch(r.body); m != nil {
			return html.UnescapeString(string(m[1]))
		}
		return ""
	}
	var body map[string]any
	if json.Unmarshal(r.body, &body) != nil {
		return ""
	}
	for _, member := range []string{"code", "error"} {
		if s, _ := body[member].(string); s != "" {
			return s
		}
	}
	return ""
}

// hostileCase is one hostile request and its documented answer.
type hostileCase struct {
	name   string
	send   func(*testing.T) reply
	status int
	code   string // the error name (see errorCode); "" only where net/http itself answers
	// writes is how many store writes the documented answer makes: 0 for
	// everything but the few rejections that burn a single-use value.
	writes uint64
	check  func(*testing.T, reply) // further assertions, optional
}

// runHostile sends each case and checks its status, error name, redirect
// target and the number of acknowledged store writes.
func runHostile(t *testing.T, dataDir string, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := acknowledgedWrites(t, dataDir)
			r := c.send(t)
			if r.status != c.status {
				t.Errorf("status %d, want %d; body %.300s", r.status, c.status, r.body)
			}
			if got := r.errorCode(); got != c.code {
				t.Errorf("error %q, want %q; body %.300s", got, c.code, r.body)
			}
			checkRedirectTarget(t, r)
			if after := acknowledgedWrites(t, dataDir); after != before+c.writes {
				t.Errorf("%d acknowledged store writes, want %d", after-before, c.writes)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

var serverErrorLabel = regexp.MustCompile(`code="5\d\d"`)

// checkNoServerErrors reads the request counters of both listeners from
// /metrics, then stops the server and reads its log.
func checkNoServerErrors(t *testing.T, p *serverProc) {
	r := call(http.MethodGet, p.public+"/metrics", "", "")(t)
	for _, line := range strings.Split(string(r.body), "\n") {
		if strings.HasPrefix(line, "worldid_http_requests_total{") && serverErrorLabel.MatchString(line) {
			t.Errorf("a 5xx was served: %s", line)
		}
	}
	p.stop(t)
	if log := p.stderr.String(); strings.Contains(log, "panic") {
		t.Errorf("the server log mentions a panic:\n%s", log)
	}
}

func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

func freeLoopbackAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// httpGet returns the body of a 200 answer to GET url.
func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", url, resp.StatusCode, err)
	}
	return b
}

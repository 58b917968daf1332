package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	"github.com/consensys/gnark-crypto/ecc/bn254/fp"
	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	secpfr "github.com/consensys/gnark-crypto/ecc/secp256k1/fr"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"worldid/admin"
	"worldid/babyjub"
	"worldid/field"
	"worldid/internal/vectors"
	"worldid/record"
	"worldid/semaphore/prover"
	"worldid/wallet"
)

// The hardening suite of issue #10: hostile input against the real binary
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
func sharedKeyFile(t *testing.T) string {
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
		sharedKeyPath = filepath.Join(dir, provingKeyFile)
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

// hardenedDataDir is an empty data dir that links the shared local keys.
func hardenedDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	linkSharedKey(t, dir)
	return dir
}

func linkSharedKey(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{provingKeyFile, verifyingKeyFile} {
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
		if err := json.Unmarshal(snapshot, &entry); err != nil {
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

// checkRedirectTarget fails on a Location that is neither the registered
// redirect URI with response parameters nor a path on the same server
// (net/http's path cleaning).
func checkRedirectTarget(t *testing.T, r reply) {
	t.Helper()
	switch loc := r.header.Get("Location"); {
	case loc == "":
	case strings.HasPrefix(loc, e2eRedirect+"?"), strings.HasPrefix(loc, e2eRedirect+"#"):
	case strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") && !strings.HasPrefix(loc, `/\`):
	default:
		t.Errorf("redirect to an unvalidated target %q", loc)
	}
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

// ---- Values at and beyond the edges ----

// bn254R is p, the BN254 scalar field modulus (crypto.md §a), in "0x" + 64 hex.
var bn254R = "0x" + hex.EncodeToString(fr.Modulus().FillBytes(make([]byte, 32)))

// babyJubJubL is the order of BabyJubJub's prime subgroup (crypto.md §d,
// babyjub doc.go; circomlib's subOrder).
var babyJubJubL, _ = new(big.Int).SetString("2736030358979909402780800718157159386076813972158567259200215660948447373041", 10)

// proofWords splits an ABI proof ("0x" + 8 big-endian words) into words
// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y] (crypto.md §g).
func proofWords(t *testing.T, abi string) [8][32]byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(abi, "0x"))
	if err != nil || len(b) != 8*32 {
		t.Fatalf("not an ABI proof: %q", abi)
	}
	var w [8][32]byte
	for i := range w {
		copy(w[i][:], b[32*i:])
	}
	return w
}

func editProof(t *testing.T, abi string, edit func(w *[8][32]byte)) string {
	w := proofWords(t, abi)
	edit(&w)
	return "0x" + hex.EncodeToString(bytes.Join([][]byte{w[0][:], w[1][:], w[2][:], w[3][:], w[4][:], w[5][:], w[6][:], w[7][:]}, nil))
}

// twistPointOutsideSubgroup is a point on BN254's G2 curve (the twist)
// that is not in the order-r subgroup: SvdW maps to the curve without
// clearing the cofactor.
func twistPointOutsideSubgroup(t *testing.T) bn254.G2Affine {
	var u bn254.E2
	for i := uint64(1); i < 64; i++ {
		u.A0.SetUint64(i)
		if q := bn254.MapToCurve2(&u); q.IsOnCurve() && !q.IsInSubGroup() {
			return q
		}
	}
	t.Fatal("no twist point outside the subgroup")
	return bn254.G2Affine{}
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// ---- The suite ----

// hostileEnv is a running server with an app, a second app whose tokens
// are foreign to the first, and a wallet in the orb production tree.
type hostileEnv struct {
	ctx     context.Context
	p       *serverProc
	dataDir string
	rp      *relyingParty
	other   admin.CreatedApp
	w       *wallet.Wallet
}

// TestHostileInput drives every interface of the real binary with hostile
// requests. Each must get its documented 4xx (never a 500), never a
// redirect to an unvalidated URI, and leave the store unchanged, as
// measured by acknowledgedWrites.
func TestHostileInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dataDir := hardenedDataDir(t)
	// The suite sends more refreshes from one address than the per-IP
	// burst allows; the limits have their own tests in package refresh.
	p := startProc(t, dataDir, "-refresh-rate-limits=false")
	e := &hostileEnv{ctx: ctx, p: p, dataDir: dataDir, rp: newRelyingParty(t, ctx, p)}
	var err error
	if e.other, err = p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "other RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
		t.Fatal(err)
	}
	e.w = keyedWallet(t, ctx, p, [2]string{"orb", "production"})

	t.Run("verify", func(t *testing.T) { e.hostileVerify(t) })
	t.Run("verify vectors", func(t *testing.T) { e.hostileVerifyVectors(t) })
	t.Run("authorize", func(t *testing.T) { runHostile(t, dataDir, e.authorizeCases()) })
	t.Run("complete", func(t *testing.T) { e.hostileComplete(t) })
	t.Run("tokens", func(t *testing.T) { e.hostileTokens(t) })
	t.Run("refresh", func(t *testing.T) { e.hostileRefresh(t) })
	t.Run("refresh vectors", func(t *testing.T) { e.hostileRefreshVectors(t) })
	t.Run("admin", func(t *testing.T) { runHostile(t, dataDir, e.adminCases(t)) })
	t.Run("registry", func(t *testing.T) { runHostile(t, dataDir, e.registryCases()) })
	t.Run("no 5xx and no panic", func(t *testing.T) { checkNoServerErrors(t, p) }) // stops the server
}

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

func (e *hostileEnv) prove(t *testing.T, action string) wallet.ResponseItem {
	t.Helper()
	item, err := e.w.Prove(e.ctx, wallet.ProofRequest{AppID: e.rp.app.AppID, Action: action, Signal: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	return item
}

func verifyRequest(action string, items ...string) string {
	return `{"protocol_version":"3.0","nonce":"n","action":` + quoteJSON(action) + `,"responses":[` + strings.Join(items, ",") + `]}`
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// itemJSON encodes a proof item with members replaced (a nil value
// deletes the member).
func itemJSON(t *testing.T, item wallet.ResponseItem, replace map[string]any) string {
	t.Helper()
	var m map[string]any
	b, _ := json.Marshal(item)
	json.Unmarshal(b, &m)
	for k, v := range replace {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func attributeIs(want string) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct{ Attribute string }
		if json.Unmarshal(r.body, &b) != nil || b.Attribute != want {
			t.Errorf("attribute %q, want %q", b.Attribute, want)
		}
	}
}

func resultCodeIs(want string) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct {
			Results []struct {
				Success bool
				Code    string
			}
		}
		if json.Unmarshal(r.body, &b) != nil || len(b.Results) != 1 || b.Results[0].Success || b.Results[0].Code != want {
			t.Errorf("results %s, want one failure %q", r.body, want)
		}
	}
}

func (e *hostileEnv) hostileVerify(t *testing.T) {
	item := e.prove(t, "hostile-verify")
	once := e.prove(t, "hostile-once")
	if _, err := e.p.adminClient.SetActionLimit(e.ctx, admin.ActionLimitRequest{RPID: e.rp.app.RPID, Action: "hostile-once", MaxVerifications: 1}); err != nil {
		t.Fatal(err)
	}
	target := e.p.public + "/api/v4/verify/" + e.rp.app.RPID
	onceBody := verifyRequest("hostile-once", itemJSON(t, once, nil))
	if r := call(http.MethodPost, target, "application/json", onceBody)(t); r.status != http.StatusOK {
		t.Fatalf("first use: %d %s", r.status, r.body)
	}
	const ct = "application/json"
	good := itemJSON(t, item, nil)
	post := func(body string) func(*testing.T) reply { return call(http.MethodPost, target, ct, body) }
	withItem := func(replace map[string]any) func(*testing.T) reply {
		return post(verifyRequest("hostile-verify", itemJSON(t, item, replace)))
	}
	withProof := func(edit func(w *[8][32]byte)) func(*testing.T) reply {
		return withItem(map[string]any{"proof": editProof(t, item.Proof, edit)})
	}
	g2 := twistPointOutsideSubgroup(t)
	q := fp.Modulus()
	invalid := func(attribute string, send func(*testing.T) reply) hostileCase {
		return hostileCase{name: attribute, send: send, status: 400, code: "validation_error", check: attributeIs(attribute)}
	}
	cases := []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "no content type", send: call(http.MethodPost, target, "", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "latin1 charset", send: call(http.MethodPost, target, "application/json; charset=iso-8859-1", verifyRequest("a", good)), status: 415, code: "invalid_content_type"},
		{name: "body over 64 KiB", send: post(verifyRequest(strings.Repeat("a", 64<<10), good)), status: 413, code: "request_too_large"},
		{name: "not JSON", send: post("protocol_version=3.0"), status: 400, code: "invalid_request"},
		{name: "two objects", send: post(verifyRequest("a", good) + "{}"), status: 400, code: "invalid_request"},
		invalid("action", post(strings.Replace(verifyRequest("hostile-verify", good), `"action"`, `"action":"other","action"`, 1))),
		invalid("responses[0].nullifier", post(verifyRequest("hostile-verify", strings.Replace(good, `"nullifier"`, `"nullifier":"0x1","nullifier"`, 1)))),
		invalid("protocol_version", post(strings.Replace(verifyRequest("a", good), `"3.0"`, `"4.0"`, 1))),
		invalid("responses", post(verifyRequest("hostile-verify"))),
		invalid("responses", post(verifyRequest("hostile-verify", strings.Split(strings.Repeat(good+"\n", 17), "\n")[:17]...))),
		invalid("responses[0].nullifier", withItem(map[string]any{"nullifier": bn254R})),
		invalid("responses[0].merkle_root", withItem(map[string]any{"merkle_root": "0x" + strings.Repeat("f", 64)})),
		invalid("responses[0].signal_hash", withItem(map[string]any{"signal_hash": strings.ToUpper(item.SignalHash)})),
		invalid("responses[0].signal_hash", withItem(map[string]any{"signal_hash": bn254R})),
		invalid("responses[0].max_age", withItem(map[string]any{"max_age": 3599})),
		invalid("responses[0].max_age", post(verifyRequest("hostile-verify", strings.Replace(good, `{`, `{"max_age":3600.0,`, 1)))),
		invalid("responses[0].identifier", withItem(map[string]any{"identifier": "../orb"})),
		invalid("responses[0].proof", withItem(map[string]any{"proof": nil})),
		{name: "B on the twist outside the subgroup", send: withProof(func(w *[8][32]byte) {
			w[2], w[3], w[4], w[5] = g2.X.A1.Bytes(), g2.X.A0.Bytes(), g2.Y.A1.Bytes(), g2.Y.A0.Bytes()
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "B in snarkjs coordinate order", send: withProof(func(w *[8][32]byte) {
			w[2], w[3], w[4], w[5] = w[3], w[2], w[5], w[4]
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "A off the curve", send: withProof(func(w *[8][32]byte) {
			w[0], w[1] = [32]byte{31: 1}, [32]byte{31: 1}
		}), status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "A.x equal to q", send: withProof(func(w *[8][32]byte) { q.FillBytes(w[0][:]) }),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "C at infinity", send: withProof(func(w *[8][32]byte) { w[6], w[7] = [32]byte{}, [32]byte{} }),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "proof with 0X prefix", send: withItem(map[string]any{"proof": "0X" + item.Proof[2:]}),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_format")},
		{name: "proof for another action", send: post(verifyRequest("hostile-other", good)),
			status: 400, code: "all_verifications_failed", check: resultCodeIs("invalid_proof")},
		{name: "max_verifications reached", send: post(onceBody), status: 400, code: "max_verifications_reached"},
		{name: "upper-case rp id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/"+strings.ToUpper(e.rp.app.RPID), ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "unknown rp id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/rp_0000000000000000", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "unknown app id", send: call(http.MethodPost, e.p.public+"/api/v4/verify/app_"+strings.Repeat("0", 32), ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "encoded traversal", send: call(http.MethodPost, e.p.public+"/api/v4/verify/..%2F..%2Fadmin%2Fapps", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		{name: "deeper path", send: call(http.MethodPost, target+"/x", ct, verifyRequest("a", good)), status: 404, code: "not_found"},
		// net/http cleans dot segments with a redirect to the same server.
		{name: "dot segments", send: call(http.MethodPost, e.p.public+"/api/v4/verify/../../admin/apps", ct, verifyRequest("a", good)), status: 307, code: ""},
	}
	runHostile(t, e.dataDir, cases)
}

// hostileVerifyVectors sends every VerifyHex vector of field_element.json
// as a merkle_root: a rejected encoding and a value ≥ p are validation
// errors naming the attribute; anything else reaches the proof check.
func (e *hostileEnv) hostileVerifyVectors(t *testing.T) {
	var file fieldVectors
	vectors.Load(t, "field_element.json", &file)
	count := vectors.NewCounter(t, "field_element.json")
	item := wallet.ResponseItem{Identifier: "orb", Nullifier: "0x01", Proof: "0x00"}
	target := e.p.public + "/api/v4/verify/" + e.rp.app.RPID
	var cases []hostileCase
	for _, v := range file.VerifyHex {
		c := hostileCase{name: v.Name, status: 400,
			send: call(http.MethodPost, target, "application/json", verifyRequest("vectors", itemJSON(t, item, map[string]any{"merkle_root": v.Input, "signal_hash": nil})))}
		switch accept, below := v.verdict(t); {
		case accept && below:
			c.code = "all_verifications_failed"
		default:
			c.code, c.check = "validation_error", attributeIs("responses[0].merkle_root")
		}
		cases = append(cases, c)
		count.Inc()
	}
	runHostile(t, e.dataDir, cases)
}

// fieldVectors is the structure of field_element.json (vectors README).
type fieldVectors struct {
	IDCommitment []fieldVector `json:"id_commitment"`
	PrefixedHex  []fieldVector `json:"prefixed_hex"`
	VerifyHex    []fieldVector `json:"verify_hex"`
}

type fieldVector struct {
	Name     string  `json:"name"`
	Input    string  `json:"input"`
	Expected string  `json:"expected"`
	ValueHex *string `json:"value_hex"`
}

// verdict reads the closed vocabulary accept/reject and whether an
// accepted value is below p.
func (v fieldVector) verdict(t *testing.T) (accept, below bool) {
	t.Helper()
	switch v.Expected {
	case "accept":
		if v.ValueHex == nil {
			t.Fatalf("vector %s: accepted without value_hex", v.Name)
		}
		b, err := hex.DecodeString(strings.TrimPrefix(*v.ValueHex, "0x"))
		if err != nil || len(b) != 32 {
			t.Fatalf("vector %s: value_hex %q", v.Name, *v.ValueHex)
		}
		return true, new(big.Int).SetBytes(b).Cmp(fr.Modulus()) < 0
	case "reject":
		return false, false
	}
	t.Fatalf("vector %s: expected %q is neither accept nor reject", v.Name, v.Expected)
	return false, false
}

func (e *hostileEnv) authorizeURL(edit func(url.Values)) string {
	v := url.Values{"response_type": {"code"}, "client_id": {e.rp.app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}, "state": {"st"}}
	edit(v)
	return e.p.public + "/authorize?" + v.Encode()
}

func (e *hostileEnv) authorizeCases() []hostileCase {
	get := func(edit func(url.Values)) func(*testing.T) reply {
		return call(http.MethodGet, e.authorizeURL(edit), "", "")
	}
	set := func(name string, values ...string) func(url.Values) {
		return func(v url.Values) { v[name] = values }
	}
	page := func(name, code string, edit func(url.Values)) hostileCase {
		return hostileCase{name: name, send: get(edit), status: 400, code: code}
	}
	redirected := func(name, code string, edit func(url.Values)) hostileCase {
		return hostileCase{name: name, send: get(edit), status: 303, code: code}
	}
	form := url.Values{"response_type": {"code"}, "client_id": {e.rp.app.AppID}, "redirect_uri": {e2eRedirect}, "scope": {"openid"}}
	return []hostileCase{
		page("unknown client", "invalid_client", set("client_id", "app_"+strings.Repeat("0", 32))),
		page("client id traversal", "invalid_client", set("client_id", "../../admin/apps")),
		page("missing client", "required", set("client_id")),
		page("duplicate client", "invalid_request", set("client_id", e.rp.app.AppID, e.rp.app.AppID)),
		page("missing redirect_uri", "required", set("redirect_uri")),
		page("duplicate redirect_uri", "invalid_request", set("redirect_uri", e2eRedirect, e2eRedirect)),
		page("redirect_uri with a trailing slash", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"/")),
		page("redirect_uri with a query", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"?x=1")),
		page("redirect_uri with a fragment", "invalid_redirect_uri", set("redirect_uri", e2eRedirect+"#x")),
		page("redirect_uri in upper case", "invalid_redirect_uri", set("redirect_uri", strings.ToUpper(e2eRedirect))),
		page("redirect_uri of another host", "invalid_redirect_uri", set("redirect_uri", "https://evil.example/callback")),
		page("scheme-relative redirect_uri", "invalid_redirect_uri", set("redirect_uri", "//evil.example/callback")),
		page("javascript redirect_uri", "invalid_redirect_uri", set("redirect_uri", "javascript:alert(1)")),
		redirected("duplicate scope", "invalid_request", set("scope", "openid", "openid")),
		redirected("response_type token", "unsupported_response_type", set("response_type", "token")),
		redirected("missing response_type", "invalid_request", set("response_type")),
		redirected("scope without openid", "invalid_scope", set("scope", "email")),
		redirected("request object", "request_not_supported", set("request", "eyJhbGciOiJub25lIn0.e30.")),
		redirected("request_uri", "request_uri_not_supported", set("request_uri", "https://evil.example/r")),
		redirected("PKCE plain", "invalid_request", func(v url.Values) { v.Set("code_challenge", strings.Repeat("a", 43)) }),
		redirected("state of 600 bytes", "invalid_request", set("state", strings.Repeat("s", 600))),
		redirected("state with a control character", "invalid_request", set("state", "a\x00b")),
		redirected("id_token without nonce", "invalid_request", set("response_type", "id_token")),
		{name: "tokens in the query", send: get(func(v url.Values) {
			v.Set("response_type", "id_token")
			v.Set("nonce", "n")
			v.Set("response_mode", "query")
		}),
			status: 303, code: "invalid_request", check: func(t *testing.T, r reply) {
				if !strings.HasPrefix(r.header.Get("Location"), e2eRedirect+"#") {
					t.Errorf("an id_token error must use the fragment: %s", r.header.Get("Location"))
				}
			}},
		redirected("prompt none", "login_required", set("prompt", "none")),
		{name: "POST text/plain", send: call(http.MethodPost, e.p.public+"/authorize", "text/plain", form.Encode()), status: 415, code: "invalid_content_type"},
		{name: "POST over 64 KiB", send: call(http.MethodPost, e.p.public+"/authorize", "application/x-www-form-urlencoded", form.Encode()+"&nonce="+strings.Repeat("n", 64<<10)), status: 413, code: "request_too_large"},
		{name: "PUT", send: call(http.MethodPut, e.authorizeURL(func(url.Values) {}), "", ""), status: 405, code: "method_not_allowed"},
		// net/http refuses headers over MaxHeaderBytes before any handler.
		{name: "query of 128 KiB", send: get(set("nonce", strings.Repeat("n", 128<<10))), status: 431, code: ""},
		{name: "discovery POST", send: call(http.MethodPost, e.p.public+"/.well-known/openid-configuration", "", ""), status: 405, code: "method_not_allowed"},
		// The issuer comes from the configuration, never from the request.
		{name: "discovery for a forged Host", status: 200, code: "",
			send: callRaw(e.p.public, "GET /.well-known/openid-configuration HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: https\r\nConnection: close\r\n\r\n", nil),
			check: func(t *testing.T, r reply) {
				var doc struct{ Issuer string }
				if json.Unmarshal(r.body, &doc) != nil || doc.Issuer != e.p.public || bytes.Contains(r.body, []byte("evil.example")) {
					t.Errorf("discovery follows the request's Host: %s", r.body)
				}
			}},
		{name: "jwks POST", send: call(http.MethodPost, e.p.public+"/jwks", "", ""), status: 405, code: "method_not_allowed"},
	}
}

// walletLinkRE finds the sign-in page's deep link (oidc doc.go).
var walletLinkRE = regexp.MustCompile(`<a id="wallet-link" href="(worldid://signin\?[^"]*)"`)

// pendingSignin opens a valid authorization request and returns the query
// of the page's wallet link (request_id, signal, app_id, submit).
func pendingSignin(t *testing.T, authorizeURL string) url.Values {
	t.Helper()
	r := call(http.MethodGet, authorizeURL, "", "")(t)
	m := walletLinkRE.FindSubmatch(r.body)
	if r.status != http.StatusOK || m == nil {
		t.Fatalf("sign-in page: %d %.300s", r.status, r.body)
	}
	link, err := url.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	return link.Query()
}

func (e *hostileEnv) hostileComplete(t *testing.T) {
	pending := pendingSignin(t, e.authorizeURL(func(url.Values) {}))
	item := e.prove(t, "hostile-complete") // a real proof, for another signal
	target := e.p.public + "/authorize/complete"
	base := url.Values{"request_id": {pending.Get("request_id")}, "proof": {item.Proof}, "merkle_root": {item.MerkleRoot},
		"nullifier_hash": {item.Nullifier}, "verification_level": {"orb"}}
	post := func(edit func(url.Values)) func(*testing.T) reply {
		v := url.Values{}
		for k, vals := range base {
			v[k] = vals
		}
		edit(v)
		return call(http.MethodPost, target, "application/x-www-form-urlencoded", v.Encode())
	}
	set := func(name string, values ...string) func(url.Values) {
		return func(v url.Values) { v[name] = values }
	}
	page := func(name, code string, edit func(url.Values)) hostileCase {
		return hostileCase{name: name, send: post(edit), status: 400, code: code}
	}
	runHostile(t, e.dataDir, []hostileCase{
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", base.Encode()), status: 415, code: "invalid_content_type"},
		{name: "no content type", send: call(http.MethodPost, target, "", base.Encode()), status: 415, code: "invalid_content_type"},
		{name: "over 64 KiB", send: post(set("proof", strings.Repeat("0", 64<<10))), status: 413, code: "request_too_large"},
		{name: "GET", send: call(http.MethodGet, target+"?"+base.Encode(), "", ""), status: 405, code: "method_not_allowed"},
		page("unknown request", "invalid_request", set("request_id", strings.Repeat("0", 64))),
		page("request id traversal", "invalid_request", set("request_id", "../../../../etc/passwd")),
		page("duplicate request id", "invalid_request", set("request_id", pending.Get("request_id"), pending.Get("request_id"))),
		page("unknown parameter", "invalid_request", set("signal_hash", "0x1")),
		page("missing proof", "required", set("proof")),
		page("nullifier hash equal to p", "invalid_request", set("nullifier_hash", bn254R)),
		page("merkle root of 65 digits", "invalid_request", set("merkle_root", "0x1"+strings.Repeat("0", 64))),
		page("verification level face", "invalid_request", set("verification_level", "face")),
		page("proof over 4096 bytes", "invalid_request", set("proof", strings.Repeat("0", 4097))),
		// A proof that does not verify consumes the request (oidc doc.go):
		// the user failed to authenticate and is sent back to the app.
		{name: "proof for another signal", send: post(func(url.Values) {}), status: 303, code: "access_denied", writes: 1},
		page("request already consumed", "invalid_request", func(url.Values) {}),
	})
}

// signInCode signs the wallet in with PKCE and returns the code.
func (e *hostileEnv) signInCode(t *testing.T) (code, verifier string) {
	t.Helper()
	verifier = oauth2.GenerateVerifier()
	res, err := e.w.SignIn(e.ctx, e.rp.oauth.AuthCodeURL("st", oidc.Nonce("n"), oauth2.S256ChallengeOption(verifier)), "orb")
	if err != nil {
		t.Fatal(err)
	}
	if code = res.Params.Get("code"); code == "" {
		t.Fatalf("no code: %s", res.Location)
	}
	return code, verifier
}

func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// hostileTokens covers /token, /userinfo and /introspect; the code replay
// that revokes the first sign-in's tokens comes last.
func (e *hostileEnv) hostileTokens(t *testing.T) {
	code1, verifier1 := e.signInCode(t)
	tok, err := e.rp.oauth.Exchange(e.ctx, code1, oauth2.VerifierOption(verifier1))
	if err != nil {
		t.Fatal(err)
	}
	at := tok.AccessToken
	idToken, _ := tok.Extra("id_token").(string)
	t.Run("userinfo", func(t *testing.T) { runHostile(t, e.dataDir, e.userinfoCases(t, at, idToken)) })
	t.Run("introspect", func(t *testing.T) { runHostile(t, e.dataDir, e.introspectCases(t, at, idToken)) })
	code2, verifier2 := e.signInCode(t)
	code3, verifier3 := e.signInCode(t)
	code4, _ := e.signInCode(t)
	t.Run("token", func(t *testing.T) {
		runHostile(t, e.dataDir, e.tokenCases(code1, verifier1, code2, verifier2, code3, verifier3, code4))
	})
	t.Run("tokens revoked by the replay", func(t *testing.T) {
		runHostile(t, e.dataDir, []hostileCase{
			{name: "userinfo", send: call(http.MethodGet, e.p.public+"/userinfo", "", "", "Authorization", "Bearer "+at), status: 401, code: "invalid_token"},
			{name: "introspect", send: e.introspect(e.rp.app, at), status: 200, code: "", check: activeIs(false)},
		})
	})
}

func (e *hostileEnv) tokenCases(code1, verifier1, code2, verifier2, code3, verifier3, code4 string) []hostileCase {
	target := e.p.public + "/token"
	const formCT = "application/x-www-form-urlencoded"
	basic := basicAuth(e.rp.app.AppID, e.rp.app.ClientSecret)
	grant := func(code, redirect, verifier string) url.Values {
		v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}}
		if verifier != "" {
			v.Set("code_verifier", verifier)
		}
		return v
	}
	post := func(form url.Values, auth string) func(*testing.T) reply {
		return call(http.MethodPost, target, formCT, form.Encode(), "Authorization", auth)
	}
	unknown := grant(strings.Repeat("A", 43), e2eRedirect, "")
	withSecret := grant(strings.Repeat("A", 43), e2eRedirect, "")
	withSecret.Set("client_secret", e.rp.app.ClientSecret)
	noGrantType := grant(strings.Repeat("A", 43), e2eRedirect, "")
	noGrantType.Del("grant_type")
	refreshGrant := grant(strings.Repeat("A", 43), e2eRedirect, "")
	refreshGrant.Set("grant_type", "refresh_token")
	noCode := grant("", e2eRedirect, "")
	noCode.Del("code")
	return []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", unknown.Encode(), "Authorization", basic), status: 415, code: "invalid_content_type"},
		{name: "no client authentication", send: call(http.MethodPost, target, formCT, unknown.Encode()), status: 401, code: "unauthenticated"},
		{name: "wrong secret", send: post(unknown, basicAuth(e.rp.app.AppID, e.other.ClientSecret)), status: 401, code: "unauthenticated"},
		{name: "unknown client", send: post(unknown, basicAuth("app_"+strings.Repeat("0", 32), e.rp.app.ClientSecret)), status: 401, code: "unauthenticated"},
		{name: "Basic and client_secret", send: post(withSecret, basic), status: 400, code: "invalid_request"},
		{name: "duplicate code", send: call(http.MethodPost, target, formCT, unknown.Encode()+"&code=x", "Authorization", basic), status: 400, code: "invalid_request"},
		{name: "refresh_token grant", send: post(refreshGrant, basic), status: 400, code: "invalid_grant_type"},
		{name: "missing grant_type", send: post(noGrantType, basic), status: 400, code: "required"},
		{name: "missing code", send: post(noCode, basic), status: 400, code: "required"},
		{name: "unknown code", send: post(unknown, basic), status: 400, code: "invalid_grant"},
		{name: "malformed verifier", send: post(grant(code2, e2eRedirect, "short"), basic), status: 400, code: "invalid_request"},
		{name: "over 64 KiB", send: post(grant(strings.Repeat("A", 64<<10), e2eRedirect, ""), basic), status: 413, code: "request_too_large"},
		// A code is consumed before its bindings are checked (oidc doc.go),
		// so a stolen code presented wrongly is burnt: one write each.
		{name: "redirect_uri mismatch", send: post(grant(code2, e2eRedirect+"/", verifier2), basic), status: 400, code: "invalid_grant", writes: 1},
		{name: "burnt code presented correctly", send: post(grant(code2, e2eRedirect, verifier2), basic), status: 400, code: "invalid_grant", writes: 1},
		{name: "wrong PKCE verifier", send: post(grant(code3, e2eRedirect, verifier1), basic), status: 400, code: "invalid_grant", writes: 1},
		{name: "code of another client", send: post(grant(code4, e2eRedirect, ""), basicAuth(e.other.AppID, e.other.ClientSecret)), status: 400, code: "invalid_grant", writes: 1},
		{name: "missing PKCE verifier", send: post(grant(code3, e2eRedirect, ""), basic), status: 400, code: "invalid_grant", writes: 1},
		{name: "unused verifier of code 3", send: post(grant(code3, e2eRedirect, verifier3), basic), status: 400, code: "invalid_grant", writes: 1},
		// Replay revokes every token of the first sign-in (one write).
		{name: "code replay", send: post(grant(code1, e2eRedirect, verifier1), basic), status: 400, code: "invalid_grant", writes: 1},
	}
}

// forgeries are access tokens an attacker can make from a real one.
func forgeries(t *testing.T, at, idToken string) map[string]string {
	t.Helper()
	parts := strings.Split(at, ".")
	var header struct{ Kid string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if json.Unmarshal(hb, &header) != nil || header.Kid == "" {
		t.Fatalf("access token header %s", hb)
	}
	hdr := func(alg, extra string) string {
		return b64url(`{"alg":"` + alg + `","kid":"` + header.Kid + `","typ":"at+jwt"` + extra + `}`)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	json.Unmarshal(payload, &claims)
	claims["sub"] = "0x" + strings.Repeat("0", 63) + "1"
	tampered, _ := json.Marshal(claims)

	mac := hmac.New(sha256.New, []byte(header.Kid))
	mac.Write([]byte(hdr("HS256", "") + "." + parts[1]))
	foreignKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	foreignSig, err := rsa.SignPKCS1v15(nil, foreignKey, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"alg none":         hdr("none", "") + "." + parts[1] + ".",
		"HS256":            hdr("HS256", "") + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)),
		"foreign RSA key":  parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(foreignSig),
		"tampered payload": parts[0] + "." + base64.RawURLEncoding.EncodeToString(tampered) + "." + parts[2],
		"jku header":       hdr("RS256", `,"jku":"https://evil.example/jwks"`) + "." + parts[1] + "." + parts[2],
		"padded signature": at + "=",
		"ID token":         idToken,
		"over 8 KiB":       parts[0] + "." + b64url(`{"x":"`+strings.Repeat("x", 8<<10)+`"}`) + "." + parts[2],
	}
}

func (e *hostileEnv) userinfoCases(t *testing.T, at, idToken string) []hostileCase {
	target := e.p.public + "/userinfo"
	bearer := func(token string) func(*testing.T) reply {
		return call(http.MethodGet, target, "", "", "Authorization", "Bearer "+token)
	}
	cases := []hostileCase{
		{name: "valid token (control)", send: bearer(at), status: 200, code: ""},
		{name: "no token", send: call(http.MethodGet, target, "", ""), status: 401, code: "unauthenticated"},
		{name: "Basic scheme", send: call(http.MethodGet, target, "", "", "Authorization", "Basic "+at), status: 401, code: "unauthenticated"},
		{name: "token in the query", send: call(http.MethodGet, target+"?access_token="+at, "", ""), status: 401, code: "unauthenticated"},
		{name: "header and body", send: call(http.MethodPost, target, "application/x-www-form-urlencoded", "access_token="+at, "Authorization", "Bearer "+at), status: 400, code: "invalid_request"},
		{name: "body as text/plain", send: call(http.MethodPost, target, "text/plain", "access_token="+at), status: 415, code: "invalid_content_type"},
		{name: "PUT", send: call(http.MethodPut, target, "", "", "Authorization", "Bearer "+at), status: 405, code: "method_not_allowed"},
	}
	for name, token := range forgeries(t, at, idToken) {
		cases = append(cases, hostileCase{name: name, send: bearer(token), status: 401, code: "invalid_token"})
	}
	return cases
}

func (e *hostileEnv) introspect(app admin.CreatedApp, token string) func(*testing.T) reply {
	return call(http.MethodPost, e.p.public+"/introspect", "application/x-www-form-urlencoded", url.Values{"token": {token}}.Encode(),
		"Authorization", basicAuth(app.AppID, app.ClientSecret))
}

func activeIs(want bool) func(*testing.T, reply) {
	return func(t *testing.T, r reply) {
		var b struct{ Active *bool }
		if json.Unmarshal(r.body, &b) != nil || b.Active == nil || *b.Active != want {
			t.Errorf("introspection %s, want active %v", r.body, want)
		}
	}
}

func (e *hostileEnv) introspectCases(t *testing.T, at, idToken string) []hostileCase {
	target := e.p.public + "/introspect"
	const formCT = "application/x-www-form-urlencoded"
	basic := basicAuth(e.rp.app.AppID, e.rp.app.ClientSecret)
	cases := []hostileCase{
		{name: "own token (control)", send: e.introspect(e.rp.app, at), status: 200, code: "", check: activeIs(true)},
		{name: "another client's token", send: e.introspect(e.other, at), status: 200, code: "", check: activeIs(false)},
		{name: "no client authentication", send: call(http.MethodPost, target, formCT, "token="+at), status: 401, code: "unauthenticated"},
		{name: "GET", send: call(http.MethodGet, target, "", "", "Authorization", basic), status: 405, code: "method_not_allowed"},
		{name: "text/plain", send: call(http.MethodPost, target, "text/plain", "token="+at, "Authorization", basic), status: 415, code: "invalid_content_type"},
		{name: "missing token", send: call(http.MethodPost, target, formCT, "token_type_hint=access_token", "Authorization", basic), status: 400, code: "required"},
		{name: "duplicate token", send: call(http.MethodPost, target, formCT, "token="+at+"&token="+at, "Authorization", basic), status: 400, code: "invalid_request"},
	}
	for name, token := range forgeries(t, at, idToken) {
		cases = append(cases, hostileCase{name: name, send: e.introspect(e.rp.app, token), status: 200, code: "", check: activeIs(false)})
	}
	return cases
}

// ---- Credential refresh ----

// multipartForm encodes text fields (name, value pairs) as multipart/form-data.
func multipartForm(t *testing.T, fields ...string) (body, contentType string) {
	return multipartBody(t, func(mw *multipart.Writer) error {
		for i := 0; i+1 < len(fields); i += 2 {
			if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// multipartBody encodes the parts build writes.
func multipartBody(t *testing.T, build func(*multipart.Writer) error) (body, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := build(mw); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String(), mw.FormDataContentType()
}

// withPart adds a part with the given MIME headers (name, value pairs).
func withPart(mw *multipart.Writer, content string, header ...string) error {
	h := textproto.MIMEHeader{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	w, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, content)
	return err
}

// zkpHeader encodes an x-zkp-proof JSON object given as raw text.
func zkpHeader(rawJSON string) string { return base64.StdEncoding.EncodeToString([]byte(rawJSON)) }

// importSignup enrolls the wallet's identity and returns its commitment.
func (e *hostileEnv) importSignup(t *testing.T) string {
	c := e.w.Identity.Commitment()
	idComm := field.Format(&c)
	signup := record.Signup{IDCommitment: idComm, SignupID: "signup-hostile", VerifiedAt: time.Unix(1_700_000_000, 0).UTC()}
	if err := e.p.adminClient.ImportSignups(e.ctx, admin.SignupImport{Signups: []record.Signup{signup}}); err != nil {
		t.Fatal(err)
	}
	return idComm
}

func (e *hostileEnv) refreshRequest(t *testing.T, sub string, pcp *wallet.TestPCP, now time.Time) *http.Request {
	t.Helper()
	pk, err := e.w.ProvingKey(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, err := wallet.NewRefreshHTTPRequest(e.ctx, &wallet.RefreshRequest{IssuerURL: e.p.public, Identity: e.w.Identity, ProvingKey: pk, Sub: sub, PCP: pcp, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// resend returns a sender of req with its body rewound.
func resend(req *http.Request, header ...string) func(*testing.T) reply {
	return func(t *testing.T) reply {
		r := req.Clone(req.Context())
		var err error
		if r.Body, err = req.GetBody(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		return send(t, r)
	}
}

func (e *hostileEnv) hostileRefresh(t *testing.T) {
	idComm := e.importSignup(t)
	const sub1, sub2 = "0x" + "51", "0x" + "52"
	first := e.refreshRequest(t, sub1, nil, time.Now())
	ok := resend(first)(t)
	if ok.status != http.StatusOK {
		t.Fatalf("first refresh: %d %s", ok.status, ok.body)
	}
	issuer, err := wallet.FetchIssuerKey(e.ctx, hardenedClient, e.p.public)
	if err != nil {
		t.Fatal(err)
	}
	var subElem fr.Element
	subElem.SetUint64(0x51)
	if _, err := wallet.ParseRefreshResponse(ok.status, ok.body, issuer, subElem); err != nil {
		t.Fatalf("the issued credential does not check: %v", err)
	}
	t.Run("wallet against a hostile issuer", func(t *testing.T) { hostileIssuerAnswers(t, ok.body, issuer, subElem) })

	proof1 := first.Header.Get("x-zkp-proof")
	pcpRequest := e.highSPCPRequest(t, sub1)
	target := e.p.public + "/api/v1/refresh?idComm=" + url.QueryEscape(idComm)
	form, formCT := multipartForm(t, "sub", sub1)
	post := func(target, body, ct string, header ...string) func(*testing.T) reply {
		return call(http.MethodPost, target, ct, body, header...)
	}
	withProof := func(body, ct string) func(*testing.T) reply { return post(target, body, ct, "x-zkp-proof", proof1) }
	badRequest := func(name string, send func(*testing.T) reply) hostileCase {
		return hostileCase{name: name, send: send, status: 400, code: "INVALID_REQUEST"}
	}
	invalidSub := func(name, sub string) hostileCase {
		body, ct := multipartForm(t, "sub", sub)
		return hostileCase{name: name, send: withProof(body, ct), status: 400, code: "INVALID_SUB"}
	}
	invalidProof := func(name, header string) hostileCase {
		return hostileCase{name: name, send: post(target, form, formCT, "x-zkp-proof", header), status: 401, code: "INVALID_PROOF"}
	}
	unknownField, unknownCT := multipartForm(t, "sub", sub1, "idComm", idComm)
	bigSign, bigSignCT := multipartBody(t, func(mw *multipart.Writer) error {
		mw.WriteField("sub", sub1)
		return withPart(mw, strings.Repeat("s", 1025), "Content-Disposition", `form-data; name="hashes.sign"; filename="hashes.sign"`)
	})
	base64Part, base64CT := multipartBody(t, func(mw *multipart.Writer) error {
		return withPart(mw, "MHg1MQ==", "Content-Disposition", `form-data; name="sub"`, "Content-Transfer-Encoding", "base64")
	})
	dupSub, dupCT := multipartForm(t, "sub", sub1, "sub", sub1)
	longSub, longCT := multipartForm(t, "sub", "0x"+strings.Repeat("0", 64<<10))
	otherSub, otherCT := multipartForm(t, "sub", sub2)
	validJSON := `{"id_commitment":"` + idComm + `","sub":"` + field.Format(&subElem) + `","timestamp":` + fmt.Sprint(time.Now().Unix()) +
		`,"merkle_root":"` + idComm + `","nullifier_hash":"` + idComm + `","proof":"0x` + strings.Repeat("0", 512) + `"}`
	host := strings.TrimPrefix(e.p.public, "http://")
	runHostile(t, e.dataDir, []hostileCase{
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: "METHOD_NOT_ALLOWED"},
		badRequest("application/json", withProof(`{"sub":"0x51"}`, "application/json")),
		badRequest("multipart without boundary", withProof(form, "multipart/form-data")),
		badRequest("no content type", withProof(form, "")),
		badRequest("missing idComm", post(e.p.public+"/api/v1/refresh", form, formCT, "x-zkp-proof", proof1)),
		badRequest("duplicate idComm", post(target+"&idComm="+url.QueryEscape(idComm), form, formCT, "x-zkp-proof", proof1)),
		badRequest("idComm equal to p", post(e.p.public+"/api/v1/refresh?idComm="+bn254R, form, formCT, "x-zkp-proof", proof1)),
		badRequest("idComm traversal", post(e.p.public+"/api/v1/refresh?idComm=..%2F..%2Fetc%2Fpasswd", form, formCT, "x-zkp-proof", proof1)),
		badRequest("unknown field", withProof(unknownField, unknownCT)),
		badRequest("duplicate sub", withProof(dupSub, dupCT)),
		badRequest("base64 transfer encoding", withProof(base64Part, base64CT)),
		badRequest("truncated body", withProof(form[:len(form)-10], formCT)),
		{name: "declared length over 32 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: callRaw(e.p.public, "POST /api/v1/refresh?idComm="+url.QueryEscape(idComm)+" HTTP/1.1\r\nHost: "+host+
				"\r\nContent-Type: "+formCT+"\r\nx-zkp-proof: "+proof1+"\r\nContent-Length: 40000000\r\n\r\n", nil)},
		{name: "streamed body over 32 MiB", status: 413, code: "PAYLOAD_TOO_LARGE",
			send: callRaw(e.p.public, "POST /api/v1/refresh?idComm="+url.QueryEscape(idComm)+" HTTP/1.1\r\nHost: "+host+
				"\r\nContent-Type: "+formCT+"\r\nx-zkp-proof: "+proof1+"\r\nTransfer-Encoding: chunked\r\n\r\n", chunked(33<<20))},
		{name: "sub part over 64 KiB", send: withProof(longSub, longCT), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "hashes.sign over 1 KiB", send: withProof(bigSign, bigSignCT), status: 413, code: "PAYLOAD_TOO_LARGE"},
		{name: "missing sub", send: withProof(multipartForm(t, "encrypted_user_id", "x")), status: 400, code: "INVALID_SUB"},
		invalidSub("sub equal to p", bn254R),
		invalidSub("sub with 0X", "0X51"),
		invalidSub("sub of 65 digits", "0x"+strings.Repeat("0", 64)+"1"),
		invalidProof("missing x-zkp-proof", ""),
		invalidProof("x-zkp-proof not base64", "%%%"),
		invalidProof("x-zkp-proof unpadded", base64.RawStdEncoding.EncodeToString([]byte(validJSON+" "))),
		invalidProof("x-zkp-proof with an unknown member", zkpHeader(strings.Replace(validJSON, "{", `{"alg":"none",`, 1))),
		invalidProof("x-zkp-proof with a duplicate member", zkpHeader(strings.Replace(validJSON, "{", `{"sub":"0x01",`, 1))),
		invalidProof("x-zkp-proof id_commitment equal to p", zkpHeader(strings.Replace(validJSON, `"id_commitment":"`+idComm, `"id_commitment":"`+bn254R, 1))),
		invalidProof("x-zkp-proof that does not verify", zkpHeader(validJSON)),
		invalidProof("replayed x-zkp-proof", proof1),
		{name: "x-zkp-proof for another sub", send: withProof(otherSub, otherCT), status: 401, code: "INVALID_PROOF"},
		// The proof is checked (and spent: one write) before the PCP.
		{name: "PCP signature with s ≥ n", send: resend(pcpRequest), status: 422, code: "PCP_VALIDATION_FAILED", writes: 1,
			check: func(t *testing.T, r reply) {
				if !bytes.Contains(r.body, []byte("signature_encoding")) {
					t.Errorf("the message does not name the check: %s", r.body)
				}
			}},
	})
}

// chunked is n bytes of multipart preamble (short lines, which the
// multipart reader skips) in chunked transfer coding.
func chunked(n int) io.Reader {
	const size = 1 << 20
	chunk := fmt.Sprintf("%x\r\n%s\r\n", size, strings.Repeat(strings.Repeat("p", 1022)+"\r\n", size/1024))
	return io.MultiReader(strings.NewReader(strings.Repeat(chunk, n/size)), strings.NewReader("0\r\n\r\n"))
}

// highSPCPRequest is a PCP refresh whose hashes.sign has s replaced by
// s + n: the same signature value, not reduced, which must be refused.
func (e *hostileEnv) highSPCPRequest(t *testing.T, sub string) *http.Request {
	t.Helper()
	orbKey, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.p.adminClient.AddOrbKey(e.ctx, admin.OrbKeyRequest{OrbID: "orb-hostile", PublicKeyPEM: string(wallet.OrbKeyPEM(&orbKey.PublicKey))}); err != nil {
		t.Fatal(err)
	}
	pcp, err := wallet.BuildTestPCP(rand.Reader, orbKey, "orb-hostile", "signup-hostile", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var sig struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(pcp.HashesSign, &sig); err != nil {
		t.Fatal(err)
	}
	sig.S.Add(sig.S, secpfr.Modulus())
	if pcp.HashesSign, err = asn1.Marshal(sig); err != nil {
		t.Fatal(err)
	}
	return e.refreshRequest(t, sub, pcp, time.Now().Add(time.Second))
}

// hostileRefreshVectors sends the field_element.json vectors of the two
// refresh parsers: id_commitment as the idComm query, prefixed_hex as sub.
// A rejected value is 400 at its step; an accepted one passes it and stops
// at the missing x-zkp-proof.
func (e *hostileEnv) hostileRefreshVectors(t *testing.T) {
	var file fieldVectors
	vectors.Load(t, "field_element.json", &file)
	count := vectors.NewCounter(t, "field_element.json")
	c := e.w.Identity.Commitment()
	base := e.p.public + "/api/v1/refresh?idComm="
	form, formCT := multipartForm(t, "sub", "0x51")
	var cases []hostileCase
	for _, v := range file.IDCommitment {
		hc := hostileCase{name: "idComm " + v.Name, send: call(http.MethodPost, base+url.QueryEscape(v.Input), formCT, form), status: 401, code: "INVALID_PROOF"}
		if accept, _ := v.verdict(t); !accept {
			hc.status, hc.code = 400, "INVALID_REQUEST"
		}
		cases = append(cases, hc)
		count.Inc()
	}
	for _, v := range file.PrefixedHex {
		body, ct := multipartForm(t, "sub", v.Input)
		hc := hostileCase{name: "sub " + v.Name, send: call(http.MethodPost, base+field.Format(&c), ct, body), status: 401, code: "INVALID_PROOF"}
		if accept, _ := v.verdict(t); !accept {
			hc.status, hc.code = 400, "INVALID_SUB"
		}
		cases = append(cases, hc)
		count.Inc()
	}
	runHostile(t, e.dataDir, cases)
}

// hostileIssuerAnswers: the wallet, as the issuer's client, refuses
// credentials and issuer keys that a hostile or broken issuer could send
// (crypto.md §e checklist, seen from the holder's side).
func hostileIssuerAnswers(t *testing.T, okBody []byte, issuer *babyjub.PublicKey, sub fr.Element) {
	var answer struct{ Credential string }
	json.Unmarshal(okBody, &answer)
	raw, err := base64.StdEncoding.DecodeString(answer.Credential)
	if err != nil {
		t.Fatal(err)
	}
	var cred struct {
		Signature string
		Issuer    struct{ PK [2]string }
	}
	if err := json.Unmarshal(raw, &cred); err != nil {
		t.Fatal(err)
	}
	sig, err := hex.DecodeString(cred.Signature)
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature %q", cred.Signature)
	}
	pMinus1 := new(big.Int).Sub(fr.Modulus(), big.NewInt(1)).String()
	variants := map[string]string{
		"s + L":               strings.Replace(string(raw), cred.Signature, hex.EncodeToString(sigWithSPlusL(sig)), 1),
		"R + order-2 point":   strings.Replace(string(raw), cred.Signature, hex.EncodeToString(sigWithTorsionR(sig)), 1),
		"small-order issuer":  strings.Replace(string(raw), `"pk":["`+cred.Issuer.PK[0]+`","`+cred.Issuer.PK[1]+`"]`, `"pk":["0","`+pMinus1+`"]`, 1),
		"not canonical JSON":  strings.Replace(string(raw), `,"`, `, "`, 1),
		"another sub claimed": strings.Replace(string(raw), field.Format(&sub), "0x"+strings.Repeat("0", 63)+"2", 1),
	}
	for name, body := range variants {
		if body == string(raw) {
			t.Fatalf("%s: the variant did not change the credential", name)
		}
		answer, _ := json.Marshal(map[string]any{"success": true, "credential": base64.StdEncoding.EncodeToString([]byte(body)), "message": "ok"})
		if _, err := wallet.ParseRefreshResponse(http.StatusOK, answer, issuer, sub); err == nil {
			t.Errorf("%s: credential accepted", name)
		}
	}
	for name, pk := range map[string][2]string{
		"order-2 point":   {"0", pMinus1},
		"identity":        {"0", "1"},
		"off the curve":   {"1", "1"},
		"non-canonical x": {"0" + cred.Issuer.PK[0], cred.Issuer.PK[1]},
		"coordinate ≥ p":  {cred.Issuer.PK[0], new(big.Int).Add(fr.Modulus(), big.NewInt(1)).String()},
		"valid (control)": cred.Issuer.PK,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			json.NewEncoder(w).Encode(map[string]any{"issuer": map[string]any{"pk": pk}})
		}))
		_, err := wallet.FetchIssuerKey(context.Background(), srv.Client(), srv.URL)
		srv.Close()
		if control := name == "valid (control)"; (err == nil) != control {
			t.Errorf("issuer key %s: err = %v", name, err)
		}
	}
}

// sigWithSPlusL adds L to s (bytes 32..64, little-endian).
func sigWithSPlusL(sig []byte) []byte {
	out := bytes.Clone(sig)
	s := new(big.Int).SetBytes(reversed(sig[32:]))
	s.Add(s, babyJubJubL)
	copy(out[32:], reversed(s.FillBytes(make([]byte, 32))))
	return out
}

// sigWithTorsionR replaces R by R + (0, −1), the point of order 2: that
// is (−x, −y), so y becomes p − y and the sign of x flips (crypto.md §d).
func sigWithTorsionR(sig []byte) []byte {
	out := bytes.Clone(sig)
	enc := reversed(sig[:32])
	sign := enc[0] & 0x80
	enc[0] &^= 0x80
	y := new(big.Int).SetBytes(enc)
	y.Sub(fr.Modulus(), y)
	negY := y.FillBytes(make([]byte, 32))
	negY[0] |= sign ^ 0x80
	copy(out[:32], reversed(negY))
	return out
}

func reversed(b []byte) []byte {
	out := make([]byte, len(b))
	for i := range b {
		out[len(b)-1-i] = b[i]
	}
	return out
}

// ---- Admin and registry ----

func (e *hostileEnv) adminCases(t *testing.T) []hostileCase {
	token := e.p.adminClient.Token
	bearer := "Bearer " + token
	const ct = "application/json"
	adminCall := func(method, path, body string, header ...string) func(*testing.T) reply {
		contentType := ""
		if body != "" {
			contentType = ct
		}
		return call(method, e.p.adm+path, contentType, body, append([]string{"Authorization", bearer}, header...)...)
	}
	bad := func(name, path, body string) hostileCase {
		return hostileCase{name: name, send: adminCall(http.MethodPost, path, body), status: 400, code: "bad_request"}
	}
	unauthenticated := func(name, authorization string) hostileCase {
		return hostileCase{name: name, send: call(http.MethodGet, e.p.adm+"/admin/apps", "", "", "Authorization", authorization), status: 401, code: "unauthenticated"}
	}
	signups := make([]string, 201)
	for i := range signups {
		signups[i] = fmt.Sprintf(`{"id_commitment":"0x%064x","signup_id":"s%d","verified_at":"2024-01-01T00:00:00Z"}`, i+1, i)
	}
	return []hostileCase{
		unauthenticated("no token", ""),
		unauthenticated("wrong token", "Bearer "+strings.Repeat("0", len(token))),
		unauthenticated("token with a suffix", bearer+"x"),
		unauthenticated("token prefix", bearer[:len(bearer)-1]),
		unauthenticated("lower-case scheme", "bearer "+token),
		{name: "token in the query", send: call(http.MethodGet, e.p.adm+"/admin/apps?token="+token, "", ""), status: 401, code: "unauthenticated"},
		{name: "text/plain", send: call(http.MethodPost, e.p.adm+"/admin/apps", "text/plain", `{"name":"x","redirect_uris":["https://a.example/cb"]}`, "Authorization", bearer), status: 415, code: "unsupported_media_type"},
		{name: "over 64 KiB", send: adminCall(http.MethodPost, "/admin/apps", `{"name":"`+strings.Repeat("x", 64<<10)+`"}`), status: 413, code: "too_large"},
		{name: "DELETE", send: adminCall(http.MethodDelete, "/admin/apps", ""), status: 405, code: "method_not_allowed"},
		{name: "unknown route", send: adminCall(http.MethodGet, "/admin/%2e%2e/admin/apps", ""), status: 404, code: "not_found"},
		bad("unknown member", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb"],"secret":"s"}`),
		bad("trailing data", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb"]}{}`),
		bad("empty name", "/admin/apps", `{"name":"","redirect_uris":["https://a.example/cb"]}`),
		bad("javascript redirect", "/admin/apps", `{"name":"x","redirect_uris":["javascript:alert(1)"]}`),
		bad("http redirect off loopback", "/admin/apps", `{"name":"x","redirect_uris":["http://evil.example/cb"]}`),
		bad("redirect with a fragment", "/admin/apps", `{"name":"x","redirect_uris":["https://a.example/cb#f"]}`),
		bad("commitment equal to p", "/admin/identities", `{"identity_commitment":"`+bn254R+`"}`),
		bad("commitment with a leading zero", "/admin/identities", `{"identity_commitment":"042"}`),
		bad("identifier traversal", "/admin/identities", `{"identifier":"../orb","identity_commitment":"0x2a"}`),
		bad("root equal to p", "/admin/roots", `{"root":"`+bn254R+`"}`),
		bad("root depth 99", "/admin/roots", `{"root":"0x`+strings.Repeat("0", 63)+`1","depth":99}`),
		bad("Orb key off the curve", "/admin/orbkeys", `{"orb_id":"o","public_key_pem":`+quoteJSON(offCurveOrbKeyPEM(t))+`}`),
		bad("Orb key not PEM", "/admin/orbkeys", `{"orb_id":"o","public_key_pem":"AAAA"}`),
		bad("signup commitment in upper case", "/admin/signups", `{"signups":[{"id_commitment":"0x`+strings.Repeat("A", 64)+`","signup_id":"s","verified_at":"2024-01-01T00:00:00Z"}]}`),
		bad("201 signups", "/admin/signups", `{"signups":[`+strings.Join(signups, ",")+`]}`),
		bad("rp id traversal", "/admin/actions", `{"rp_id":"../rp","action":"a","max_verifications":1}`),
		bad("negative limit", "/admin/actions", `{"rp_id":"`+e.rp.app.RPID+`","action":"a","max_verifications":-1}`),
		{name: "limit for an unknown rp", send: adminCall(http.MethodPost, "/admin/actions", `{"rp_id":"rp_0000000000000000","action":"a","max_verifications":1}`), status: 404, code: "not_found"},
	}
}

// offCurveOrbKeyPEM is a secp256k1 SPKI PEM whose point is off the curve.
func offCurveOrbKeyPEM(t *testing.T) string {
	key, err := wallet.GenerateOrbKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(wallet.OrbKeyPEM(&key.PublicKey))
	block.Bytes[len(block.Bytes)-1] ^= 1 // the last byte of y
	return string(pem.EncodeToMemory(block))
}

func (e *hostileEnv) registryCases() []hostileCase {
	target := e.p.public + "/api/v1/inclusion-proof"
	post := func(ct, body string) func(*testing.T) reply { return call(http.MethodPost, target, ct, body) }
	bad := func(name, ct, body string) hostileCase {
		return hostileCase{name: name, send: post(ct, body), status: 400, code: "invalid_request"}
	}
	return []hostileCase{
		bad("text/plain", "text/plain", `{"identity_commitment":"0x2a"}`),
		{name: "over 4 KiB", send: post("application/json", `{"identity_commitment":"0x2a","identifier":"`+strings.Repeat("o", 4<<10)+`"}`), status: 413, code: "request_too_large"},
		bad("commitment equal to p", "application/json", `{"identity_commitment":"`+bn254R+`"}`),
		bad("unknown member", "application/json", `{"identity_commitment":"0x2a","depth":30}`),
		bad("identifier traversal", "application/json", `{"identity_commitment":"0x2a","identifier":"../orb"}`),
		{name: "commitment not in the tree", send: post("application/json", `{"identity_commitment":"0x2a"}`), status: 404, code: "not_found"},
		// A method the route pattern lacks is refused by net/http's mux.
		{name: "GET", send: call(http.MethodGet, target, "", ""), status: 405, code: ""},
	}
}

// TestHostileTokenLifetimeAndIssuer refuses expired codes, sign-in
// requests and tokens, tokens from the future and tokens of another
// issuer. It runs in process with a settable clock (signinHarness in
// concurrency_test.go), since the binary reads the real one.
func TestHostileTokenLifetimeAndIssuer(t *testing.T) {
	a, b := newSigninHarness(t), newSigninHarness(t)
	issuedAt := a.clock.Now()
	tok, err := a.issue()
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := b.issue()
	if err != nil {
		t.Fatal(err)
	}
	expect := func(name, token string, status int, code string, active bool) {
		t.Helper()
		if r := a.userinfo(t, token); r.status != status || r.errorCode() != code {
			t.Errorf("%s: userinfo %d %q, want %d %q", name, r.status, r.errorCode(), status, code)
		}
		if r := a.introspect(t, token); r.status != http.StatusOK || bytes.Contains(r.body, []byte(`"active":true`)) != active {
			t.Errorf("%s: introspection %d %s, want active %v", name, r.status, r.body, active)
		}
	}
	expect("fresh token", tok.AccessToken, 200, "", true)
	expect("another issuer's token", foreign.AccessToken, 401, "invalid_token", false)
	a.clock.Set(issuedAt.Add(3599 * time.Second))
	expect("token in its last second", tok.AccessToken, 200, "", true)
	a.clock.Set(issuedAt.Add(3600 * time.Second))
	expect("expired token", tok.AccessToken, 401, "invalid_token", false)
	a.clock.Set(issuedAt.Add(-2 * time.Minute))
	expect("token issued in the future", tok.AccessToken, 401, "invalid_token", false)

	a.clock.Set(issuedAt)
	code, err := a.signIn(randomFE())
	if err != nil {
		t.Fatal(err)
	}
	pending := pendingSignin(t, a.authorizeURL())
	a.clock.Add(10 * time.Minute)
	if r, _, err := a.exchange(code); err != nil || r.status != http.StatusBadRequest || r.errorCode() != "invalid_grant" {
		t.Errorf("expired code: %v %d %s", err, r.status, r.body)
	}
	if r, err := a.complete(pending.Get("request_id"), randomFE()); err != nil || r.status != http.StatusBadRequest || r.errorCode() != "invalid_request" {
		t.Errorf("expired sign-in request: %v %d %s", err, r.status, r.body)
	}
}

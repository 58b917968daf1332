package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/cli"
	"worldid/internal/server"
	"worldid/internal/wallet"
	"worldid/record"
	"worldid/semaphore"
)

// The abuse scenario: while legitimate clients verify, sign in
// and refresh at a modest rate, junk floods every unauthenticated surface
// as fast as the machine allows. The server runs as its own process, with
// its rate limits on, so that its memory can be read from /proc and the
// load generator's is not counted. The junk is sent by a process of its
// own too (`worldid-bench -flood`), as strangers on other machines would
// send it: it still takes its share of the same cores, but legitimate
// clients never wait behind junk in their own process's scheduler, so
// their latency is the server's. Three phases:
//
//	unloaded   legitimate clients alone: the p99 to compare with
//	junk alone each kind of junk in turn: what it adds to the store
//	flooded    legitimate clients and all junk: success, p99, server RSS
//
// Junk connects from other loopback addresses (127.0.2.0 onwards) than the
// legitimate clients (127.0.0.1, and 127.0.1.x for refreshes), as strangers
// would, so per-source rate limits tell them apart; the refresh junk uses a
// new source for every request, the strongest such attacker.

// abuseRefreshSkew dates the legitimate refresh proofs ahead of their
// preparation, so they stay within the server's ±300 s window through a
// preparation and a run of several minutes.
const abuseRefreshSkew = 240 * time.Second

// junkBodySize is the junk multipart body: three 8 MiB iris shares and a
// hashes.json, as the reproduction sent.
const junkBodySize = 25 << 20

// abuseServer is the server process under test.
type abuseServer struct {
	pid     int    // 0: unknown (a -server without -server-pid)
	dataDir string // JSON store files; "" when unknown
	stop    func()
}

func runAbuse(ctx context.Context, bf *benchFlags, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "worldid-abuse-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, public, err := bf.abuseServer(ctx, filepath.Join(dir, "data"), stderr)
	if err != nil {
		return err
	}
	defer srv.stop()
	env := &benchEnv{dir: dir, base: public, servers: []string{public}, http: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if env.admin, err = bf.Client(); err != nil {
		return err
	}
	if err := env.register(ctx); err != nil {
		return err
	}
	// Both phases last -duration, so each p99 is over as many requests.
	phaseA := bf.duration
	legit, victims, err := env.prepareLegit(ctx, bf.legitRate, phaseA, bf.duration, stderr)
	if err != nil {
		return err
	}
	spec, err := env.floodSpec(ctx, victims)
	if err != nil {
		return err
	}
	kinds := len(junkKinds(spec))
	report := &AbuseReport{Duration: bf.duration}
	fmt.Fprintf(stderr, "bench: abuse phase 1/3: legitimate clients alone for %s\n", phaseA)
	unloaded := env.runLegit(ctx, legit, 0, phaseA)

	junkAlone := max(bf.duration/time.Duration(3*kinds), 2*time.Second)
	fmt.Fprintf(stderr, "bench: abuse phase 2/3: each kind of junk alone, %s each\n", junkAlone)
	// A legitimate request the phase's deadline cut off may still be
	// completing on the server: let it land before counting junk writes.
	time.Sleep(2 * time.Second)
	for k := range kinds {
		before, _ := srv.storeUsage()
		results, _, err := env.flood(ctx, spec, []int{k}, bf.clients, junkAlone)
		if err != nil {
			return err
		}
		r := results[0]
		time.Sleep(500 * time.Millisecond) // writes of answered requests are acknowledged by now; let stragglers land
		if after, ok := srv.storeUsage(); ok {
			r.Store = before.Delta(after)
			report.JunkStore = addDelta(report.JunkStore, r.Store)
		}
		report.JunkOnly = append(report.JunkOnly, r)
	}
	if report.JunkStore == nil {
		report.Notes = append(report.Notes, "store bytes unknown: pass -data with the JSON store's data dir of -server")
	}

	fmt.Fprintf(stderr, "bench: abuse phase 3/3: legitimate clients under the flood for %s\n", bf.duration)
	if srv.pid != 0 {
		if err := ResetPeakMemory(srv.pid); err != nil {
			report.Notes = append(report.Notes, "cannot reset the peak RSS, so the peak is since start: "+err.Error())
		}
		report.RSSBefore, _, _ = ProcMemory(srv.pid)
	} else {
		report.Notes = append(report.Notes, "server RSS unknown: pass -server-pid with -server")
	}
	storeBefore, _ := srv.storeUsage()
	serverCPU0, _ := ProcCPU(srv.pid)
	generatorCPU0, _ := ProcCPU(os.Getpid())
	var floodErr error
	var floodCPU time.Duration
	flooded := make(chan struct{})
	go func() {
		defer close(flooded)
		report.Junk, floodCPU, floodErr = env.flood(ctx, spec, nil, bf.clients, bf.duration)
	}()
	loaded := env.runLegit(ctx, legit, 1, bf.duration)
	<-flooded
	if floodErr != nil {
		return floodErr
	}
	if srv.pid != 0 {
		report.RSSAfter, report.RSSPeak, _ = ProcMemory(srv.pid)
		if cpu, err := ProcCPU(srv.pid); err == nil {
			report.ServerCPU = cpu - serverCPU0
		}
	}
	if cpu, err := ProcCPU(os.Getpid()); err == nil {
		report.GeneratorCPU = cpu - generatorCPU0 + floodCPU
	}
	if after, ok := srv.storeUsage(); ok {
		report.LoadedStore = storeBefore.Delta(after)
	}
	for i := range legit {
		report.Legit = append(report.Legit, LegitResult{Name: legit[i].name, Unloaded: unloaded[i], Loaded: loaded[i]})
	}
	if bf.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	return WriteAbuse(stdout, report)
}

func addDelta(sum, d *StoreDelta) *StoreDelta {
	if sum == nil {
		sum = &StoreDelta{}
	}
	sum.Writes += d.Writes
	sum.Bytes += d.Bytes
	return sum
}

func (s *abuseServer) storeUsage() (StoreUsage, bool) {
	if s.dataDir == "" {
		return StoreUsage{}, false
	}
	u, err := ReadStoreUsage(s.dataDir)
	return u, err == nil && u.Bytes > 0
}

// abuseServer starts `worldid serve` as a child process on dataDir, or
// uses -server (with -data and -server-pid for the store and memory
// figures). It returns the public URL and sets the admin flags.
func (bf *benchFlags) abuseServer(ctx context.Context, dataDir string, stderr io.Writer) (*abuseServer, string, error) {
	if bf.server != "" {
		if strings.Contains(bf.server, ",") {
			return nil, "", cli.UsageError{Err: errors.New("abuse drives one server")}
		}
		return &abuseServer{pid: bf.serverPID, dataDir: bf.DataDir, stop: func() {}}, strings.TrimRight(bf.server, "/"), nil
	}
	exe, err := worldidBinary(bf.worldid)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(stderr, "bench: starting %s serve on %s (a first start makes the local proving key: minutes)\n", exe, dataDir)
	cmd := exec.CommandContext(ctx, exe, "serve", "-data", dataDir, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0", "-log-level", "error")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	public, adminURL, err := server.ScanListeners(bufio.NewScanner(out), nil)
	if err != nil {
		stop()
		return nil, "", fmt.Errorf("bench: %w", err)
	}
	go io.Copy(io.Discard, out)
	bf.URL, bf.DataDir = adminURL, dataDir
	return &abuseServer{pid: cmd.Process.Pid, dataDir: dataDir, stop: stop}, public, nil
}

// legitScenario is one legitimate client population: an operation per
// phase (single-use pools are split) and its pace.
type legitScenario struct {
	name    string
	ops     [2]Op
	rate    float64
	clients int
}

// prepareLegit makes the legitimate traffic: verify (16 proofs, reusable),
// sign-in and refresh (one proof per call, enough for rate × phase). It
// returns the refresh identities' commitments, which junk then names.
func (e *benchEnv) prepareLegit(ctx context.Context, rate float64, phaseA, phaseC time.Duration, progress io.Writer) ([]legitScenario, []fr.Element, error) {
	verify, err := e.verifyOp(ctx)
	if err != nil {
		return nil, nil, err
	}
	counts := [2]int{int(rate*phaseA.Seconds()) + 2, int(rate*phaseC.Seconds()) + 2}
	subs, err := e.signinSubmissions(ctx, counts[0]+counts[1], progress)
	if err != nil {
		return nil, nil, err
	}
	signin := legitScenario{name: "signin", rate: rate, clients: 4}
	for phase, part := range [2][]wallet.SignInSubmission{subs[:counts[0]], subs[counts[0]:]} {
		pool := NewPool(part)
		signin.ops[phase] = func(ctx context.Context, _, _ int) error {
			s, err := pool.Take()
			if err != nil {
				return err
			}
			res, err := e.wallet.Submit(ctx, s)
			if err == nil && res.Params.Get("code") == "" {
				err = fmt.Errorf("no code in %s", res.Location)
			}
			return err
		}
	}
	refresh, victims, err := e.legitRefresh(ctx, counts, rate, progress)
	if err != nil {
		return nil, nil, err
	}
	return []legitScenario{{name: "verify", ops: [2]Op{verify, verify}, rate: 10 * rate, clients: 8}, signin, refresh}, victims, nil
}

// legitRefresh prepares one credential-only refresh per identity, each
// identity enrolled, sent from its own loopback source so the per-source
// limit is the stranger's problem only.
func (e *benchEnv) legitRefresh(ctx context.Context, counts [2]int, rate float64, progress io.Writer) (legitScenario, []fr.Element, error) {
	n := counts[0] + counts[1]
	fmt.Fprintf(progress, "bench: preparing %d legitimate refreshes (one identity and proof each)…\n", n)
	pk, err := e.wallet.ProvingKey(ctx)
	if err != nil {
		return legitScenario{}, nil, err
	}
	reqs := make([]wallet.RefreshRequest, n)
	victims := make([]fr.Element, n)
	var signups []record.Signup
	ts := time.Now().Add(abuseRefreshSkew)
	for i := range reqs {
		id, err := wallet.NewIdentityFile(filepath.Join(e.dir, fmt.Sprintf("abuse-refresh-%d.json", i)), rand.Reader)
		if err != nil {
			return legitScenario{}, nil, err
		}
		victims[i] = id.Commitment()
		signups = append(signups, record.Signup{IDCommitment: field.Format(&victims[i]), SignupID: fmt.Sprint("abuse-", i), VerifiedAt: time.Now().UTC()})
		reqs[i] = wallet.RefreshRequest{IssuerURL: e.base, Identity: id, ProvingKey: pk, Sub: fmt.Sprintf("0x%x", i+1), Now: ts}
	}
	if err := cli.ImportSignups(ctx, e.admin, signups); err != nil {
		return legitScenario{}, nil, err
	}
	prepared, err := parallelPrepare(ctx, n, func(ctx context.Context, i int) (*http.Request, error) {
		return wallet.NewRefreshHTTPRequest(ctx, &reqs[i])
	})
	if err != nil {
		return legitScenario{}, nil, err
	}
	client := &http.Client{Timeout: time.Minute, Transport: sourceTransport(loopbackHost(e.base), 200, true)}
	s := legitScenario{name: "refresh", rate: rate, clients: 4}
	for phase, part := range [2][]*http.Request{prepared[:counts[0]], prepared[counts[0]:]} {
		pool := NewPool(part)
		s.ops[phase] = func(ctx context.Context, _, _ int) error {
			r, err := pool.Take()
			if err != nil {
				return err
			}
			req := r.Clone(ctx)
			if req.Body, err = r.GetBody(); err != nil {
				return err
			}
			return expectStatus(client, req, http.StatusOK)
		}
	}
	return s, victims, nil
}

// runLegit runs every legitimate scenario of phase at once for d.
func (e *benchEnv) runLegit(ctx context.Context, legit []legitScenario, phase int, d time.Duration) []Result {
	results := make([]Result, len(legit))
	done := make(chan struct{})
	for i, s := range legit {
		go func() {
			results[i] = Run(ctx, Config{Name: s.name, Clients: s.clients, Duration: d, Rate: s.rate}, s.ops[phase])
			done <- struct{}{}
		}()
	}
	for range legit {
		<-done
	}
	return results
}

// floodSpec is what a flood process needs to send the junk: the abuse
// scenario writes it to a file for `worldid-bench -flood FILE`.
type floodSpec struct {
	Base  string `json:"base"`
	AppID string `json:"app_id"`
	RPID  string `json:"rp_id"`
	// Victims are the legitimate refresh identities' commitments, Roots
	// their one-leaf trees' roots, Proof a well-formed x-zkp-proof of
	// something else: all public, so a stranger has them too.
	Victims  []string            `json:"victims"`
	Roots    []string            `json:"roots"`
	Proof    record.RefreshProof `json:"proof"`
	Kinds    []int               `json:"kinds"` // indexes into junkKinds; none: all
	Clients  int                 `json:"clients"`
	Duration time.Duration       `json:"duration"`
}

// floodSpec makes the junk refresh proof's template and the victims'
// roots. Each junk proof passes every check but the Groth16 equation, so
// each costs the server a full verification.
func (e *benchEnv) floodSpec(ctx context.Context, victims []fr.Element) (*floodSpec, error) {
	pk, err := e.wallet.ProvingKey(ctx)
	if err != nil {
		return nil, err
	}
	var one fr.Element
	one.SetOne()
	real, err := wallet.RefreshProof(pk, e.wallet.Identity, one, time.Now().Unix(), nil)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(real)
	if err != nil {
		return nil, err
	}
	spec := &floodSpec{Base: e.base, AppID: e.app.AppID, RPID: e.app.RPID}
	if err := json.Unmarshal(raw, &spec.Proof); err != nil {
		return nil, err
	}
	for _, v := range victims {
		tree, err := semaphore.BuildTree(30, []fr.Element{v})
		if err != nil {
			return nil, err
		}
		root := tree.Root()
		spec.Victims, spec.Roots = append(spec.Victims, field.Format(&v)), append(spec.Roots, field.Format(&root))
	}
	return spec, nil
}

// junkRefreshHeader is the i-th junk x-zkp-proof: the template naming
// victim i, dated now, with a made-up nullifier.
func (s *floodSpec) junkRefreshHeader(i int) string {
	p := s.Proof
	v := i % len(s.Victims)
	var one fr.Element
	one.SetOne()
	p.IDCommitment, p.MerkleRoot, p.Sub = s.Victims[v], s.Roots[v], field.Format(&one)
	p.Timestamp = time.Now().Unix()
	var nullifier fr.Element
	nullifier.SetUint64(uint64(i))
	p.NullifierHash = field.Format(&nullifier)
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}

// junkKinds are the unauthenticated surfaces the flood hits.
func junkKinds(spec *floodSpec) []JunkKind {
	loopback := loopbackHost(spec.Base)
	perRequest := &http.Client{Timeout: time.Minute, Transport: sourceTransport(loopback, 2, true),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	pooled := &http.Client{Timeout: time.Minute, Transport: sourceTransport(loopback, 40, false),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var source atomic.Uint32
	victimURL := func(i int) string {
		return spec.Base + "/api/v1/refresh?idComm=" + url.QueryEscape(spec.Victims[i%len(spec.Victims)])
	}
	form, formCT := "--b\r\nContent-Disposition: form-data; name=\"sub\"\r\n\r\n0x1\r\n--b--\r\n", "multipart/form-data; boundary=b"
	verifyBodies := []string{
		`{"protocol_version":"3.0","nonce":"n","action":"v` + "\xff" + `","responses":[]}`,
		`{"protocol_version":"3.0","nonce":"n","action":"v","session_id":"s","responses":[{}]}`,
		`{"protocol_version":"3.0",`,
		`{"protocol_version":"3.0","nonce":"n","action":"v","responses":[` + strings.Repeat(`{"identifier":"orb"},`, 100) + `{}]}`,
	}
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	authorize := func(seq int) string {
		q := url.Values{"response_type": {"code"}, "client_id": {spec.AppID}, "redirect_uri": {benchRedirect},
			"scope": {"openid"}, "state": {fmt.Sprint(seq)}, "nonce": {rand.Text()}}
		return spec.Base + "/authorize?" + q.Encode()
	}
	return []JunkKind{
		{Name: "refresh, junk proof naming a real idComm", Op: func(ctx context.Context, w, seq int) (int, error) {
			i := int(source.Add(1))
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, victimURL(i), strings.NewReader(form))
			req.Header.Set("Content-Type", formCT)
			req.Header.Set("x-zkp-proof", spec.junkRefreshHeader(i))
			return junkStatus(perRequest, req)
		}},
		{Name: "refresh, 25 MiB junk multipart body", Op: func(ctx context.Context, w, seq int) (int, error) {
			return postJunkBody(ctx, loopback, int(source.Add(1)), victimURL(seq+w))
		}},
		{Name: "authorize GET", Op: func(ctx context.Context, w, seq int) (int, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, authorize(seq), nil)
			return junkStatus(pooled, req)
		}},
		{Name: "verify, bad bodies", Op: func(ctx context.Context, w, seq int) (int, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, spec.Base+"/api/v4/verify/"+spec.RPID, strings.NewReader(verifyBodies[seq%len(verifyBodies)]))
			req.Header.Set("Content-Type", "application/json")
			return junkStatus(pooled, req)
		}},
		{Name: "inclusion-proof, deep JSON", Op: func(ctx context.Context, w, seq int) (int, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, spec.Base+"/api/v1/inclusion-proof", strings.NewReader(deep))
			req.Header.Set("Content-Type", "application/json")
			return junkStatus(pooled, req)
		}},
	}
}

// flood runs the junk kinds (all when kinds is empty) for d as a process
// of its own, as strangers on other machines would send it: legitimate
// clients in this process then never queue behind junk in its scheduler.
// It returns the results and the flood process's CPU time.
func (e *benchEnv) flood(ctx context.Context, spec *floodSpec, kinds []int, clients int, d time.Duration) ([]FloodResult, time.Duration, error) {
	s := *spec
	s.Kinds, s.Clients, s.Duration = kinds, clients, d
	f, err := os.CreateTemp(e.dir, "flood-*.json")
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(f.Name())
	err = json.NewEncoder(f).Encode(&s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, 0, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.CommandContext(ctx, exe, "-flood", f.Name())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("bench: flood process: %w: %s", err, stderr.String())
	}
	var results []FloodResult
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, 0, fmt.Errorf("bench: flood process: %w", err)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return results, cpu, nil
}

// runFlood is the flood process: it sends the junk its spec file names
// and prints the results as JSON.
func runFlood(ctx context.Context, specFile string, stdout io.Writer) error {
	b, err := os.ReadFile(specFile)
	if err != nil {
		return err
	}
	var spec floodSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("%s: %w", specFile, err)
	}
	if len(spec.Victims) == 0 || len(spec.Victims) != len(spec.Roots) {
		return fmt.Errorf("%s: victims and roots must be non-empty and paired", specFile)
	}
	all := junkKinds(&spec)
	kinds := all
	if len(spec.Kinds) > 0 {
		kinds = nil
		for _, k := range spec.Kinds {
			if k < 0 || k >= len(all) {
				return fmt.Errorf("%s: no junk kind %d", specFile, k)
			}
			kinds = append(kinds, all[k])
		}
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Duration)
	defer cancel()
	return json.NewEncoder(stdout).Encode(Flood(ctx, spec.Clients, kinds))
}

// junkStatus sends req and returns its status, draining the answer.
func junkStatus(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

// junkShare is one MiB of junk, written junkBodySize>>20 times.
var junkShare = []byte(strings.Repeat("s", 1<<20))

// postJunkBody declares a 25 MiB multipart body and streams it over a raw
// connection while reading the answer: a server that answers before
// reading the body closes the connection, which net/http's client may
// report as an error instead of the answer.
func postJunkBody(ctx context.Context, loopback bool, source int, target string) (int, error) {
	u, err := url.Parse(target)
	if err != nil {
		return 0, err
	}
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: sourceAddr(loopback, 2, source)}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	go func() {
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/form-data; boundary=b\r\nx-zkp-proof: junk\r\nContent-Length: %d\r\n\r\n",
			u.RequestURI(), u.Host, junkBodySize)
		if _, err := io.WriteString(conn, head+"--b\r\nContent-Disposition: form-data; name=\"iris_code_shares_0\"\r\n\r\n"); err != nil {
			return
		}
		for range junkBodySize >> 20 {
			if _, err := conn.Write(junkShare); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// worldidBinary is the server binary abuse starts: path if given, else
// worldid in this command's directory (both are built side by side), else
// worldid on PATH.
func worldidBinary(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "worldid")
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	path, err := exec.LookPath("worldid")
	if err != nil {
		return "", fmt.Errorf("the worldid binary to start as the server: %w (give -worldid PATH, or -server)", err)
	}
	return path, nil
}

// sourceTransport dials from a rotating loopback source address in
// 127.0.<block>.x (250 per block, 8 blocks) when the server is on loopback:
// blocks 2–9 and 40–47 are junk, 200–207 legitimate refreshes.
// newConnEach makes every request a new connection, hence a new source.
func sourceTransport(loopback bool, block int, newConnEach bool) *http.Transport {
	var n atomic.Uint32
	return &http.Transport{
		DisableKeepAlives:   newConnEach,
		MaxIdleConnsPerHost: 256,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: sourceAddr(loopback, block, int(n.Add(1)))}
			return d.DialContext(ctx, network, addr)
		},
	}
}

// sourceAddr is the i-th loopback source address from 127.0.<block>.1;
// nil (any) when the server is not on loopback.
func sourceAddr(loopback bool, block, i int) net.Addr {
	if !loopback {
		return nil
	}
	i %= 8 * 250
	return &net.TCPAddr{IP: net.IPv4(127, 0, byte(block+i/250), byte(1+i%250))}
}

// loopbackHost reports whether base names a 127.0.0.0/8 address.
func loopbackHost(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback() && ip.To4() != nil
}

// expectStatus sends req with c and checks the status, draining the body
// so the connection is reused.
func expectStatus(c *http.Client, req *http.Request, status int) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != status {
		return fmt.Errorf("%s %s: %d: %.200s", req.Method, req.URL.Path, resp.StatusCode, body)
	}
	return nil
}

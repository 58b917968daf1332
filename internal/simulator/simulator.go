package simulator

import (
	crand "crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"html/template"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/bridge"
	"worldid/field"
	"worldid/internal/wallet"
	"worldid/registry"
	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// Path is the simulator page on the public listener.
const Path = "/simulator"

// identityCount test identities exist, each in the test tree.
const identityCount = 3

// levels are the verification levels a test identity proves.
var levels = []string{"orb", "device"}

// TestIdentity is the n-th (1-based) deterministic test identity: the
// same on every server, so a relying party sees the same sub each time.
func TestIdentity(n int) semaphore.Identity {
	seed := sha256.Sum256([]byte("worldid simulator test identity " + strconv.Itoa(n)))
	id, err := semaphore.NewIdentity(rand.NewChaCha8(seed))
	if err != nil {
		panic(err) // ChaCha8 never fails to read
	}
	return id
}

// Trees is the test identities' tree, built in memory when the simulator
// starts and never stored: its root is accepted (Accepts, the registry's
// TestRoots hook) only by the process that built it, only while it runs
// with -simulator. One tree serves both levels, since the level a proof
// claims is not part of its root.
type Trees struct {
	root  fr.Element
	paths []semaphore.MerklePath // of test identity n at n-1
}

// NewTrees builds the test tree at the registry's depth, which the local
// proving key proves for.
func NewTrees() (*Trees, error) {
	leaves := make([]fr.Element, identityCount)
	for n := 1; n <= identityCount; n++ {
		leaves[n-1] = TestIdentity(n).Commitment()
	}
	tree, err := semaphore.BuildTree(registry.TreeDepth, leaves)
	if err != nil {
		return nil, err
	}
	t := &Trees{root: tree.Root()}
	for i := range leaves {
		path, err := tree.Path(i)
		if err != nil {
			return nil, err
		}
		t.paths = append(t.paths, path)
	}
	return t, nil
}

// Accepts reports whether root is the test tree's root and the credential
// type one the test identities prove (orb or device), in either
// environment, so that staging apps can be tried too.
func (t *Trees) Accepts(credentialType, environment string, root fr.Element) bool {
	return slices.Contains(levels, credentialType) && root.Equal(&t.root)
}

// Wallet is test identity n's wallet, proving against the test tree and
// talking to server through client.
func (t *Trees) Wallet(n int, server string, client *http.Client) *wallet.Wallet {
	path := t.paths[n-1]
	return &wallet.Wallet{Identity: TestIdentity(n), Server: server, HTTP: client,
		Paths: func(string, string) (semaphore.MerklePath, error) { return path, nil }}
}

// Simulator serves the simulator page.
type Simulator struct {
	listener   string // the server's own public listener, http(s)://host:port
	baseHost   string // the host of the server's public URL
	trees      *Trees
	provingKey *prover.ProvingKey
	http       *http.Client
}

// New returns the simulator of the server whose public listener is at
// listenerURL and whose public URL is baseURL, proving with pk against
// trees.
func New(listenerURL, baseURL string, trees *Trees, pk *prover.ProvingKey) (*Simulator, error) {
	target, err := url.Parse(listenerURL)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, err
	}
	// Every request of the simulated wallet to this server (its built-in
	// bridge) goes to its own listener, whatever public URL (behind a
	// proxy) the links name; another bridge is reached as it is.
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // our own loopback listener
	client := &http.Client{Transport: rewriteHost{target, base.Host, transport, http.DefaultTransport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Simulator{listener: listenerURL, baseHost: base.Hostname(), trees: trees, provingKey: pk, http: client}, nil
}

type rewriteHost struct {
	target       *url.URL
	host         string // the public URL's host[:port]
	next, others http.RoundTripper
}

func (rw rewriteHost) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != rw.host {
		return rw.others.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rw.target.Scheme, rw.target.Host, ""
	return rw.next.RoundTrip(r)
}

// Allowed reports whether r may use the simulator: a loopback client that
// came through no proxy and names a loopback host or the server's own. The
// Host check stops DNS rebinding: a page whose name its attacker re-points
// at 127.0.0.1 is same-origin with itself, but names its own host.
func (s *Simulator) Allowed(r *http.Request) bool {
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(client)
	return err == nil && ip != nil && ip.IsLoopback() && s.ownHost(r.Host)
}

// ownHost reports whether hostport (a Host header) names this server: a
// loopback address, localhost (RFC 6761 §6.3), or the base URL's host.
func (s *Simulator) ownHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	return host == "localhost" || strings.HasSuffix(host, ".localhost") || host == strings.ToLower(s.baseHost)
}

// Register adds the simulator page to mux. Its form accepts same-origin
// posts only (Sec-Fetch-Site, else Origin against Host): the browser of a
// developer visiting another site must not approve a sign-in through it.
func (s *Simulator) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Path, s.guard(s.serveForm))
	mux.HandleFunc("POST "+Path, s.guard(http.NewCrossOriginProtection().Handler(http.HandlerFunc(s.serveSubmit)).ServeHTTP))
}

func (s *Simulator) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.Allowed(r) {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}
}

var page = template.Must(template.New("").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>World ID simulator</title></head>
<body><main>
<h1>World ID developer simulator</h1>
<p><strong>Test identities only.</strong> This server runs with -simulator: never in production. The test identities exist only in this server's memory while it runs with -simulator; no stored tree holds them.</p>
{{with .Result}}<p id="result">{{.}}</p>{{end}}
{{if .Link}}<form method="post" action="{{.Action}}">
<input type="hidden" name="link" value="{{.Link}}">
<fieldset><legend>Identity</legend>{{range .Identities}}
<label><input type="radio" name="identity" value="{{.N}}" id="identity-{{.N}}"{{if eq .N 1}} checked{{end}}> Test identity {{.N}} (simulator) <code>{{.Commitment}}</code></label><br>{{end}}
</fieldset>
<fieldset><legend>Verification level</legend>
<label><input type="radio" name="level" value="orb" id="level-orb" checked> Orb</label>
<label><input type="radio" name="level" value="device" id="level-device"> Device</label>
</fieldset>
<label><input type="checkbox" name="invalid" value="1" id="invalid"> Send an invalid proof (the server must refuse it)</label>
<p><button type="submit" id="approve">Approve the sign-in</button></p>
</form>{{end}}
</main></body></html>
`))

type identityRow struct {
	N          int
	Commitment string
}

type pageData struct {
	Action, Link, Result string
	Identities           []identityRow
}

func (s *Simulator) render(w http.ResponseWriter, status int, link, result string) {
	data := pageData{Action: Path, Link: link, Result: result}
	for n := 1; n <= identityCount; n++ {
		c := TestIdentity(n).Commitment()
		data.Identities = append(data.Identities, identityRow{n, field.Format(&c)})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	page.Execute(w, data)
}

// serveForm shows the choices for the connect URL in ?link=.
func (s *Simulator) serveForm(w http.ResponseWriter, r *http.Request) {
	link := r.URL.Query().Get("link")
	if _, err := bridge.ParseConnect(link); err != nil {
		s.render(w, http.StatusBadRequest, "", "Open the simulator from a sign-in page's \"complete with a test identity\" link.")
		return
	}
	s.render(w, http.StatusOK, link, "")
}

// serveSubmit proves with the chosen identity and level and answers the
// bridge request like a wallet; "invalid" answers a real proof for
// another signal, which the server refuses.
func (s *Simulator) serveSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		s.render(w, http.StatusBadRequest, "", "The form could not be read.")
		return
	}
	link, level := r.PostForm.Get("link"), r.PostForm.Get("level")
	n, err := strconv.Atoi(r.PostForm.Get("identity"))
	_, perr := bridge.ParseConnect(link)
	if perr != nil || err != nil || n < 1 || n > identityCount || !slices.Contains(levels, level) {
		s.render(w, http.StatusBadRequest, link, "Choose a test identity and a verification level.")
		return
	}
	wal := s.trees.Wallet(n, s.listener, s.http)
	wal.UseProvingKey(s.provingKey)
	req, err := wal.ReadBridgeRequest(r.Context(), link)
	if err != nil {
		s.render(w, http.StatusOK, "", "The request could not be read (already answered, or expired): "+err.Error())
		return
	}
	if r.PostForm.Get("invalid") != "" {
		req.Request.Signal = otherSignal
	}
	if _, err := wal.AnswerBridgeRequest(r.Context(), req, level, crand.Reader); err != nil {
		s.render(w, http.StatusOK, "", "Refused: "+err.Error())
		return
	}
	s.render(w, http.StatusOK, "", "Answered as test identity "+strconv.Itoa(n)+" ("+level+"). The waiting tab continues by itself.")
}

// otherSignal is the hashed signal of the "invalid proof" choice: a real
// proof, for a signal that is not the sign-in's.
const otherSignal = "0x00000000000000000000000000000000000000000000000000000000000000ff"

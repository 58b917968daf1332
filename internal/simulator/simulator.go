package simulator

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/wallet"
	"worldid/record"
	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// Path is the simulator page on the public listener.
const Path = "/simulator"

// identityCount test identities exist; each is in both production trees.
const identityCount = 3

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

// Registry is where the test identities are enrolled.
type Registry interface {
	AddIdentity(ctx context.Context, identifier, environment string, commitment fr.Element) (int, fr.Element, error)
}

// Enroll adds every test identity to the production orb and device trees
// unless it is there already.
func Enroll(ctx context.Context, r Registry) ([]string, error) {
	var commitments []string
	for n := 1; n <= identityCount; n++ {
		c := TestIdentity(n).Commitment()
		for _, tree := range []string{"orb", "device"} {
			if _, _, err := r.AddIdentity(ctx, tree, "production", c); err != nil && !errors.Is(err, record.ErrExists) {
				return nil, fmt.Errorf("simulator: enroll test identity %d in %s: %w", n, tree, err)
			}
		}
		commitments = append(commitments, field.Format(&c))
	}
	return commitments, nil
}

// Simulator serves the simulator page.
type Simulator struct {
	listener   string // the server's own public listener, http(s)://host:port
	provingKey *prover.ProvingKey
	http       *http.Client
}

// New returns the simulator of the server whose public listener is at
// listenerURL, proving with pk.
func New(listenerURL string, pk *prover.ProvingKey) (*Simulator, error) {
	target, err := url.Parse(listenerURL)
	if err != nil {
		return nil, err
	}
	// Every request of the simulated wallet goes to this server's own
	// listener, whatever public URL (behind a proxy) the links name.
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // our own loopback listener
	client := &http.Client{Transport: rewriteHost{target, transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Simulator{listener: listenerURL, provingKey: pk, http: client}, nil
}

type rewriteHost struct {
	target *url.URL
	next   http.RoundTripper
}

func (rw rewriteHost) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = rw.target.Scheme, rw.target.Host, ""
	return rw.next.RoundTrip(r)
}

// Allowed reports whether r may use the simulator: a loopback client that
// came through no proxy.
func Allowed(r *http.Request) bool {
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}

// Register adds the simulator page to mux.
func (s *Simulator) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+Path, s.guard(s.serveForm))
	mux.HandleFunc("POST "+Path, s.guard(s.serveSubmit))
}

func (s *Simulator) guard(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !Allowed(r) {
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
<p><strong>Test identities only.</strong> This server runs with -simulator: never in production.</p>
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

// serveForm shows the choices for the wallet link in ?link=.
func (s *Simulator) serveForm(w http.ResponseWriter, r *http.Request) {
	link := r.URL.Query().Get("link")
	if !strings.HasPrefix(link, "worldid://signin?") {
		s.render(w, http.StatusBadRequest, "", "Open the simulator from a sign-in page's \"complete with a test identity\" link.")
		return
	}
	s.render(w, http.StatusOK, link, "")
}

// serveSubmit proves with the chosen identity and level and submits like
// a wallet.
func (s *Simulator) serveSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		s.render(w, http.StatusBadRequest, "", "The form could not be read.")
		return
	}
	link, level := r.PostForm.Get("link"), r.PostForm.Get("level")
	n, err := strconv.Atoi(r.PostForm.Get("identity"))
	if !strings.HasPrefix(link, "worldid://signin?") || err != nil || n < 1 || n > identityCount || (level != "orb" && level != "device") {
		s.render(w, http.StatusBadRequest, link, "Choose a test identity and a verification level.")
		return
	}
	wal := &wallet.Wallet{Identity: TestIdentity(n), Server: s.listener, HTTP: s.http}
	wal.UseProvingKey(s.provingKey)
	var code string
	if r.PostForm.Get("invalid") != "" {
		code, err = wal.ApproveTampered(r.Context(), link, level)
	} else {
		code, err = wal.Approve(r.Context(), link, level)
	}
	if err != nil {
		s.render(w, http.StatusOK, link, "Refused: "+err.Error())
		return
	}
	s.render(w, http.StatusOK, "", "Approved as test identity "+strconv.Itoa(n)+" ("+level+"), match code "+code+". The waiting tab continues by itself.")
}

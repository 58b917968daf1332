package refresh

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
	"worldid/semaphore/prover"
	"worldid/store"
	"worldid/store/jsontest"
)

// testStore is the JSON store, which passes the backends' conformance
// suite (store/storetest), with a fault to inject and a record of the
// refreshes stored.
type testStore struct {
	*store.DB
	mu     sync.Mutex
	fail   error           // returned by RefreshEnabled when set
	hidden map[string]bool // idComms whose pin PinnedSub does not see yet
	// refreshes are the refreshes RecordRefresh stored, in order, with
	// the proof key they spent.
	refreshes []record.Refresh
}

func newTestStore(t testing.TB) *testStore {
	return &testStore{DB: jsontest.Open(t), hidden: map[string]bool{}}
}

func (s *testStore) RefreshEnabled(ctx context.Context) (bool, error) {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return false, fail
	}
	return s.DB.RefreshEnabled(ctx)
}

func (s *testStore) PinnedSub(ctx context.Context, idComm string) (string, error) {
	s.mu.Lock()
	hidden := s.hidden[idComm]
	s.mu.Unlock()
	if hidden {
		return "", record.ErrNotFound
	}
	return s.DB.PinnedSub(ctx, idComm)
}

func (s *testStore) RecordRefresh(ctx context.Context, r record.Refresh) error {
	if err := s.DB.RecordRefresh(ctx, r); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshes = append(s.refreshes, r)
	return nil
}

// hidePin makes the pin of idComm invisible to PinnedSub, as when it is
// read before the refresh that pins it commits.
func (s *testStore) hidePin(idComm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hidden[idComm] = true
}

// pin is the sub pinned to idComm, or "".
func (s *testStore) pin(t testing.TB, idComm string) string {
	t.Helper()
	sub, err := s.DB.PinnedSub(t.Context(), idComm)
	if err != nil && !errors.Is(err, record.ErrNotFound) {
		t.Fatal(err)
	}
	return sub
}

// state is every stored row, for "nothing stored" checks.
func (s *testStore) state(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	err := s.Export(t.Context(), func(table string, row any) error {
		line, err := json.Marshal(row)
		fmt.Fprintf(&b, "%s %s\n", table, line)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// lockedReader makes a deterministic reader safe for concurrent requests.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

// clock is an adjustable Options.Now.
type clock struct{ unix atomic.Int64 }

func (c *clock) now() time.Time { return time.Unix(c.unix.Load(), 0) }

const t0 = 1_750_000_000

// prover is the local Semaphore key pair, set up once per test binary.
var localProver = sync.OnceValues(func() (*prover.ProvingKey, error) {
	pk, _, err := prover.Setup(treeDepth)
	return pk, err
})

func provingKey(t testing.TB) *prover.ProvingKey {
	t.Helper()
	pk, err := localProver()
	if err != nil {
		t.Fatal(err)
	}
	return pk
}

// identity is a deterministic Semaphore identity for tests.
func identity(t testing.TB, seed uint64) semaphore.Identity {
	t.Helper()
	id, err := semaphore.NewIdentity(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func idCommOf(id semaphore.Identity) string {
	c := id.Commitment()
	return field.Format(&c)
}

// proofJSON builds the x-zkp-proof JSON for sub (canonical), ts and an
// optional hashes.json, as the wallet does.
func proofJSON(t testing.TB, id semaphore.Identity, sub string, ts int64, hashesJSON []byte) record.RefreshProof {
	t.Helper()
	tree, err := semaphore.BuildTree(treeDepth, []fr.Element{id.Commitment()})
	if err != nil {
		t.Fatal(err)
	}
	path, err := tree.Path(0)
	if err != nil {
		t.Fatal(err)
	}
	digest := ""
	if hashesJSON != nil {
		d := sha256.Sum256(hashesJSON)
		digest = hex.EncodeToString(d[:])
	}
	signal := semaphore.HashToField([]byte(record.RefreshSignal(sub, ts, digest)))
	ext := semaphore.ExternalNullifier(record.RefreshProofAppID, record.RefreshProofAction)
	proof, in, err := prover.Prove(provingKey(t), id, path, signal, ext)
	if err != nil {
		t.Fatal(err)
	}
	return record.RefreshProof{
		IDCommitment:  idCommOf(id),
		Sub:           sub,
		Timestamp:     ts,
		MerkleRoot:    field.Format(&in.Root),
		NullifierHash: field.Format(&in.NullifierHash),
		Proof:         proof.ABIHex(),
		PCPDigest:     digest,
	}
}

func encodeProof(t testing.TB, p any) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// part is one multipart field; file parts get a filename.
type part struct {
	name, value string
	file        bool
}

func multipartBody(t testing.TB, parts []part) (body []byte, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, p.name)
		if p.file {
			disp += fmt.Sprintf(`; filename=%q`, p.name)
			h.Set("Content-Type", "application/octet-stream")
		}
		h.Set("Content-Disposition", disp)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, p.value)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// parts returns the form parts of a vector's PCP.
func (v *pcpVector) parts() []part {
	var ps []part
	for k, val := range v.Form {
		ps = append(ps, part{name: k, value: val})
	}
	sig, _ := hex.DecodeString(v.HashesSignHex)
	return append(ps, part{partHashesJSON, v.HashesJSON, true}, part{partHashesSign, string(sig), true})
}

// env is a handler under test with its store, clock and issuer key.
type testEnv struct {
	t      testing.TB
	store  *testStore
	clock  *clock
	issuer *babyjub.PrivateKey
	h      *Handler
	remote string
}

func newEnv(t testing.TB, mod func(*Options)) *testEnv {
	t.Helper()
	issuer, err := babyjub.NewPrivateKey(bytes.Repeat([]byte{9}, babyjub.SeedSize))
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, store: newTestStore(t), clock: &clock{}, issuer: issuer, remote: "192.0.2.1:1234"}
	e.clock.unix.Store(t0)
	o := Options{
		Store:        e.store,
		VerifyingKey: provingKey(t).VerifyingKey(),
		IssuerKey:    issuer,
		Now:          e.clock.now,
		Rand:         &lockedReader{r: rand.NewChaCha8([32]byte{1})},
		Log:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		PerIP:        Rate{Burst: -1},
		PerIDComm:    Rate{Burst: -1},
	}
	if mod != nil {
		mod(&o)
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	return e
}

// signup registers an enrollment for id.
func (e *testEnv) signup(id semaphore.Identity, signupID string) {
	if err := e.store.PutSignup(e.t.Context(), record.Signup{IDCommitment: idCommOf(id), SignupID: signupID, VerifiedAt: time.Unix(1_718_031_600, 0)}); err != nil {
		e.t.Fatal(err)
	}
}

type result struct {
	status     int
	header     http.Header
	Success    bool   `json:"success"`
	Error      string `json:"error"`
	Message    string `json:"message"`
	Credential string `json:"credential"`
	raw        string
}

// do sends a refresh request with the given parts and proof header.
func (e *testEnv) do(idComm string, parts []part, proofHeader string) *result {
	e.t.Helper()
	body, ct := multipartBody(e.t, parts)
	return e.doRaw(httptest.NewRequest(http.MethodPost, Path+"?idComm="+idComm, bytes.NewReader(body)), ct, proofHeader)
}

func (e *testEnv) doRaw(r *http.Request, contentType, proofHeader string) *result {
	e.t.Helper()
	r.Header.Set("Content-Type", contentType)
	if proofHeader != "" {
		r.Header.Set("x-zkp-proof", proofHeader)
	}
	r.RemoteAddr = e.remote
	w := httptest.NewRecorder()
	mux := http.NewServeMux()
	e.h.Register(mux)
	mux.ServeHTTP(w, r)
	res := &result{status: w.Code, header: w.Header(), raw: w.Body.String()}
	if err := json.Unmarshal(w.Body.Bytes(), res); err != nil {
		e.t.Fatalf("response is not JSON: %q", w.Body.String())
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		e.t.Errorf("Content-Type %q", ct)
	}
	return res
}

// expect asserts status and code (and success=false for errors).
func (r *result) expect(t testing.TB, status int, code string) {
	t.Helper()
	if r.status != status || r.Error != code || r.Success != (status == http.StatusOK) {
		t.Fatalf("got %d %q (%s), want %d %q", r.status, r.Error, r.raw, status, code)
	}
}

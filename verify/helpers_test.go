package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/backup"
	"worldid/record"
	"worldid/store"
	"worldid/store/jsontest"
)

// Test fixtures: one registered app.
const (
	testAppID = "app_0123456789abcdef0123456789abcdef"
	testRPID  = "rp_0123456789abcdef"
	rpPath    = "/api/v4/verify/" + testRPID
	appPath   = "/api/v4/verify/" + testAppID
	// nullifierA/B are valid nullifiers in canonical form.
	nullifierA = "0x0000000000000000000000000000000000000000000000000000000000000a0a"
	nullifierB = "0x000000000000000000000000000000000000000000000000000000000000000b"
	// rootHex is a valid merkle root.
	rootHex = "0x0936d98c83151035b528d1631df5c3607a740bd296b4c79c627130a96645dcc7"
	// pHex is the BN254 scalar field modulus p (doc/crypto.md §a).
	pHex = "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"
)

var testStart = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// testStore is the JSON store, which passes the backends' conformance
// suite (store/storetest), holding the test app, with faults to inject
// and a count of its app lookups.
type testStore struct {
	*store.DB
	t       testing.TB
	mu      sync.Mutex
	lookups int
	// failLookup / failRecord, when set, are returned by the lookups / RecordVerification.
	failLookup, failRecord error
}

func newTestStore(t testing.TB) *testStore {
	t.Helper()
	s := &testStore{DB: jsontest.Open(t), t: t}
	s.addApp(record.App{ID: testAppID, RPID: testRPID, Name: "test", CreatedAt: testStart})
	return s
}

// lookup counts one app lookup and returns the injected failure, if any.
func (s *testStore) lookup() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lookups++
	return s.failLookup
}

func (s *testStore) AppByRP(ctx context.Context, rpID string) (record.App, error) {
	if err := s.lookup(); err != nil {
		return record.App{}, err
	}
	return s.DB.AppByRP(ctx, rpID)
}

func (s *testStore) App(ctx context.Context, appID string) (record.App, error) {
	if err := s.lookup(); err != nil {
		return record.App{}, err
	}
	return s.DB.App(ctx, appID)
}

func (s *testStore) RecordVerification(ctx context.Context, rpID, action, env, nullifier string, now time.Time) (record.Verification, error) {
	s.mu.Lock()
	fail := s.failRecord
	s.mu.Unlock()
	if fail != nil {
		return record.Verification{}, fail
	}
	return s.DB.RecordVerification(ctx, rpID, action, env, nullifier, now)
}

func (s *testStore) addApp(a record.App) {
	s.t.Helper()
	if err := s.CreateApp(s.t.Context(), a); err != nil {
		s.t.Fatal(err)
	}
}

// changeApp changes the app of id, its id included.
func (s *testStore) changeApp(id string, change func(*record.App)) {
	s.t.Helper()
	a, err := s.DB.App(s.t.Context(), id)
	if err == nil {
		err = s.DeleteApp(s.t.Context(), id)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	change(&a)
	s.addApp(a)
}

func (s *testStore) setLimit(action, env string, n int) {
	s.t.Helper()
	if err := s.SetActionLimit(s.t.Context(), testRPID, action, env, n, testStart); err != nil {
		s.t.Fatal(err)
	}
}

// rows is every stored row as JSON, by table.
func (s *testStore) rows() map[string][]string {
	s.t.Helper()
	rows := map[string][]string{}
	err := s.Export(s.t.Context(), func(table string, row any) error {
		b, err := json.Marshal(row)
		rows[table] = append(rows[table], string(b))
		return err
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return rows
}

// count is how often the test app's action recorded the nullifier.
func (s *testStore) count(action, env, nullifier string) int {
	s.t.Helper()
	for _, row := range s.rows()[backup.TableNullifiers] {
		var v backup.Nullifier
		if err := json.Unmarshal([]byte(row), &v); err != nil {
			s.t.Fatal(err)
		}
		if v.RPID == testRPID && v.Action == action && v.Environment == env && v.Nullifier == nullifier {
			return v.Count
		}
	}
	return 0
}

// fakeChecker decides by the proof string: a proof named after a
// record.Code* constant fails with it, "boom" is a checker failure,
// "panic" panics, anything else verifies. It records every claim.
type fakeChecker struct {
	mu     sync.Mutex
	claims []record.Claim
}

func (f *fakeChecker) CheckClaim(_ context.Context, c record.Claim) error {
	f.mu.Lock()
	f.claims = append(f.claims, c)
	f.mu.Unlock()
	switch c.Proof {
	case record.CodeInvalidFormat, record.CodeInvalidMerkleRoot, record.CodeRootTooOld, record.CodeInvalidProof:
		return &record.ProofError{Code: c.Proof, Detail: "detail for " + c.Proof}
	case "boom":
		return errors.New("registry exploded")
	case "panic":
		panic("checker bug")
	}
	return nil
}

func (f *fakeChecker) seen() []record.Claim {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]record.Claim(nil), f.claims...)
}

// env is a test server: the handler registered on a mux, its store and
// checker, and a clock the test advances.
type env struct {
	mux     *http.ServeMux
	store   *testStore
	checker *fakeChecker
	now     time.Time
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{mux: http.NewServeMux(), store: newTestStore(t), checker: &fakeChecker{}, now: testStart}
	h, err := New(Options{Store: e.store, Checker: e.checker, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	h.Register(e.mux)
	return e
}

func (e *env) do(method, path, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	e.mux.ServeHTTP(w, r)
	return w
}

func (e *env) post(path, body string) *httptest.ResponseRecorder {
	return e.do(http.MethodPost, path, "application/json", body)
}

// idkitItem is a responses item as IDKit's ResponseItemV3 serializes it
// (identifier, signal_hash, proof, merkle_root, nullifier) plus max_age.
type idkitItem struct {
	Identifier string `json:"identifier"`
	SignalHash string `json:"signal_hash,omitempty"`
	Proof      string `json:"proof"`
	MerkleRoot string `json:"merkle_root"`
	Nullifier  string `json:"nullifier"`
	MaxAge     int    `json:"max_age,omitempty"`
}

// idkitResult is the IDKit result object a relying party forwards as the body.
type idkitResult struct {
	ProtocolVersion   string      `json:"protocol_version"`
	Nonce             string      `json:"nonce"`
	Action            string      `json:"action"`
	ActionDescription string      `json:"action_description,omitempty"`
	Environment       string      `json:"environment,omitempty"`
	Responses         []idkitItem `json:"responses"`
}

func item(proof, nullifier string) idkitItem {
	return idkitItem{Identifier: "orb", Proof: proof, MerkleRoot: rootHex, Nullifier: nullifier}
}

func newRequest(items ...idkitItem) idkitResult {
	return idkitResult{ProtocolVersion: "3.0", Nonce: "0x01", Action: "vote", Responses: items}
}

func (r idkitResult) json(t testing.TB) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// decode unmarshals a response body strictly into v.
func decode(t testing.TB, w *httptest.ResponseRecorder, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", w.Body, err)
	}
}

// failureBody is the {success:false, code, detail, results} body.
type failureBody struct {
	Success bool     `json:"success"`
	Code    string   `json:"code"`
	Detail  string   `json:"detail"`
	Results []Result `json:"results"`
}

// errorBody is the {code, detail, attribute} body.
type errorBody struct {
	Code      string  `json:"code"`
	Detail    string  `json:"detail"`
	Attribute *string `json:"attribute"`
}

func wantStatus(t testing.TB, w *httptest.ResponseRecorder, status int) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d; body %s", w.Code, status, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
}

func wantSuccess(t testing.TB, w *httptest.ResponseRecorder) Response {
	t.Helper()
	wantStatus(t, w, http.StatusOK)
	var resp Response
	decode(t, w, &resp)
	if !resp.Success {
		t.Fatalf("success false in 200 body %s", w.Body)
	}
	return resp
}

func wantFailure(t testing.TB, w *httptest.ResponseRecorder, status int, code string) failureBody {
	t.Helper()
	wantStatus(t, w, status)
	var f failureBody
	decode(t, w, &f)
	if f.Success || f.Code != code || f.Detail == "" || f.Results == nil {
		t.Fatalf("body %s, want success false, code %s, a detail and results", w.Body, code)
	}
	return f
}

func wantError(t testing.TB, w *httptest.ResponseRecorder, status int, code, attribute string) {
	t.Helper()
	wantStatus(t, w, status)
	var e errorBody
	decode(t, w, &e)
	got := ""
	if e.Attribute != nil {
		got = *e.Attribute
	}
	if e.Code != code || got != attribute || e.Detail == "" {
		t.Fatalf("body %s, want code %q attribute %q", w.Body, code, attribute)
	}
	if attribute == "" && !strings.Contains(w.Body.String(), `"attribute":null`) {
		t.Errorf("body %s: attribute should be null", w.Body)
	}
}

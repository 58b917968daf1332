package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/internal/httpapi"
	"worldid/internal/vectors"
	"worldid/record"
)

// semaphoreVectors is the part of semaphore_vectors.json used here: real
// World ID 3.0 proofs and their public inputs, as realistic request items.
type semaphoreVectors struct {
	Vectors []struct {
		Name          string   `json:"name"`
		ProofPacked   []string `json:"proof_packed"`
		ProofABIHex   string   `json:"proof_abi_hex"`
		Root          string   `json:"root"`
		NullifierHash string   `json:"nullifier_hash"`
		SignalHash    string   `json:"signal_hash"`
	} `json:"vectors"`
}

// canonical32 is an independent canonicalization of a hex input: big.Int
// parse, then 32 big-endian bytes.
func canonical32(t *testing.T, s string) [32]byte {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 0)
	if !ok || n.Sign() < 0 || n.BitLen() > 256 {
		t.Fatalf("bad vector hex %q", s)
	}
	var b [32]byte
	n.FillBytes(b[:])
	return b
}

// TestIDKitRequest posts vector proofs exactly as a relying party forwards
// an IDKit result, and checks the checker sees the vector's public inputs
// and the proof string unchanged, bound to the app_id, action and environment.
func TestIDKitRequest(t *testing.T) {
	var v semaphoreVectors
	vectors.Load(t, "semaphore_vectors.json", &v)
	c := vectors.NewCounter(t, "semaphore_vectors.json")
	for i, vec := range v.Vectors {
		proof := vec.ProofABIHex
		if proof == "" {
			// The nested-JSON encoding of doc/crypto.md §g, as some clients send it.
			w := vec.ProofPacked
			b, err := json.Marshal([]any{w[0:2], [][]string{w[2:4], w[4:6]}, w[6:8]})
			if err != nil {
				t.Fatal(err)
			}
			proof = string(b)
		}
		e := newEnv(t)
		body := idkitResult{
			ProtocolVersion: "3.0", Nonce: "0x2a", Action: fmt.Sprintf("action-%d", i), ActionDescription: "a vote",
			Environment: "staging",
			Responses: []idkitItem{{
				Identifier: "orb", SignalHash: vec.SignalHash, Proof: proof,
				MerkleRoot: vec.Root, Nullifier: vec.NullifierHash, MaxAge: 7200,
			}},
		}
		resp := wantSuccess(t, e.post(rpPath, body.json(t)))
		claims := e.checker.seen()
		if len(claims) != 1 {
			t.Fatalf("%s: %d checks", vec.Name, len(claims))
		}
		want := record.Claim{
			Identifier: "orb", Environment: "staging", AppID: testAppID, Action: body.Action,
			MerkleRoot: canonical32(t, vec.Root), NullifierHash: canonical32(t, vec.NullifierHash),
			SignalHash: canonical32(t, vec.SignalHash), Proof: proof, MaxAge: 2 * time.Hour,
		}
		if claims[0] != want {
			t.Errorf("%s: claim\n%+v\nwant\n%+v", vec.Name, claims[0], want)
		}
		nullifier := fmt.Sprintf("0x%064x", canonical32(t, vec.NullifierHash))
		if resp.Nullifier != nullifier || resp.Action != body.Action || resp.Environment != "staging" ||
			!slices.Equal(resp.Results, []Result{{Identifier: "orb", Success: true, Nullifier: nullifier}}) {
			t.Errorf("%s: response %+v", vec.Name, resp)
		}
		c.Inc()
	}
}

func TestSuccessBody(t *testing.T) {
	e := newEnv(t)
	w := e.post(rpPath, newRequest(item("valid", "0xA0A")).json(t))
	wantStatus(t, w, http.StatusOK)
	var got map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"success":     true,
		"action":      "vote",
		"nullifier":   nullifierA,
		"created_at":  "2025-06-01T12:00:00Z",
		"environment": "production",
		"message":     "Proof verified successfully",
		"results": []any{map[string]any{
			"identifier": "orb", "success": true, "nullifier": nullifierA,
		}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("body\n%v\nwant\n%v", got, want)
	}
}

// TestDefaults: absent signal_hash and max_age take their documented defaults.
func TestDefaults(t *testing.T) {
	e := newEnv(t)
	wantSuccess(t, e.post(rpPath, newRequest(item("valid", nullifierA)).json(t)))
	c := e.checker.seen()[0]
	if got := canonicalHex(c.SignalHash); got != defaultSignalHash {
		t.Errorf("signal hash %s", got)
	}
	if c.MaxAge != 604800*time.Second {
		t.Errorf("max age %v", c.MaxAge)
	}
}

func TestNullifierReuse(t *testing.T) {
	e := newEnv(t)
	first := wantSuccess(t, e.post(rpPath, newRequest(item("valid", nullifierA)).json(t)))
	e.now = e.now.Add(time.Hour)
	// Same nullifier written differently: stored and compared canonically.
	again := wantSuccess(t, e.post(rpPath, newRequest(item("valid", "a0a")).json(t)))
	if again.Message != messageReused || first.Message != messageVerified {
		t.Errorf("messages %q, %q", first.Message, again.Message)
	}
	if !again.CreatedAt.Equal(testStart) || !first.CreatedAt.Equal(testStart) {
		t.Errorf("created_at %v then %v, want the original %v", first.CreatedAt, again.CreatedAt, testStart)
	}
	if n := e.store.count("vote", "production", nullifierA); n != 2 {
		t.Errorf("count %d", n)
	}
}

// TestScopes: nullifiers are per (rp, action, environment); sandbox is
// staging; an app_ route id uses its app's rp.
func TestScopes(t *testing.T) {
	e := newEnv(t)
	post := func(path, action, environment string) Response {
		t.Helper()
		r := newRequest(item("valid", nullifierA))
		r.Action, r.Environment = action, environment
		return wantSuccess(t, e.post(path, r.json(t)))
	}
	steps := []struct {
		path, action, env, wantEnv string
		reused                     bool
	}{
		{rpPath, "vote", "", "production", false},
		{appPath, "vote", "production", "production", true},
		{rpPath, "other", "", "production", false},
		{rpPath, "vote", "staging", "staging", false},
		{appPath, "vote", "sandbox", "sandbox", true},
	}
	for i, s := range steps {
		resp := post(s.path, s.action, s.env)
		if resp.Environment != s.wantEnv || (resp.Message == messageReused) != s.reused {
			t.Errorf("step %d: environment %q message %q", i, resp.Environment, resp.Message)
		}
	}
	for _, c := range e.checker.seen() {
		if c.AppID != testAppID || (c.Environment != "production" && c.Environment != "staging") {
			t.Errorf("claim app %q environment %q", c.AppID, c.Environment)
		}
	}
	if n := e.store.count("vote", "staging", nullifierA); n != 2 {
		t.Errorf("staging count %d (sandbox must share it)", n)
	}
}

func TestItemFailures(t *testing.T) {
	for _, code := range []string{record.CodeInvalidFormat, record.CodeInvalidMerkleRoot, record.CodeRootTooOld, record.CodeInvalidProof} {
		e := newEnv(t)
		f := wantFailure(t, e.post(rpPath, newRequest(item(code, nullifierA)).json(t)), http.StatusBadRequest, codeAllFailed)
		want := []Result{{Identifier: "orb", Nullifier: nullifierA, Code: code, Detail: "detail for " + code}}
		if !slices.Equal(f.Results, want) {
			t.Errorf("%s: results %+v", code, f.Results)
		}
		if n := e.store.count("vote", "production", nullifierA); n != 0 {
			t.Errorf("%s: a failed item was recorded", code)
		}
	}
}

// TestMixedItems: the first successful item gives the top-level nullifier;
// every item keeps its own result; only that nullifier is recorded.
func TestMixedItems(t *testing.T) {
	e := newEnv(t)
	r := newRequest(item(record.CodeInvalidProof, nullifierB), item("valid", nullifierA), item("valid", nullifierB))
	r.Responses[1].Identifier = "device"
	resp := wantSuccess(t, e.post(rpPath, r.json(t)))
	want := []Result{
		{Identifier: "orb", Nullifier: nullifierB, Code: record.CodeInvalidProof, Detail: "detail for invalid_proof"},
		{Identifier: "device", Success: true, Nullifier: nullifierA},
		{Identifier: "orb", Success: true, Nullifier: nullifierB},
	}
	if resp.Nullifier != nullifierA || !slices.Equal(resp.Results, want) {
		t.Errorf("response %+v", resp)
	}
	if a, b := e.store.count("vote", "production", nullifierA), e.store.count("vote", "production", nullifierB); a != 1 || b != 0 {
		t.Errorf("counts A=%d B=%d, want 1 and 0", a, b)
	}
}

func TestMaxVerifications(t *testing.T) {
	e := newEnv(t)
	e.store.setLimit("vote", "production", 2)
	body := newRequest(item("valid", nullifierA)).json(t)
	wantSuccess(t, e.post(rpPath, body))
	wantSuccess(t, e.post(rpPath, body))
	f := wantFailure(t, e.post(rpPath, body), http.StatusBadRequest, codeLimitReached)
	if f.Results[0].Success || f.Results[0].Code != codeLimitReached {
		t.Errorf("results %+v", f.Results)
	}
	// Another nullifier, another action or environment is unaffected.
	wantSuccess(t, e.post(rpPath, newRequest(item("valid", nullifierB)).json(t)))
	other := newRequest(item("valid", nullifierA))
	other.Environment = "staging"
	wantSuccess(t, e.post(rpPath, other.json(t)))
}

// TestLimitTriesNextNullifier: a nullifier at its limit fails all its items
// and the next successful item with another nullifier is recorded.
func TestLimitTriesNextNullifier(t *testing.T) {
	e := newEnv(t)
	e.store.setLimit("vote", "production", 1)
	wantSuccess(t, e.post(rpPath, newRequest(item("valid", nullifierA)).json(t)))
	resp := wantSuccess(t, e.post(rpPath, newRequest(item("valid", nullifierA), item("valid", nullifierB), item("valid", nullifierA)).json(t)))
	limited := Result{Identifier: "orb", Nullifier: nullifierA, Code: codeLimitReached, Detail: detailLimitReached}
	want := []Result{limited, {Identifier: "orb", Success: true, Nullifier: nullifierB}, limited}
	if resp.Nullifier != nullifierB || !slices.Equal(resp.Results, want) {
		t.Errorf("response %+v", resp)
	}
}

// TestConcurrentLimit: 100 concurrent requests with one nullifier and
// max_verifications 1 give exactly one success.
func TestConcurrentLimit(t *testing.T) {
	e := newEnv(t)
	e.store.setLimit("vote", "production", 1)
	body := newRequest(item("valid", nullifierA)).json(t)
	var wg sync.WaitGroup
	statuses := make([]int, 100)
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.post(rpPath, body).Code })
	}
	wg.Wait()
	ok, limited := 0, 0
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusBadRequest:
			limited++
		}
	}
	if ok != 1 || limited != 99 {
		t.Errorf("%d successes and %d rejections, want 1 and 99", ok, limited)
	}
	if n := e.store.count("vote", "production", nullifierA); n != 1 {
		t.Errorf("count %d", n)
	}
}

func TestCheckerFailure(t *testing.T) {
	for _, proof := range []string{"boom", "panic"} {
		e := newEnv(t)
		f := wantFailure(t, e.post(rpPath, newRequest(item(proof, nullifierA), item(record.CodeInvalidProof, nullifierA)).json(t)),
			http.StatusInternalServerError, codeInternal)
		if f.Results[0].Code != codeVerificationErr || f.Results[0].Detail != detailVerificationErr || f.Results[1].Code != record.CodeInvalidProof {
			t.Errorf("%s: results %+v", proof, f.Results)
		}
		// Another item that verifies still makes the request succeed.
		resp := wantSuccess(t, e.post(rpPath, newRequest(item(proof, nullifierA), item("valid", nullifierB)).json(t)))
		if resp.Nullifier != nullifierB || resp.Results[0].Code != codeVerificationErr {
			t.Errorf("%s: response %+v", proof, resp)
		}
	}
}

// barrierChecker verifies only once n checks are in flight at the same time.
type barrierChecker struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (b *barrierChecker) CheckClaim(ctx context.Context, _ record.Claim) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-time.After(10 * time.Second):
		return &record.ProofError{Code: record.CodeInvalidProof, Detail: "checks were not concurrent"}
	}
}

func TestItemsCheckedConcurrently(t *testing.T) {
	const n = DefaultMaxResponses
	h, err := New(Options{Store: newTestStore(t), Checker: &barrierChecker{n: n, all: make(chan struct{})}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	items := make([]idkitItem, n)
	for i := range items {
		items[i] = item("valid", nullifierA)
	}
	e := &env{mux: mux}
	resp := wantSuccess(t, e.post(rpPath, newRequest(items...).json(t)))
	for _, r := range resp.Results {
		if !r.Success {
			t.Fatalf("result %+v", r)
		}
	}
}

func TestStoreErrors(t *testing.T) {
	body := newRequest(item("valid", nullifierA)).json(t)
	for _, tc := range []struct {
		lookup, rec error
		status      int
		code        string
	}{
		{lookup: fmt.Errorf("disk: %w", record.ErrUnavailable), status: http.StatusServiceUnavailable, code: codeUnavailable},
		{lookup: errors.New("corrupt"), status: http.StatusInternalServerError, code: codeInternal},
		{rec: fmt.Errorf("disk: %w", record.ErrUnavailable), status: http.StatusServiceUnavailable, code: codeUnavailable},
		{rec: errors.New("corrupt"), status: http.StatusInternalServerError, code: codeInternal},
		// The client went away: neither a 5xx nor an error log.
		{rec: fmt.Errorf("commit: %w", context.Canceled), status: httpapi.StatusClientClosed, code: codeInternal},
	} {
		e := newEnv(t)
		e.store.failLookup, e.store.failRecord = tc.lookup, tc.rec
		w := e.post(rpPath, body)
		wantError(t, w, tc.status, tc.code, "")
	}
}

func TestRouting(t *testing.T) {
	body := newRequest(item("valid", nullifierA)).json(t)
	e := newEnv(t)
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodPatch} {
		w := e.do(m, rpPath, "application/json", body)
		wantError(t, w, http.StatusMethodNotAllowed, codeMethod, "")
		if a := w.Header().Get("Allow"); a != http.MethodPost {
			t.Errorf("%s: Allow %q", m, a)
		}
	}
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "application/jsonx", "application/json;;"} {
		wantError(t, e.do(http.MethodPost, rpPath, ct, body), http.StatusUnsupportedMediaType, codeContentType, "")
	}
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON; charset=UTF-8"} {
		wantSuccess(t, e.do(http.MethodPost, rpPath, ct, body))
	}
	lookups := e.store.lookups
	for _, path := range []string{
		"/api/v4/verify/rp_0123456789ABCDEF",    // upper case
		"/api/v4/verify/rp_0123456789abcde",     // short
		"/api/v4/verify/rp_0123456789abcdef0",   // long
		"/api/v4/verify/app_0123456789abcdef",   // short app id
		"/api/v4/verify/app_staging_0123456789", // short staging id
		"/api/v4/verify/app_staging_0123456789ABCDEF0123456789abcdef",
		"/api/v4/verify/rp_%2F..%2F..%2Fadmin",
		"/api/v4/verify/%72p_0123456789abcdef%2F",
		"/api/v4/verify/",
		"/api/v4/verify/" + testRPID + "/extra",
	} {
		wantError(t, e.post(path, body), http.StatusNotFound, codeNotFound, "")
	}
	if e.store.lookups != lookups {
		t.Errorf("malformed ids reached the store")
	}
	for _, path := range []string{"/api/v4/verify/rp_ffffffffffffffff", "/api/v4/verify/app_ffffffffffffffffffffffffffffffff",
		"/api/v4/verify/app_staging_ffffffffffffffffffffffffffffffff"} {
		wantError(t, e.post(path, body), http.StatusNotFound, codeNotFound, "")
	}
	// Percent-encoded but valid: the mux unescapes the path segment.
	wantSuccess(t, e.post("/api/v4/verify/%72p_0123456789abcdef", body))
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{invalid("responses[0].nullifier", "is required"), "verify: validation_error: responses[0].nullifier: responses[0].nullifier is required"},
		{notFound(), "verify: not_found: no relying party or app with this id"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	for _, o := range []Options{
		{Checker: &fakeChecker{}},
		{Store: newTestStore(t)},
		{Store: newTestStore(t), Checker: &fakeChecker{}, MaxResponses: -1},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

// A staging app (imported from the developer portal, app_staging_ id) is
// found by its id and checked in the staging environment; a disabled app
// is refused before any check.
func TestStagingAndDisabledApps(t *testing.T) {
	const stagingID = "app_staging_0123456789abcdef0123456789abcdef"
	const stagingRP = "rp_00000000000000aa"
	e := newEnv(t)
	e.store.addApp(record.App{ID: stagingID, RPID: stagingRP, Staging: true})
	body := newRequest(item("valid", nullifierA))
	for _, path := range []string{"/api/v4/verify/" + stagingID, "/api/v4/verify/" + stagingRP} {
		resp := wantSuccess(t, e.post(path, body.json(t)))
		if resp.Environment != "staging" {
			t.Errorf("%s: environment %q, want staging", path, resp.Environment)
		}
	}
	for _, c := range e.checker.seen() {
		if c.Environment != "staging" || c.AppID != stagingID {
			t.Errorf("claim checked as %s for %s, want staging for %s", c.Environment, c.AppID, stagingID)
		}
	}
	sandbox := body
	sandbox.Environment = "sandbox"
	if resp := wantSuccess(t, e.post("/api/v4/verify/"+stagingID, sandbox.json(t))); resp.Environment != "sandbox" {
		t.Errorf("sandbox echoed as %q", resp.Environment)
	}
	production := body
	production.Environment = "production"
	wantError(t, e.post("/api/v4/verify/"+stagingID, production.json(t)), http.StatusBadRequest, codeValidation, "environment")

	e.store.changeApp(testAppID, func(a *record.App) { a.Disabled = true })
	checks := len(e.checker.seen())
	wantError(t, e.post(rpPath, body.json(t)), http.StatusForbidden, codeAppDisabled, "")
	wantError(t, e.post(appPath, body.json(t)), http.StatusForbidden, codeAppDisabled, "")
	if len(e.checker.seen()) != checks {
		t.Error("a disabled app's proofs were checked")
	}
}

// New refuses a configuration missing a required option, rather than
// panicking on the first request.
func TestNewRefusesMissingOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"Store":        {Checker: noopChecker{}},
		"Checker":      {Store: newTestStore(t)},
		"MaxResponses": {Store: newTestStore(t), Checker: noopChecker{}, MaxResponses: -1},
	} {
		if h, err := New(o); err == nil || h != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, %v", name, h, err)
		}
	}
	if _, err := New(Options{Store: newTestStore(t), Checker: noopChecker{}}); err != nil {
		t.Errorf("the required options refused: %v", err)
	}
}

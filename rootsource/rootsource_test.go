package rootsource

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// fakeChain is a JSON-RPC endpoint holding one identity manager and one
// registry: it decodes each eth_call as a node would and answers from its
// state, or with the failure the test sets.
type fakeChain struct {
	t        *testing.T
	mu       sync.Mutex
	calls    int
	manager  [20]byte
	registry [20]byte
	latest   fr.Element
	// history: superseded roots → (timestamp, still valid)
	history map[fr.Element]bool
	valid4  map[fr.Element]bool
	fail    string // "", "http", "rpc", "garbage", "short", "bool2"
}

func (f *fakeChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	var req struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      int               `json:"id"`
		Method  string            `json:"method"`
		Params  []json.RawMessage `json:"params"`
	}
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&req) != nil ||
		req.JSONRPC != "2.0" || req.Method != "eth_call" || len(req.Params) != 2 || string(req.Params[1]) != `"latest"` {
		f.t.Errorf("malformed JSON-RPC request")
		http.Error(w, "bad", 400)
		return
	}
	var call struct{ To, Data string }
	json.Unmarshal(req.Params[0], &call)
	data, err := hex.DecodeString(strings.TrimPrefix(call.Data, "0x"))
	if err != nil || len(data) != 36 {
		f.t.Errorf("call data %q", call.Data)
		return
	}
	var root fr.Element
	root.SetBytes(data[4:])
	var result []byte
	switch {
	case call.To == "0x"+hex.EncodeToString(f.manager[:]) && [4]byte(data[:4]) == selectorQueryRoot:
		result = make([]byte, 96)
		valid, known := f.history[root]
		if root == f.latest {
			valid, known = true, true
		}
		if known {
			b := root.Bytes()
			copy(result, b[:])
			if root != f.latest {
				result[63] = 0x42 // a supersededTimestamp (low half of word 2)
			}
			if valid {
				result[95] = 1
			}
		}
	case call.To == "0x"+hex.EncodeToString(f.registry[:]) && [4]byte(data[:4]) == selectorIsValidRoot:
		result = make([]byte, 32)
		if f.valid4[root] {
			result[31] = 1
		}
	default:
		f.t.Errorf("call to %s selector %x", call.To, data[:4])
	}
	switch f.fail {
	case "http":
		http.Error(w, "down", http.StatusBadGateway)
		return
	case "rpc":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":3,"message":"execution reverted"}}`, req.ID)
		return
	case "garbage":
		fmt.Fprint(w, `<html>`)
		return
	case "short":
		result = result[:31]
	case "bool2":
		result[len(result)-1] = 2
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x%x"}`, req.ID, result)
}

func fe(n uint64) fr.Element { var e fr.Element; e.SetUint64(n); return e }

func setup(t *testing.T) (*fakeChain, *Source, *time.Time, *httptest.Server) {
	t.Helper()
	f := &fakeChain{t: t, latest: fe(100), history: map[fr.Element]bool{fe(99): true, fe(98): false}, valid4: map[fr.Element]bool{fe(7): true}}
	f.manager[19], f.registry[19] = 0x11, 0x22
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	now := time.Unix(1_800_000_000, 0)
	s, err := New(Options{RPC: map[string]string{"local": srv.URL}, Now: func() time.Time { return now },
		Contracts: []Contract{
			{Tree: "orb/production", Chain: "local", Kind: IdentityManager, Address: f.manager},
			{Tree: "world_id_4/production", Chain: "local", Kind: Registry, Address: f.registry},
			{Tree: "orb/staging", Chain: "nowhere", Kind: IdentityManager, Address: f.manager},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return f, s, &now, srv
}

// TestAnswers: the contracts' own validity — latest root, superseded and
// still valid, expired, unknown — for both kinds.
func TestAnswers(t *testing.T) {
	_, s, _, _ := setup(t)
	for _, tc := range []struct {
		tree  string
		root  uint64
		valid bool
	}{
		{"orb/production", 100, true}, {"orb/production", 99, true}, {"orb/production", 98, false}, {"orb/production", 5, false},
		{"world_id_4/production", 7, true}, {"world_id_4/production", 8, false},
	} {
		got, err := s.ValidRoot(context.Background(), tc.tree, fe(tc.root))
		if err != nil || got != tc.valid {
			t.Errorf("%s root %d: %v, %v; want %v", tc.tree, tc.root, got, err, tc.valid)
		}
	}
	if s.Has("orb/staging") || !s.Has("orb/production") {
		t.Error("a tree without an RPC URL must not be asked")
	}
	if _, err := s.ValidRoot(context.Background(), "device/production", fe(1)); err == nil {
		t.Error("unknown tree answered")
	}
}

// TestFailuresAreErrors: every way the endpoint can fail is an error,
// never "valid", and is not cached.
func TestFailuresAreErrors(t *testing.T) {
	f, s, _, srv := setup(t)
	var outcomes []string
	s.observe = func(call, chain, outcome string, _ time.Duration) {
		outcomes = append(outcomes, call+" "+chain+" "+outcome)
	}
	for _, mode := range []string{"http", "rpc", "garbage", "short", "bool2"} {
		f.mu.Lock()
		f.fail = mode
		f.mu.Unlock()
		for _, tree := range []string{"orb/production", "world_id_4/production"} {
			root := fe(100)
			if tree == "world_id_4/production" {
				root = fe(7)
			}
			if got, err := s.ValidRoot(context.Background(), tree, root); err == nil || got {
				t.Errorf("%s %s: %v, %v", mode, tree, got, err)
			}
		}
	}
	f.mu.Lock()
	f.fail = ""
	f.mu.Unlock()
	if got, err := s.ValidRoot(context.Background(), "orb/production", fe(100)); err != nil || !got {
		t.Fatalf("after recovery: %v %v", got, err)
	}
	if want := append(slices.Repeat([]string{"root local error"}, 10), "root local ok"); !slices.Equal(outcomes, want) {
		t.Errorf("observed %q, want %q", outcomes, want)
	}
	srv.Close()
	if got, err := s.ValidRoot(context.Background(), "orb/production", fe(99)); err == nil || got || strings.Contains(err.Error(), srv.URL) {
		t.Errorf("unreachable: %v, %v (the URL must not appear)", got, err)
	}
}

// TestCache: answers are reused until their TTL, valid and invalid ones
// with their own TTL, and the cache never outgrows its bound.
func TestCache(t *testing.T) {
	f, s, now, _ := setup(t)
	calls := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }
	ask := func(root uint64) {
		if _, err := s.ValidRoot(context.Background(), "orb/production", fe(root)); err != nil {
			t.Fatal(err)
		}
	}
	ask(100)
	ask(5)
	ask(100)
	ask(5)
	if calls() != 2 {
		t.Fatalf("%d calls, want 2 (cached)", calls())
	}
	*now = now.Add(6 * time.Second) // past the invalid TTL, within the valid one
	ask(100)
	ask(5)
	if calls() != 3 {
		t.Fatalf("%d calls, want 3", calls())
	}
	// A root that became valid is found once the negative answer expires.
	f.mu.Lock()
	f.history[fe(5)] = true
	f.mu.Unlock()
	*now = now.Add(31 * time.Second)
	if got, _ := s.ValidRoot(context.Background(), "orb/production", fe(5)); !got {
		t.Fatal("new root not found after the negative TTL")
	}
	s.cacheSize = 8
	for i := range 50 {
		ask(uint64(1000 + i))
		if len(s.cache) > 8 {
			t.Fatalf("cache holds %d entries, bound 8", len(s.cache))
		}
	}
}

func TestParseContract(t *testing.T) {
	c, err := ParseContract("device/production=ethereum:identity-manager:0x00000000000000000000000000000000000000aB")
	if err != nil || c.Tree != "device/production" || c.Chain != "ethereum" || c.Kind != IdentityManager || c.Address[19] != 0xab {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []string{"", "x", "t=c:identity-manager", "t=c:other:0x" + strings.Repeat("0", 40), "t=c:registry:0x" + strings.Repeat("0", 38),
		"t=c:registry:" + strings.Repeat("0", 40), "=c:registry:0x" + strings.Repeat("0", 40), "t=:registry:0x" + strings.Repeat("0", 40)} {
		if _, err := ParseContract(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if len(DefaultContracts()) != 8 {
		t.Fatal("defaults")
	}
	for _, k := range []Kind{IssuerRegistry, OPRFKeyRegistry} {
		if c, err := ParseContract("k/production=worldchain:" + string(k) + ":0x" + strings.Repeat("0", 40)); err != nil || c.Kind != k {
			t.Errorf("%s: %+v %v", k, c, err)
		}
	}
	if _, err := New(Options{RPC: map[string]string{"x": "ftp://a"}}); err == nil {
		t.Error("non-http URL accepted")
	}
}

// TestSelectors: the selectors the calls send. latestRoot() 0xd7b0fef1
// and queryRoot(uint256) 0x3f7c178d are quoted by integrations of World's
// identity manager, which checks the Keccak-256 derivation;
// isValidRoot(uint256) 0x2cdabbce is the first four bytes of
// Keccak-256("isValidRoot(uint256)"), computed once with
// golang.org/x/crypto/sha3's legacy Keccak, which the quoted two check.
// The key registries' selectors and revert errors are the first four
// bytes of Keccak-256 as computed by another implementation: bytes 1..4
// of idkit-core 4.3.0's hashSignal of the signature (hashToField is
// Keccak-256 shifted right one byte), run under Node (testdata/SOURCES.md).
func TestSelectors(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  [4]byte
		want string
	}{
		{"latestRoot()", selector("latestRoot()"), "d7b0fef1"},
		{"queryRoot(uint256)", selectorQueryRoot, "3f7c178d"},
		{"isValidRoot(uint256)", selectorIsValidRoot, "2cdabbce"},
		{"issuerSchemaIdToPubkey(uint64)", selectorIssuerPubkey, "94db8bd2"},
		{"getOprfPublicKey(uint160)", selectorOPRFPublicKey, "7488e8e7"},
		{"UnknownId(uint160)", selectorErrUnknownID, "fbf20062"},
		{"DeletedId(uint160)", selectorErrDeletedID, "1b02ded7"},
	} {
		if got := hex.EncodeToString(tc.got[:]); got != tc.want {
			t.Errorf("%s selector %s, want %s", tc.name, got, tc.want)
		}
	}
}

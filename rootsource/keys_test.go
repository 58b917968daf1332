package rootsource

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// keyChain is a JSON-RPC endpoint holding a credential schema issuer
// registry and an OPRF key registry: it decodes each eth_call as a node
// would (selector, one left-padded uint64/uint160 word) and answers from
// its state — an unknown issuer as (0, 0), an unknown or deleted OPRF key
// as the registry's revert — or with the failure the test sets.
type keyChain struct {
	t         *testing.T
	mu        sync.Mutex
	calls     int
	issuerReg [20]byte
	oprfReg   [20]byte
	issuers   map[uint64][2]string // hex words as the contract returns them
	oprf      map[uint64][2]string
	deleted   map[uint64]bool
	fail      string // "", "http", "rpc", "revert-other", "short", "long", "≥ r"
}

func (k *keyChain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls++
	var req struct {
		ID     int               `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Method != "eth_call" || len(req.Params) != 2 {
		k.t.Errorf("malformed JSON-RPC request")
		return
	}
	var call struct{ To, Data string }
	json.Unmarshal(req.Params[0], &call)
	data, err := hex.DecodeString(strings.TrimPrefix(call.Data, "0x"))
	if err != nil || len(data) != 36 || strings.Trim(hex.EncodeToString(data[4:28]), "0") != "" {
		k.t.Errorf("call data %q: want a selector and one word holding a uint64", call.Data)
		return
	}
	id := binary.BigEndian.Uint64(data[28:])
	revert := func(sel [4]byte) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":3,"message":"execution reverted","data":"0x%x%064x"}}`, req.ID, sel, id)
	}
	var key [2]string
	switch {
	case call.To == "0x"+hex.EncodeToString(k.issuerReg[:]) && [4]byte(data[:4]) == selectorIssuerPubkey:
		key = k.issuers[id] // unknown: zero words
	case call.To == "0x"+hex.EncodeToString(k.oprfReg[:]) && [4]byte(data[:4]) == selectorOPRFPublicKey:
		if k.deleted[id] {
			revert(selectorErrDeletedID)
			return
		}
		var ok bool
		if key, ok = k.oprf[id]; !ok {
			revert(selectorErrUnknownID)
			return
		}
	default:
		k.t.Errorf("call to %s selector %x", call.To, data[:4])
		return
	}
	result := word(key[0]) + word(key[1])
	switch k.fail {
	case "http":
		http.Error(w, "down", http.StatusBadGateway)
		return
	case "rpc":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"error":{"code":-32000,"message":"header not found"}}`, req.ID)
		return
	case "revert-other":
		revert(selector("NotReady()"))
		return
	case "short":
		result = result[:126]
	case "long":
		result += strings.Repeat("0", 64)
	case "≥ r":
		result = "30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001" + result[64:]
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":"0x%s"}`, req.ID, result)
}

func word(h string) string {
	h = strings.TrimPrefix(h, "0x")
	return strings.Repeat("0", 64-len(h)) + h
}

const (
	issuerX = "0x0f178f8128469f6be2f108a02b2a3f96d107d9466c4f95460ed7d4e8f10384b3"
	issuerY = "0x21b8a276d0b75460b075f4a4cc1961938e62f4964bcca87cffce8ada4d6e11d5"
	oprfX   = "0x24a3480be33ae5a83f68fbefe658e65053cbe99ee442c178859070a23372a4d4"
	oprfY   = "0x2fc70cc380d5bb9d8537a8fd82e98fb29eb837ff3943f5704ec3957f444ec6cd"
	rpID    = 0x0387df34f862cd4e
)

func keySetup(t *testing.T) (*keyChain, *Source, *time.Time) {
	t.Helper()
	k := &keyChain{t: t, issuers: map[uint64][2]string{1: {issuerX, issuerY}, 5: {"0x0", issuerY}},
		oprf: map[uint64][2]string{rpID: {oprfX, oprfY}}, deleted: map[uint64]bool{9: true}}
	k.issuerReg[19], k.oprfReg[19] = 0x33, 0x44
	srv := httptest.NewServer(k)
	t.Cleanup(srv.Close)
	now := time.Unix(1_800_000_000, 0)
	s, err := New(Options{RPC: map[string]string{"local": srv.URL}, Now: func() time.Time { return now },
		Contracts: []Contract{
			{Tree: "issuer_key/production", Chain: "local", Kind: IssuerRegistry, Address: k.issuerReg},
			{Tree: "oprf_key/production", Chain: "local", Kind: OPRFKeyRegistry, Address: k.oprfReg},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return k, s, &now
}

func hexFE(t *testing.T, s string) fr.Element {
	t.Helper()
	var e fr.Element
	b, err := hex.DecodeString(word(s))
	if err != nil || e.SetBytesCanonical(b) != nil {
		t.Fatalf("bad element %q", s)
	}
	return e
}

// TestPublicKeys: keys as WorldIDVerifier reads them — a registered key,
// an unregistered issuer (zero coordinates, also one zero coordinate), an
// unknown or deleted OPRF key id (the registry's reverts) — and a set
// that is not a key registry.
func TestPublicKeys(t *testing.T) {
	_, s, _ := keySetup(t)
	ctx := context.Background()
	for _, tc := range []struct {
		set   string
		id    uint64
		found bool
		x, y  string
	}{
		{"issuer_key/production", 1, true, issuerX, issuerY},
		{"issuer_key/production", 2, false, "0", "0"},
		{"issuer_key/production", 5, false, "0", "0"},
		{"oprf_key/production", rpID, true, oprfX, oprfY},
		{"oprf_key/production", 2, false, "0", "0"},
		{"oprf_key/production", 9, false, "0", "0"},
	} {
		x, y, found, err := s.PublicKey(ctx, tc.set, tc.id)
		if err != nil || found != tc.found || x != hexFE(t, tc.x) || y != hexFE(t, tc.y) {
			t.Errorf("%s %d: %v %v %v %v", tc.set, tc.id, x.String(), y.String(), found, err)
		}
	}
	if _, _, _, err := s.PublicKey(ctx, "issuer_key/staging", 1); err == nil {
		t.Error("a set without a contract answered")
	}
	if _, err := s.ValidRoot(ctx, "issuer_key/production", fe(1)); err == nil {
		t.Error("a key registry answered a root")
	}
}

// TestPublicKeyFailures: every way the endpoint can fail is an error,
// never a key, and is not cached; a revert other than UnknownId or
// DeletedId is a failure too.
func TestPublicKeyFailures(t *testing.T) {
	k, s, _ := keySetup(t)
	ctx := context.Background()
	for _, mode := range []string{"http", "rpc", "revert-other", "short", "long", "≥ r"} {
		k.mu.Lock()
		k.fail = mode
		k.mu.Unlock()
		for _, set := range []string{"issuer_key/production", "oprf_key/production"} {
			id := uint64(1)
			if set == "oprf_key/production" {
				id = rpID
			}
			if _, _, found, err := s.PublicKey(ctx, set, id); err == nil || found {
				t.Errorf("%s %s: %v %v", mode, set, found, err)
			}
		}
	}
	k.mu.Lock()
	k.fail = ""
	k.mu.Unlock()
	if _, _, found, err := s.PublicKey(ctx, "issuer_key/production", 1); err != nil || !found {
		t.Fatalf("after recovery: %v %v", found, err)
	}
}

// TestPublicKeyCache: keys are cached like roots — a found key for the
// valid TTL, a missing one for the invalid TTL.
func TestPublicKeyCache(t *testing.T) {
	k, s, now := keySetup(t)
	calls := func() int { k.mu.Lock(); defer k.mu.Unlock(); return k.calls }
	ask := func(id uint64) {
		if _, _, _, err := s.PublicKey(context.Background(), "issuer_key/production", id); err != nil {
			t.Fatal(err)
		}
	}
	ask(1)
	ask(2)
	ask(1)
	ask(2)
	if calls() != 2 {
		t.Fatalf("%d calls, want 2", calls())
	}
	*now = now.Add(6 * time.Second)
	ask(1)
	ask(2)
	if calls() != 3 {
		t.Fatalf("%d calls, want 3", calls())
	}
	k.mu.Lock()
	k.issuers[2] = [2]string{issuerY, issuerX}
	k.mu.Unlock()
	*now = now.Add(6 * time.Second)
	if _, _, found, _ := s.PublicKey(context.Background(), "issuer_key/production", 2); !found {
		t.Fatal("a key registered later is not found after the negative TTL")
	}
}

package rootsource

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"golang.org/x/crypto/sha3"
)

// Kind is the contract interface a tree's roots are checked with.
type Kind string

// Contract kinds (doc.go).
const (
	IdentityManager Kind = "identity-manager"  // World ID 3.0: queryRoot(uint256)
	Registry        Kind = "registry"          // World ID 4.0: isValidRoot(uint256)
	IssuerRegistry  Kind = "issuer-registry"   // World ID 4.0: issuerSchemaIdToPubkey(uint64)
	OPRFKeyRegistry Kind = "oprf-key-registry" // World ID 4.0: getOprfPublicKey(uint160)
)

// Contract is where the roots of one tree are checked.
type Contract struct {
	Tree    string // record tree name, e.g. "orb/production"
	Chain   string // the name of the JSON-RPC endpoint, e.g. "ethereum"
	Kind    Kind
	Address [20]byte
}

// DefaultContracts are World's deployments (doc.go).
func DefaultContracts() []Contract {
	return []Contract{
		mustContract("orb/production", "ethereum", IdentityManager, "0xf7134CE138832c1456F2a91D64621eE90c2bddEa"),
		mustContract("orb/staging", "sepolia", IdentityManager, "0xb2EaD588f14e69266d1b87936b75325181377076"),
		mustContract("world_id_4/production", "worldchain", Registry, "0x0000000000aE079eB8a274cD51c0f44a9E4d67d4"),
		mustContract("world_id_4/staging", "worldchain", Registry, "0x8556d07D75025f286fe757C7EeEceC40D54FA16D"),
		mustContract("issuer_key/production", "worldchain", IssuerRegistry, "0x941239840F4d9668da8be76b568e836b50685d2c"),
		mustContract("issuer_key/staging", "worldchain", IssuerRegistry, "0x9037125Ae10e9E89fDbe7001228289462EFA3eF3"),
		mustContract("oprf_key/production", "worldchain", OPRFKeyRegistry, "0x0D8b461799474207A3d223553d4d5e6609cb0c69"),
		mustContract("oprf_key/staging", "worldchain", OPRFKeyRegistry, "0xb2C02253ee7bFEDF50F5D015658857099980E91F"),
	}
}

func mustContract(tree, chain string, kind Kind, address string) Contract {
	c, err := ParseContract(tree + "=" + chain + ":" + string(kind) + ":" + address)
	if err != nil {
		panic(err)
	}
	return c
}

// ParseContract reads "tree=chain:kind:0xaddress" (the -roots-contract
// flag), kind identity-manager or registry for a tree of roots,
// issuer-registry or oprf-key-registry for a set of trust anchors.
func ParseContract(s string) (Contract, error) {
	var c Contract
	tree, rest, ok := strings.Cut(s, "=")
	parts := strings.Split(rest, ":")
	if !ok || tree == "" || len(parts) != 3 || parts[0] == "" {
		return c, fmt.Errorf("rootsource: %q is not tree=chain:kind:0xaddress", s)
	}
	c.Tree, c.Chain, c.Kind = tree, parts[0], Kind(parts[1])
	switch c.Kind {
	case IdentityManager, Registry, IssuerRegistry, OPRFKeyRegistry:
	default:
		return c, fmt.Errorf("rootsource: %q: kind must be %s, %s, %s or %s", s, IdentityManager, Registry, IssuerRegistry, OPRFKeyRegistry)
	}
	digits, ok := strings.CutPrefix(parts[2], "0x")
	b, err := hex.DecodeString(digits)
	if !ok || err != nil || len(b) != 20 {
		return c, fmt.Errorf("rootsource: %q: address must be 0x and 40 hex digits", s)
	}
	copy(c.Address[:], b)
	return c, nil
}

// Options configures a Source.
type Options struct {
	// RPC maps chain names to JSON-RPC URLs; a contract whose chain is
	// missing here is not used.
	RPC       map[string]string
	Contracts []Contract // later entries for a tree replace earlier ones
	HTTP      *http.Client
	Now       func() time.Time
	// CacheSize bounds the cached answers (default 4096).
	CacheSize            int
	ValidTTL, InvalidTTL time.Duration // defaults 30 s and 5 s
	// Observe, if set, is called after every question to a contract with
	// what it asked ("root" or "key"), the chain, its outcome ("ok", or
	// "error" when no usable answer came) and how long it took (by Now).
	// A cached answer asks nothing.
	Observe func(call, chain, outcome string, took time.Duration)
}

// Source checks roots against the configured contracts. It is safe for
// concurrent use.
type Source struct {
	http      *http.Client
	now       func() time.Time
	contracts map[string]endpoint // tree → where to ask
	validTTL  time.Duration
	invalid   time.Duration
	cacheSize int
	observe   func(call, chain, outcome string, took time.Duration)

	mu    sync.Mutex
	cache map[cacheKey]answer
}

type endpoint struct {
	url string
	Contract
}

// cacheKey is a root of a tree, or the id of a key in an anchor set.
type cacheKey struct {
	tree string
	root fr.Element
}

// answer is a cached answer: valid reports a valid root or a registered
// key, key holds the key's coordinates.
type answer struct {
	valid bool
	key   [2]fr.Element
	until time.Time
}

// New returns a source asking, for each tree, the last contract given for
// it whose chain has a URL.
func New(o Options) (*Source, error) {
	s := &Source{http: o.HTTP, now: o.Now, contracts: map[string]endpoint{}, validTTL: o.ValidTTL, invalid: o.InvalidTTL,
		cacheSize: o.CacheSize, cache: map[cacheKey]answer{}, observe: o.Observe}
	if s.observe == nil {
		s.observe = func(string, string, string, time.Duration) {}
	}
	if s.http == nil {
		s.http = &http.Client{Timeout: 5 * time.Second}
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.validTTL = cmpOr(s.validTTL, 30*time.Second)
	s.invalid = cmpOr(s.invalid, 5*time.Second)
	s.cacheSize = cmpOr(s.cacheSize, 4096)
	for chain, u := range o.RPC {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("rootsource: chain %s: %q is not an http(s) URL", chain, u)
		}
	}
	for _, c := range o.Contracts {
		if u, ok := o.RPC[c.Chain]; ok {
			s.contracts[c.Tree] = endpoint{u, c}
		} else {
			delete(s.contracts, c.Tree)
		}
	}
	return s, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Trees returns the trees the source asks about, for logs.
func (s *Source) Trees() map[string]string {
	out := map[string]string{}
	for tree, e := range s.contracts {
		out[tree] = e.Chain + ":" + string(e.Kind) + ":0x" + hex.EncodeToString(e.Address[:])
	}
	return out
}

// Has reports whether the source asks about tree.
func (s *Source) Has(tree string) bool {
	_, ok := s.contracts[tree]
	return ok
}

// ValidRoot reports whether the contract of tree holds root as valid now.
func (s *Source) ValidRoot(ctx context.Context, tree string, root fr.Element) (bool, error) {
	e, ok := s.contracts[tree]
	if !ok {
		return false, fmt.Errorf("rootsource: no contract for %s", tree)
	}
	if e.Kind != IdentityManager && e.Kind != Registry {
		return false, fmt.Errorf("rootsource: %s is a set of keys, not a tree of roots", tree)
	}
	a, err := s.cached(ctx, cacheKey{tree, root}, s.observed("root", e, func() (answer, error) {
		valid, err := s.call(ctx, e, root)
		return answer{valid: valid}, err
	}))
	return a.valid, err
}

// PublicKey reads the BabyJubJub public key registered under id in the
// anchor set (record.V4AnchorSet) as WorldIDVerifier reads it: an
// issuer-registry's issuerSchemaIdToPubkey(id), an oprf-key-registry's
// getOprfPublicKey(id) (the oprfKeyId is the rp_id). found is false when
// the contract holds none: a zero coordinate, which WorldIDVerifier takes
// for "unregistered", or the key registry's UnknownId or DeletedId revert.
func (s *Source) PublicKey(ctx context.Context, set string, id uint64) (x, y fr.Element, found bool, err error) {
	e, ok := s.contracts[set]
	if !ok || (e.Kind != IssuerRegistry && e.Kind != OPRFKeyRegistry) {
		return x, y, false, fmt.Errorf("rootsource: no key registry for %s", set)
	}
	a, err := s.cached(ctx, cacheKey{set, *new(fr.Element).SetUint64(id)}, s.observed("key", e, func() (answer, error) {
		return s.callKey(ctx, e, id)
	}))
	return a.key[0], a.key[1], a.valid, err
}

// cached answers key from the cache while fresh, else asks and caches
// the answer: ValidTTL for a valid root or a registered key, InvalidTTL
// otherwise. Errors are not cached.
func (s *Source) cached(ctx context.Context, key cacheKey, ask func() (answer, error)) (answer, error) {
	now := s.now()
	s.mu.Lock()
	a, hit := s.cache[key]
	s.mu.Unlock()
	if hit && now.Before(a.until) {
		return a, nil
	}
	a, err := ask()
	if err != nil {
		return answer{}, err
	}
	ttl := s.invalid
	if a.valid {
		ttl = s.validTTL
	}
	a.until = now.Add(ttl)
	s.store(key, a, now)
	return a, nil
}

// store adds an answer, first dropping expired ones and then, if the
// cache is still full, arbitrary ones: the bound holds whatever the load.
func (s *Source) store(key cacheKey, a answer, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= s.cacheSize {
		for k, v := range s.cache {
			if !now.Before(v.until) {
				delete(s.cache, k)
			}
		}
		for k := range s.cache {
			if len(s.cache) < s.cacheSize {
				break
			}
			delete(s.cache, k)
		}
	}
	s.cache[key] = a
}

// Function selectors: the first four bytes of Keccak-256 of the signature.
var (
	selectorQueryRoot     = selector("queryRoot(uint256)")
	selectorIsValidRoot   = selector("isValidRoot(uint256)")
	selectorIssuerPubkey  = selector("issuerSchemaIdToPubkey(uint64)")
	selectorOPRFPublicKey = selector("getOprfPublicKey(uint160)")
	selectorErrUnknownID  = selector("UnknownId(uint160)")
	selectorErrDeletedID  = selector("DeletedId(uint160)")
	errNotRegistered      = errors.New("rootsource: the key registry reverted: no such key")
)

func selector(signature string) [4]byte {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(signature))
	var s [4]byte
	copy(s[:], h.Sum(nil))
	return s
}

// call sends the eth_call for the contract's kind and decodes the answer.
func (s *Source) call(ctx context.Context, e endpoint, root fr.Element) (bool, error) {
	sel := selectorIsValidRoot
	if e.Kind == IdentityManager {
		sel = selectorQueryRoot
	}
	arg := root.Bytes()
	data := append(sel[:], arg[:]...)
	out, err := s.ethCall(ctx, e.url, e.Address, data)
	if err != nil {
		return false, fmt.Errorf("rootsource: %s on %s: %w", e.Tree, e.Chain, err)
	}
	if e.Kind == Registry {
		if len(out) != 32 {
			return false, fmt.Errorf("rootsource: %s: isValidRoot returned %d bytes, want 32", e.Tree, len(out))
		}
		return abiBool(out)
	}
	// queryRoot: (uint256 root, uint128 supersededTimestamp, bool isValid).
	if len(out) != 96 {
		return false, fmt.Errorf("rootsource: %s: queryRoot returned %d bytes, want 96", e.Tree, len(out))
	}
	if !bytes.Equal(out[32:48], make([]byte, 16)) {
		return false, fmt.Errorf("rootsource: %s: queryRoot timestamp is not a uint128", e.Tree)
	}
	valid, err := abiBool(out[64:96])
	if err != nil {
		return false, err
	}
	return valid && bytes.Equal(out[:32], arg[:]), nil
}

// callKey sends the key registry's eth_call for id and decodes the
// answer, a static (uint256 x, uint256 y) struct: 64 bytes, both below
// r. Zero coordinates, or the OPRF key registry's revert naming an
// unknown or deleted id, mean no key.
func (s *Source) callKey(ctx context.Context, e endpoint, id uint64) (answer, error) {
	sel := selectorIssuerPubkey
	if e.Kind == OPRFKeyRegistry {
		sel = selectorOPRFPublicKey
	}
	var arg [32]byte
	binary.BigEndian.PutUint64(arg[24:], id) // uint64 and uint160 arguments are left-padded words
	out, err := s.ethCall(ctx, e.url, e.Address, append(sel[:], arg[:]...))
	if errors.Is(err, errNotRegistered) && e.Kind == OPRFKeyRegistry {
		return answer{}, nil
	}
	if err != nil {
		return answer{}, fmt.Errorf("rootsource: %s on %s: %w", e.Tree, e.Chain, err)
	}
	if len(out) != 64 {
		return answer{}, fmt.Errorf("rootsource: %s: the key registry returned %d bytes, want 64", e.Tree, len(out))
	}
	var a answer
	for i := range a.key {
		if a.key[i].SetBytesCanonical(out[32*i:32*i+32]) != nil {
			return answer{}, fmt.Errorf("rootsource: %s: a key coordinate is not below the BN254 scalar field modulus", e.Tree)
		}
	}
	a.valid = !a.key[0].IsZero() && !a.key[1].IsZero()
	if !a.valid {
		a.key = [2]fr.Element{}
	}
	return a, nil
}

// observed runs ask, one call to e's contract, and reports it to
// Options.Observe: an error, including an answer that does not decode,
// is outcome "error".
func (s *Source) observed(call string, e endpoint, ask func() (answer, error)) func() (answer, error) {
	return func() (answer, error) {
		start := s.now()
		a, err := ask()
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		s.observe(call, e.Chain, outcome, s.now().Sub(start))
		return a, err
	}
}

// abiBool decodes an ABI bool word: 0 or 1, nothing else.
func abiBool(w []byte) (bool, error) {
	if !bytes.Equal(w[:31], make([]byte, 31)) || w[31] > 1 {
		return false, errors.New("rootsource: malformed ABI bool")
	}
	return w[31] == 1, nil
}

// maxAnswer bounds a JSON-RPC answer; a queryRoot result is under 300 bytes.
const maxAnswer = 64 << 10

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type callParams struct {
	To   string `json:"to"`
	Data string `json:"data"`
}

type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *string         `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    string `json:"data"` // a revert's data, 0x-hex (geth, reth: code 3)
	} `json:"error"`
}

// ethCall runs eth_call(to, data) at the latest block and returns the
// decoded result bytes.
func (s *Source) ethCall(ctx context.Context, url string, to [20]byte, data []byte) ([]byte, error) {
	body, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: 1, Method: "eth_call", Params: []any{
		callParams{To: "0x" + hex.EncodeToString(to[:]), Data: "0x" + hex.EncodeToString(data)}, "latest"}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, errors.New("endpoint unreachable") // the URL may hold an API key: never echo it
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("endpoint answered HTTP %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil || len(raw) > maxAnswer {
		return nil, errors.New("endpoint answer unreadable or too large")
	}
	var r rpcResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, errors.New("endpoint answer is not JSON-RPC")
	}
	switch {
	case r.Error != nil && isNotRegistered(r.Error.Data):
		return nil, errNotRegistered
	case r.Error != nil:
		return nil, fmt.Errorf("JSON-RPC error %d: %.200s", r.Error.Code, r.Error.Message)
	case string(r.ID) != "1" || r.Result == nil:
		return nil, errors.New("endpoint answer has no result for this call")
	}
	digits, ok := strings.CutPrefix(*r.Result, "0x")
	out, err := hex.DecodeString(digits)
	if !ok || err != nil {
		return nil, errors.New("eth_call result is not 0x-hex")
	}
	return out, nil
}

// isNotRegistered reports whether a revert's data is OprfKeyRegistry's
// UnknownId(uint160) or DeletedId(uint160): the selector and one word.
func isNotRegistered(data string) bool {
	digits, ok := strings.CutPrefix(data, "0x")
	b, err := hex.DecodeString(digits)
	if !ok || err != nil || len(b) != 4+32 {
		return false
	}
	sel := [4]byte(b[:4])
	return sel == selectorErrUnknownID || sel == selectorErrDeletedID
}

package fakechain

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Selectors of the calls answered, and of the revert for an unknown OPRF
// key id: package rootsource checks each against a second Keccak-256
// implementation (its TestSelectors).
const (
	selIsValidRoot   = "2cdabbce" // isValidRoot(uint256)
	selIssuerPubkey  = "94db8bd2" // issuerSchemaIdToPubkey(uint64)
	selOPRFPublicKey = "7488e8e7" // getOprfPublicKey(uint160)
	selUnknownID     = "fbf20062" // UnknownId(uint160)
)

// Chain holds the contracts' state. It is safe for concurrent use.
type Chain struct {
	mu      sync.Mutex
	roots   map[fr.Element]bool
	issuers map[uint64][2]fr.Element
	oprf    map[uint64][2]fr.Element
	down    bool
	calls   map[string]int // selector → calls
}

// New returns a chain without roots or keys.
func New() *Chain {
	return &Chain{roots: map[fr.Element]bool{}, issuers: map[uint64][2]fr.Element{}, oprf: map[uint64][2]fr.Element{}, calls: map[string]int{}}
}

// AddRoot makes root valid in the registry.
func (c *Chain) AddRoot(root fr.Element) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roots[root] = true
}

// SetIssuerKey registers the issuer key of an issuer_schema_id.
func (c *Chain) SetIssuerKey(schemaID uint64, x, y fr.Element) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.issuers[schemaID] = [2]fr.Element{x, y}
}

// SetOPRFKey registers the OPRF public key of an oprfKeyId (an rp_id).
func (c *Chain) SetOPRFKey(id uint64, x, y fr.Element) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.oprf[id] = [2]fr.Element{x, y}
}

// SetDown makes every call fail with HTTP 503 while down is true.
func (c *Chain) SetDown(down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down = down
}

// Calls returns how many calls of each kind were answered:
// "isValidRoot", "issuerSchemaIdToPubkey", "getOprfPublicKey".
func (c *Chain) Calls() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

func (c *Chain) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var req struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	var call struct{ Data string }
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.Method != "eth_call" || len(req.Params) != 2 || json.Unmarshal(req.Params[0], &call) != nil {
		http.Error(w, "not an eth_call", http.StatusBadRequest)
		return
	}
	data, err := hex.DecodeString(strings.TrimPrefix(call.Data, "0x"))
	if err != nil || len(data) != 36 {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad call data"}}`, req.ID)
		return
	}
	sel, arg := hex.EncodeToString(data[:4]), data[4:]
	var result []byte
	switch sel {
	case selIsValidRoot:
		c.calls["isValidRoot"]++
		var root fr.Element
		result = make([]byte, 32)
		if root.SetBytesCanonical(arg) == nil && c.roots[root] {
			result[31] = 1
		}
	case selIssuerPubkey:
		c.calls["issuerSchemaIdToPubkey"]++
		result = words(c.issuers[binary.BigEndian.Uint64(arg[24:])]) // unknown: (0, 0)
	case selOPRFPublicKey:
		c.calls["getOprfPublicKey"]++
		key, ok := c.oprf[binary.BigEndian.Uint64(arg[24:])]
		if !ok {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":3,"message":"execution reverted","data":"0x%s%x"}}`, req.ID, selUnknownID, arg)
			return
		}
		result = words(key)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":3,"message":"execution reverted"}}`, req.ID)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"0x%x"}`, req.ID, result)
}

// words ABI-encodes a point as the static (uint256 x, uint256 y) struct.
func words(p [2]fr.Element) []byte {
	x, y := p[0].Bytes(), p[1].Bytes()
	return append(x[:], y[:]...)
}

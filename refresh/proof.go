package refresh

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/leaf/strictjson"
	"worldid/record"
	"worldid/semaphore"
)

// treeDepth is the depth of the one-leaf tree the refresh proof is made
// for: World ID's depth (doc/crypto.md §g "One-leaf root").
const treeDepth = 30

// maxProofHeader bounds the x-zkp-proof header (an ABI proof in its JSON
// is about 1.2 KB once base64-encoded).
const maxProofHeader = 8 << 10

// proofMembers is the member set of the x-zkp-proof JSON; pcp_digest is
// optional, every other member required.
var proofMembers = [...]string{"id_commitment", "sub", "timestamp", "merkle_root", "nullifier_hash", "proof", "pcp_digest"}

// zkpProof is a decoded x-zkp-proof header (record.RefreshProof).
type zkpProof struct {
	idComm, sub     fr.Element
	subID           string // canonical 0x + 64 lowercase hex
	timestamp       int64
	root, nullifier fr.Element
	proof           *semaphore.Proof
	pcpDigest       string // lowercase hex SHA-256 of hashes.json, or ""
}

func invalidProof(msg string) *Error {
	return newError(http.StatusUnauthorized, CodeInvalidProof, msg)
}

// decodeZKPProof decodes the header: standard padded base64 of one flat
// JSON object with the members of record.RefreshProof, no duplicates;
// field elements "0x" + 64 hex digits below p; timestamp a canonical
// decimal integer; proof any encoding of doc/crypto.md §g; pcp_digest, when
// present, 64 lowercase hex digits.
func decodeZKPProof(header string) (*zkpProof, *Error) {
	if header == "" {
		return nil, invalidProof("the x-zkp-proof header is required")
	}
	if len(header) > maxProofHeader {
		return nil, invalidProof("x-zkp-proof is too long")
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(header)
	if err != nil {
		return nil, invalidProof("x-zkp-proof is not standard padded base64")
	}
	obj, err := readFlatObject(raw)
	if err != nil {
		return nil, invalidProof("x-zkp-proof JSON: " + err.Error())
	}
	for name := range obj {
		if !slices.Contains(proofMembers[:], name) {
			return nil, invalidProof("x-zkp-proof has unknown member " + name)
		}
	}
	var z zkpProof
	for _, m := range []struct {
		name string
		dst  *fr.Element
	}{{"id_commitment", &z.idComm}, {"sub", &z.sub}, {"merkle_root", &z.root}, {"nullifier_hash", &z.nullifier}} {
		s, _ := obj[m.name].Unquote()
		if *m.dst, err = field.ParseStrict(s); err != nil {
			return nil, invalidProof("x-zkp-proof " + m.name + ": " + err.Error())
		}
	}
	ts := obj["timestamp"]
	if ts.Kind() != strictjson.Number || !isCanonicalDecimal(string(ts.Bytes())) {
		return nil, invalidProof("x-zkp-proof timestamp is not a non-negative integer")
	}
	z.timestamp, _ = strconv.ParseInt(string(ts.Bytes()), 10, 64)
	s, _ := obj["proof"].Unquote()
	if z.proof, err = semaphore.ParseProof(s); err != nil {
		return nil, invalidProof("x-zkp-proof proof: " + err.Error())
	}
	if d, present := obj["pcp_digest"]; present {
		if z.pcpDigest, _ = d.Unquote(); !isLowerHex(z.pcpDigest, 2*sha256.Size) {
			return nil, invalidProof("x-zkp-proof pcp_digest is not 64 lowercase hex digits")
		}
	}
	z.subID = field.Format(&z.sub)
	return &z, nil
}

// proofCheck is the statement a refresh proof must prove and the time it
// is checked at.
type proofCheck struct {
	vk           *semaphore.VerifyingKey
	extNullifier fr.Element
	window       time.Duration
	now          time.Time
	roots        *rootCache
}

// verify checks z before the body is read (doc/design.md §7): same
// identity commitment as the query, timestamp within ±window of now, root
// the one-leaf root of idComm, and the Groth16 proof for the public inputs
// [root, nullifier_hash, hashToField(signal), external nullifier], the
// signal built from the header's sub and pcp_digest; matchForm then ties
// those to the body. It returns the key under which the proof is
// remembered against replay.
func (pc *proofCheck) verify(z *zkpProof, env *envelope) (string, *Error) {
	if z.idComm != env.idComm {
		return "", invalidProof("x-zkp-proof is for another identity commitment")
	}
	if d := pc.now.Sub(time.Unix(z.timestamp, 0)).Abs(); d > pc.window {
		return "", invalidProof("x-zkp-proof timestamp is not within " + pc.window.String() + " of the server time")
	}
	root, err := pc.roots.get(env.idComm)
	if err != nil || z.root != root {
		return "", invalidProof("x-zkp-proof merkle_root is not the one-leaf root of idComm")
	}
	signal := record.RefreshSignal(z.subID, z.timestamp, z.pcpDigest)
	in := semaphore.PublicInputs{
		Root:              root,
		NullifierHash:     z.nullifier,
		SignalHash:        semaphore.HashToField([]byte(signal)),
		ExternalNullifier: pc.extNullifier,
	}
	if !semaphore.Verify(pc.vk, z.proof, in) {
		return "", invalidProof("x-zkp-proof does not verify")
	}
	return replayKey(&in), nil
}

// matchForm checks that the body is the one the verified proof signs:
// the same sub, and hashes.json exactly when the header names its digest.
func (z *zkpProof) matchForm(f *form) *Error {
	if z.sub != f.sub {
		return invalidProof("x-zkp-proof is for another sub")
	}
	if z.pcpDigest != f.pcpDigestHex() {
		return invalidProof("x-zkp-proof pcp_digest is not the SHA-256 of the uploaded hashes.json")
	}
	return nil
}

// oneLeafRoot is the root of the depth-30 tree whose only non-zero leaf is
// the commitment, at index 0 (doc/crypto.md §g "One-leaf root").
func oneLeafRoot(commitment fr.Element) (fr.Element, error) {
	tree, err := semaphore.BuildTree(treeDepth, []fr.Element{commitment})
	if err != nil {
		return fr.Element{}, err
	}
	return tree.Root(), nil
}

// rootCache memoizes one-leaf roots: their 30 Poseidon hashes cost about
// as much as the Groth16 check. It holds at most max entries and evicts an
// arbitrary one when full.
type rootCache struct {
	mu    sync.Mutex
	max   int
	roots map[fr.Element]fr.Element
}

func newRootCache(max int) *rootCache {
	return &rootCache{max: max, roots: map[fr.Element]fr.Element{}}
}

func (c *rootCache) get(commitment fr.Element) (fr.Element, error) {
	c.mu.Lock()
	root, ok := c.roots[commitment]
	c.mu.Unlock()
	if ok {
		return root, nil
	}
	root, err := oneLeafRoot(commitment)
	if err != nil {
		return fr.Element{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.roots) >= c.max {
		for k := range c.roots {
			delete(c.roots, k)
			break
		}
	}
	c.roots[commitment] = root
	return root, nil
}

// replayKey identifies a proven statement: the nullifier hash (one per
// identity) and the signal hash (sub, timestamp, PCP). Groth16 proofs can
// be re-randomized, so the proof bytes themselves would not do.
func replayKey(in *semaphore.PublicInputs) string {
	n, s := in.NullifierHash.Bytes(), in.SignalHash.Bytes()
	sum := sha256.Sum256(append(n[:], s[:]...))
	return hex.EncodeToString(sum[:])
}

// pcpDigestHex is the lowercase hex SHA-256 of hashes.json when the
// request carries one, else "": the optional last part of the signal.
func (f *form) pcpDigestHex() string {
	if _, ok := f.pcp[partHashesJSON]; !ok {
		return ""
	}
	d := f.pcp.digest()
	return hex.EncodeToString(d[:])
}

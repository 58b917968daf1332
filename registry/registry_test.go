package registry

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/vectors"
	"worldid/record"
	"worldid/semaphore"
)

// memStore is an in-memory Store; the real backends are tested by
// store/storetest.
type memStore struct {
	mu     sync.Mutex
	leaves map[string][]record.Leaf
	roots  []record.ExternalRoot
}

func newMemStore() *memStore { return &memStore{leaves: map[string][]record.Leaf{}} }

func (m *memStore) AppendLeaf(_ context.Context, tree, c string, at time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.leaves[tree] {
		if l.Commitment == c {
			return 0, record.ErrExists
		}
	}
	i := len(m.leaves[tree])
	m.leaves[tree] = append(m.leaves[tree], record.Leaf{Index: i, Commitment: c, At: at})
	return i, nil
}

func (m *memStore) Leaves(_ context.Context, tree string, from int) ([]record.Leaf, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record.Leaf(nil), m.leaves[tree][min(from, len(m.leaves[tree])):]...), nil
}

func (m *memStore) AddExternalRoot(_ context.Context, r record.ExternalRoot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roots = append(m.roots, r)
	return nil
}

func (m *memStore) ExternalRoots(context.Context) ([]record.ExternalRoot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]record.ExternalRoot(nil), m.roots...), nil
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func openTest(t *testing.T, st Store, key *semaphore.VerifyingKey, c *clock, batching bool) *Registry {
	t.Helper()
	o := Options{Store: st, LocalKey: key, Now: c.now}
	if batching {
		o.Rand = rand.Reader
	}
	r, err := Open(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func mustKey(t *testing.T, depth int) *semaphore.VerifyingKey {
	k, err := semaphore.PublishedKey(depth)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func hex32(t *testing.T, s string) [32]byte {
	b, err := field.ParseVerifyHex(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return b
}

type semaphoreVector struct {
	Name              string   `json:"name"`
	ProofPacked       []string `json:"proof_packed"`
	Depth             int      `json:"depth"`
	Root              string   `json:"root"`
	NullifierHash     string   `json:"nullifier_hash"`
	SignalHash        string   `json:"signal_hash"`
	ExternalNullifier string   `json:"external_nullifier"`
	ExpectValid       *bool    `json:"expect_valid"`
}

// TestVectorsThroughExternalRoots checks every vector the way the verify
// endpoint does: its root added as an external root of the orb/staging tree
// with its depth, then the full check.
func TestVectorsThroughExternalRoots(t *testing.T) {
	var file struct{ Vectors []semaphoreVector }
	vectors.Load(t, "semaphore_vectors.json", &file)
	count := vectors.NewCounter(t, "semaphore_vectors.json")
	for _, batching := range []bool{false, true} {
		for _, v := range file.Vectors {
			if v.ExpectValid == nil {
				t.Fatalf("%s: expect_valid missing", v.Name)
			}
			t.Run(fmt.Sprintf("batching=%v/%s", batching, v.Name), func(t *testing.T) {
				c := &clock{time.Unix(1_800_000_000, 0)}
				r := openTest(t, newMemStore(), mustKey(t, 16), c, batching)
				rootBytes := hex32(t, v.Root)
				var root fr.Element
				root.SetBytes(rootBytes[:])
				if err := r.AddExternalRoot(t.Context(), "orb", "staging", root, v.Depth, c.t); err != nil {
					t.Fatal(err)
				}
				claim := record.Claim{Identifier: "orb", Environment: "staging",
					MerkleRoot: hex32(t, v.Root), NullifierHash: hex32(t, v.NullifierHash), SignalHash: hex32(t, v.SignalHash),
					Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
				err := r.check(claim, hex32(t, v.ExternalNullifier))
				if (err == nil) != *v.ExpectValid {
					t.Fatalf("check = %v, expect_valid %v", err, *v.ExpectValid)
				}
				count.Inc()
			})
		}
	}
}

func trim0x(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		w = strings.TrimPrefix(w, "0x")
		out[i] = strings.Repeat("0", 64-len(w)) + w
	}
	return out
}

// TestStagingProofAppID derives the external nullifier from the app id the
// real staging proof was made for (its vector notes name it).
func TestStagingProofAppID(t *testing.T) {
	var file struct{ Vectors []semaphoreVector }
	vectors.Load(t, "semaphore_vectors.json", &file)
	const appID = "app_staging_e396fd19c804e62f657767ccaa78885c_app_review"
	ext := semaphore.ExternalNullifier(appID, "")
	found := false
	for _, v := range file.Vectors {
		if v.Depth != 30 || v.ExpectValid == nil || !*v.ExpectValid || hex32(t, v.ExternalNullifier) != ext.Bytes() {
			continue
		}
		found = true
		c := &clock{time.Unix(1_800_000_000, 0)}
		r := openTest(t, newMemStore(), mustKey(t, 16), c, true)
		rootBytes := hex32(t, v.Root)
		var root fr.Element
		root.SetBytes(rootBytes[:])
		if err := r.AddExternalRoot(t.Context(), "orb", "staging", root, 30, c.t); err != nil {
			t.Fatal(err)
		}
		claim := record.Claim{Identifier: "orb", Environment: "staging", AppID: appID,
			MerkleRoot: hex32(t, v.Root), NullifierHash: hex32(t, v.NullifierHash), SignalHash: hex32(t, v.SignalHash),
			Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
		if err := r.CheckClaim(t.Context(), claim); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		claim.AppID += "x"
		if code := codeOf(r.CheckClaim(t.Context(), claim)); code != record.CodeInvalidProof {
			t.Fatalf("other app: code %q", code)
		}
		claim.AppID = appID
		claim.Environment = "production"
		if code := codeOf(r.CheckClaim(t.Context(), claim)); code != record.CodeInvalidMerkleRoot {
			t.Fatalf("other environment: code %q", code)
		}
	}
	if !found {
		t.Fatal("no valid depth-30 vector for the staging app id")
	}
}

func codeOf(err error) string {
	var pe *record.ProofError
	if errors.As(err, &pe) {
		return pe.Code
	}
	if err == nil {
		return ""
	}
	return "other: " + err.Error()
}

func TestRootValidity(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := openTest(t, newMemStore(), mustKey(t, 16), c, false)
	var a, b fr.Element
	a.SetUint64(1)
	b.SetUint64(2)
	tr, _ := r.tree("device", "production")
	if err := r.AddExternalRoot(t.Context(), "device", "production", a, 30, c.t); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(2 * time.Hour)
	if err := r.AddExternalRoot(t.Context(), "device", "production", b, 30, c.t); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(30 * 24 * time.Hour)
	if _, err := r.keyFor(tr, b, time.Hour); err != nil {
		t.Errorf("current root rejected: %v", err)
	}
	if code := codeOf(func() error { _, err := r.keyFor(tr, a, 8*24*time.Hour); return err }()); code != record.CodeRootTooOld {
		t.Errorf("old root: %q", code)
	}
	var unknown fr.Element
	unknown.SetUint64(3)
	if code := codeOf(func() error { _, err := r.keyFor(tr, unknown, time.Hour); return err }()); code != record.CodeInvalidMerkleRoot {
		t.Errorf("unknown root: %q", code)
	}
}

func TestBadProofCodes(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := openTest(t, newMemStore(), mustKey(t, 16), c, false)
	base := record.Claim{Identifier: "orb", Environment: "production"}
	for proof, want := range map[string]string{
		"":                                    record.CodeInvalidFormat,
		"0x1234":                              record.CodeInvalidFormat,
		"0x" + strings.Repeat("0", 511) + "1": record.CodeInvalidProof, // not on the curve
	} {
		claim := base
		claim.Proof = proof
		if code := codeOf(r.CheckClaim(t.Context(), claim)); code != want {
			t.Errorf("proof %.20q: code %q, want %q", proof, code, want)
		}
	}
	claim := base
	claim.Identifier = "passport"
	if code := codeOf(r.CheckClaim(t.Context(), claim)); code != record.CodeInvalidMerkleRoot {
		t.Errorf("unknown identifier: %q", code)
	}
}

var (
	localKeyOnce sync.Once
	localKey     *semaphore.ProvingKey
	localKeyErr  error
)

func sharedProvingKey(t *testing.T) *semaphore.ProvingKey {
	localKeyOnce.Do(func() { localKey, _, localKeyErr = semaphore.Setup(TreeDepth) })
	if localKeyErr != nil {
		t.Fatal(localKeyErr)
	}
	return localKey
}

// TestLocalIdentityRoundTrip adds identities, survives a reload from the
// store, proves with the local key from an inclusion proof, and checks the
// claim with and without batching.
func TestLocalIdentityRoundTrip(t *testing.T) {
	pk := sharedProvingKey(t)
	st := newMemStore()
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := openTest(t, st, pk.VerifyingKey(), c, false)
	var ids []semaphore.Identity
	for range 3 {
		id, err := semaphore.NewIdentity(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		c.t = c.t.Add(time.Minute)
		if _, _, err := r.AddIdentity(t.Context(), "orb", "production", id.Commitment()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.AddIdentity(t.Context(), "orb", "production", ids[0].Commitment()); !errors.Is(err, record.ErrExists) {
		t.Fatalf("duplicate commitment: %v", err)
	}
	for _, batching := range []bool{false, true} {
		r := openTest(t, st, pk.VerifyingKey(), c, batching) // rebuilt from the store
		path, err := r.InclusionProof("orb", "production", ids[1].Commitment())
		if err != nil {
			t.Fatal(err)
		}
		signal := semaphore.HashToField([]byte("hello"))
		ext := semaphore.ExternalNullifier("app_test", "act")
		proof, _, err := semaphore.Prove(pk, ids[1], path, signal, ext)
		if err != nil {
			t.Fatal(err)
		}
		root := path.Root()
		nh := ids[1].NullifierHash(ext)
		claim := record.Claim{Identifier: "orb", Environment: "production", AppID: "app_test", Action: "act",
			MerkleRoot: root.Bytes(), NullifierHash: nh.Bytes(), SignalHash: signal.Bytes(), Proof: proof.ABIHex()}
		if err := r.CheckClaim(t.Context(), claim); err != nil {
			t.Fatalf("batching=%v: %v", batching, err)
		}
		wrong := claim
		wrong.Action = "other"
		if code := codeOf(r.CheckClaim(t.Context(), wrong)); code != record.CodeInvalidProof {
			t.Fatalf("other action: %q", code)
		}
		wrong = claim
		wrong.Identifier = "device"
		if code := codeOf(r.CheckClaim(t.Context(), wrong)); code != record.CodeInvalidMerkleRoot {
			t.Fatalf("other tree: %q", code)
		}
	}
}

// TestReplicasFollowEachOther: two registries on one store, as two
// replicas on one PostgreSQL; B sees A's identity and root after Follow
// ticks, and B's own append lands after A's in index order.
func TestReplicasFollowEachOther(t *testing.T) {
	st := newMemStore()
	c := &clock{time.Unix(1_800_000_000, 0)}
	key := mustKey(t, 16)
	a, b := openTest(t, st, key, c, false), openTest(t, st, key, c, false)
	var x, y, root fr.Element
	x.SetUint64(11)
	y.SetUint64(12)
	root.SetUint64(13)
	if _, _, err := a.AddIdentity(t.Context(), "orb", "production", x); err != nil {
		t.Fatal(err)
	}
	if err := a.AddExternalRoot(t.Context(), "device", "staging", root, 30, c.t); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); b.Follow(ctx, time.Millisecond, func(err error) { t.Error(err) }) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := b.InclusionProof("orb", "production", x)
		tr, _ := b.tree("device", "staging")
		_, rootErr := b.keyFor(tr, root, time.Hour)
		if err == nil && rootErr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B never caught up: %v / %v", err, rootErr)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	index, _, err := b.AddIdentity(t.Context(), "orb", "production", y)
	if err != nil || index != 1 {
		t.Fatalf("B's append: index %d, %v", index, err)
	}
	if err := a.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ra, rb := a.trees["orb/production"].merkle.Root(), b.trees["orb/production"].merkle.Root(); ra != rb {
		t.Fatalf("replicas disagree on the root after catching up")
	}
}

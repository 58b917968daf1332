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
	"worldid/semaphore/prover"
	"worldid/store/jsontest"
)

// leafCount is the number of leaves st holds in every tree.
func leafCount(t *testing.T, st Store) int {
	t.Helper()
	n := 0
	for _, id := range record.Identifiers() {
		for _, env := range record.Environments() {
			leaves, err := st.Leaves(t.Context(), record.CredentialType(id)+"/"+env, 0)
			if err != nil {
				t.Fatal(err)
			}
			n += len(leaves)
		}
	}
	return n
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

// validVector is the first valid proof of semaphore_vectors.json at depth
// (any depth for 0); the test is skipped when the file has none.
func validVector(t *testing.T, depth int) semaphoreVector {
	var file struct{ Vectors []semaphoreVector }
	vectors.Load(t, "semaphore_vectors.json", &file)
	for _, v := range file.Vectors {
		if v.ExpectValid != nil && *v.ExpectValid && (depth == 0 || v.Depth == depth) {
			return v
		}
	}
	t.Skipf("semaphore_vectors.json has no valid proof at depth %d", depth)
	return semaphoreVector{}
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
				r := openTest(t, jsontest.Open(t), mustKey(t, 16), c, batching)
				rootBytes := hex32(t, v.Root)
				var root fr.Element
				root.SetBytes(rootBytes[:])
				if err := r.AddExternalRoot(t.Context(), "orb", "staging", root, v.Depth, c.t); err != nil {
					t.Fatal(err)
				}
				claim := record.Claim{Identifier: "orb", Environment: "staging",
					MerkleRoot: hex32(t, v.Root), NullifierHash: hex32(t, v.NullifierHash), SignalHash: hex32(t, v.SignalHash),
					Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
				err := r.check(t.Context(), claim, hex32(t, v.ExternalNullifier))
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
	n := vectors.NewCounter(t, "semaphore_vectors.json") // valid depth-30 proofs for this staging app id
	for _, v := range file.Vectors {
		if v.Depth != 30 || v.ExpectValid == nil || !*v.ExpectValid || hex32(t, v.ExternalNullifier) != ext.Bytes() {
			continue
		}
		n.Inc()
		c := &clock{time.Unix(1_800_000_000, 0)}
		r := openTest(t, jsontest.Open(t), mustKey(t, 16), c, true)
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
	r := openTest(t, jsontest.Open(t), mustKey(t, 16), c, false)
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
	r := openTest(t, jsontest.Open(t), mustKey(t, 16), c, false)
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
	localKey     *prover.ProvingKey
	localKeyErr  error
)

func sharedProvingKey(t *testing.T) *prover.ProvingKey {
	localKeyOnce.Do(func() { localKey, _, localKeyErr = prover.Setup(TreeDepth) })
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
	st := jsontest.Open(t)
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
		proof, _, err := prover.Prove(pk, ids[1], path, signal, ext)
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

// rootsReads reports each read of the external roots once read is set.
type rootsReads struct {
	Store
	read chan struct{}
}

func (s *rootsReads) ExternalRoots(ctx context.Context) ([]record.ExternalRoot, error) {
	roots, err := s.Store.ExternalRoots(ctx)
	if s.read != nil {
		select {
		case s.read <- struct{}{}:
		case <-ctx.Done():
		}
	}
	return roots, err
}

// TestReplicasFollowEachOther: two registries on one store, as two
// replicas on one PostgreSQL; B sees A's identity and root after Follow
// ticks, and B's own append lands after A's in index order.
func TestReplicasFollowEachOther(t *testing.T) {
	st := jsontest.Open(t)
	c := &clock{time.Unix(1_800_000_000, 0)}
	key := mustKey(t, 16)
	bStore := &rootsReads{Store: st}
	a, b := openTest(t, st, key, c, false), openTest(t, bStore, key, c, false)
	bStore.read = make(chan struct{})
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
	// The second read of the roots begins after B's first Refresh ended.
	for range 2 {
		select {
		case <-bStore.read:
		case <-time.After(5 * time.Second):
			t.Fatal("replica B does not follow")
		}
	}
	_, err := b.InclusionProof("orb", "production", x)
	tr, _ := b.tree("device", "staging")
	if _, rootErr := b.keyFor(tr, root, time.Hour); err != nil || rootErr != nil {
		t.Fatalf("replica B did not catch up: %v / %v", err, rootErr)
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

// elements returns the field elements from, from+1, …, from+n−1.
func elements(from, n int) []fr.Element {
	out := make([]fr.Element, n)
	for i := range out {
		out[i].SetUint64(uint64(from + i))
	}
	return out
}

// rootsAfter is the root of a depth-30 tree holding each prefix of leaves:
// rootsAfter(leaves)[n] holds the first n.
func rootsAfter(t *testing.T, leaves []fr.Element) []fr.Element {
	t.Helper()
	tree, err := semaphore.BuildTree(TreeDepth, leaves)
	if err != nil {
		t.Fatal(err)
	}
	roots := make([]fr.Element, len(leaves)+1)
	for n := range roots {
		if roots[n], err = tree.RootAfter(n); err != nil {
			t.Fatal(err)
		}
	}
	return roots
}

// TestAddIdentities: a batch lands after a single insert at consecutive
// indexes, gives the root of the whole tree, and adds only that root to the
// history; a rebuild from the store gives the same history: the stored
// leaves of one batch share its time, and only the root after the last of
// them is added.
func TestAddIdentities(t *testing.T) {
	st := jsontest.Open(t)
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := openTest(t, st, mustKey(t, 16), c, false)
	leaves := elements(1, 5)
	roots := rootsAfter(t, leaves)
	if index, root, err := r.AddIdentity(t.Context(), "orb", "production", leaves[0]); err != nil || index != 0 || root != roots[1] {
		t.Fatalf("AddIdentity = %d, %v, %v", index, root.String(), err)
	}
	singleAt := c.t
	c.t = c.t.Add(time.Hour)
	first, root, err := r.AddIdentities(t.Context(), "orb", "production", leaves[1:])
	if err != nil || first != 1 || root != roots[5] {
		t.Fatalf("AddIdentities = %d, %v, %v; want 1 and the root of all five leaves", first, root.String(), err)
	}
	for i, leaf := range leaves {
		path, err := r.InclusionProof("orb", "production", leaf)
		if got := path.Root(); err != nil || path.Index != i || got != roots[5] {
			t.Fatalf("leaf %d: path index %d, root %v, %v", i, path.Index, got.String(), err)
		}
	}
	// Checked 2 minutes after the batch with max_age 5 minutes: the single
	// insert's root is too old, the batch's is current, and the roots
	// between were never observable, hence unknown.
	c.t = singleAt.Add(time.Hour + 2*time.Minute)
	live := []string{1: record.CodeRootTooOld, 2: record.CodeInvalidMerkleRoot, 3: record.CodeInvalidMerkleRoot, 4: record.CodeInvalidMerkleRoot, 5: ""}
	for _, h := range []struct {
		name  string
		r     *Registry
		codes []string
	}{{"live", r, live}, {"rebuilt", openTest(t, st, mustKey(t, 16), c, false), live}} {
		tr, _ := h.r.tree("orb", "production")
		for n := 1; n <= 5; n++ {
			if code := codeOf(func() error { _, err := h.r.keyFor(tr, roots[n], 5*time.Minute); return err }()); code != h.codes[n] {
				t.Errorf("%s: root after %d leaves: %q, want %q", h.name, n, code, h.codes[n])
			}
		}
	}
}

// TestAddIdentitiesRefused: a refused batch stores nothing and leaves the
// tree as it was; in particular 0, which the tree cannot hold, is refused
// before it is stored (a stored 0 would stop every later rebuild).
func TestAddIdentitiesRefused(t *testing.T) {
	st := jsontest.Open(t)
	r := openTest(t, st, mustKey(t, 16), &clock{time.Unix(1_800_000_000, 0)}, false)
	if _, _, err := r.AddIdentities(t.Context(), "orb", "production", elements(1, 2)); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		batch []fr.Element
		want  error
	}{
		"already in the tree":   {append(elements(10, 2), elements(2, 1)...), record.ErrExists},
		"repeated in the batch": {append(elements(10, 2), elements(10, 1)...), record.ErrExists},
		"zero":                  {append(elements(10, 2), elements(0, 1)...), semaphore.ErrZeroLeaf},
		"empty":                 {nil, nil},
	} {
		_, _, err := r.AddIdentities(t.Context(), "orb", "production", tc.batch)
		if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if _, _, err := r.AddIdentities(t.Context(), "passport", "production", elements(10, 1)); !errors.Is(err, ErrUnknownTree) {
		t.Errorf("unknown tree: %v", err)
	}
	if n := leafCount(t, st); n != 2 {
		t.Fatalf("refused batches stored leaves: %d leaves", n)
	}
	if first, _, err := r.AddIdentities(t.Context(), "orb", "production", elements(10, 2)); err != nil || first != 2 {
		t.Fatalf("after the refusals: first %d, %v; want 2", first, err)
	}
	openTest(t, st, mustKey(t, 16), &clock{time.Unix(1_800_000_000, 0)}, false) // rebuilds
}

// benchmarkAdd adds b.N·batch fresh commitments to a depth-30 tree, batch
// at a time, and reports the cost per leaf.
func benchmarkAdd(b *testing.B, batch int) {
	key, err := semaphore.PublishedKey(16)
	if err != nil {
		b.Fatal(err)
	}
	r, err := Open(b.Context(), Options{Store: jsontest.Open(b), LocalKey: key, Now: time.Now})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	leaves := elements(1, b.N*batch)
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := r.AddIdentities(b.Context(), "orb", "production", leaves[i*batch:(i+1)*batch]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/leaf")
}

// BenchmarkAddIdentity is one insert: depth (30) Poseidon hashes.
func BenchmarkAddIdentity(b *testing.B) { benchmarkAdd(b, 1) }

// BenchmarkAddIdentities is a batch of 1000: about 2 hashes per leaf.
func BenchmarkAddIdentities(b *testing.B) { benchmarkAdd(b, 1000) }

// TestFaceSelfieOneType: IDKit 4 sends the face credential as "selfie";
// a root of the face tree verifies under either name, whichever tree name
// added it, and a root stored under the legacy "selfie/…" tree name still
// does too.
func TestFaceSelfieOneType(t *testing.T) {
	v := validVector(t, 0)
	rootBytes := hex32(t, v.Root)
	var root fr.Element
	root.SetBytes(rootBytes[:])
	claim := record.Claim{Environment: "staging", MerkleRoot: rootBytes, NullifierHash: hex32(t, v.NullifierHash),
		SignalHash: hex32(t, v.SignalHash), Proof: "0x" + strings.Join(trim0x(v.ProofPacked), "")}
	c := &clock{time.Unix(1_800_000_000, 0)}
	for _, added := range []string{"face", "selfie"} {
		r := openTest(t, jsontest.Open(t), mustKey(t, 16), c, false)
		if err := r.AddExternalRoot(t.Context(), added, "staging", root, v.Depth, c.t); err != nil {
			t.Fatal(err)
		}
		for _, sent := range []string{"face", "selfie"} {
			claim.Identifier = sent
			if err := r.check(t.Context(), claim, hex32(t, v.ExternalNullifier)); err != nil {
				t.Fatalf("added as %s, sent as %s: %v", added, sent, err)
			}
		}
		claim.Identifier = "orb"
		if code := codeOf(r.check(t.Context(), claim, hex32(t, v.ExternalNullifier))); code != record.CodeInvalidMerkleRoot {
			t.Fatalf("added as %s, sent as orb: %q", added, code)
		}
	}
	st := jsontest.Open(t)
	if err := st.AddExternalRoot(t.Context(), record.ExternalRoot{Tree: "selfie/staging", Root: field.Format(&root), Depth: v.Depth, At: c.t}); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, st, mustKey(t, 16), c, false)
	for _, sent := range []string{"face", "selfie"} {
		claim.Identifier = sent
		if err := r.check(t.Context(), claim, hex32(t, v.ExternalNullifier)); err != nil {
			t.Fatalf("legacy selfie root, sent as %s: %v", sent, err)
		}
	}
}

// TestTestRoots: a root kept outside the store is accepted only through
// Options.TestRoots, only for the credential types and environment the
// hook names, and nothing reaches the store.
func TestTestRoots(t *testing.T) {
	pk := sharedProvingKey(t)
	id, err := semaphore.NewIdentity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := semaphore.BuildTree(TreeDepth, []fr.Element{id.Commitment()})
	if err != nil {
		t.Fatal(err)
	}
	path, err := tree.Path(0)
	if err != nil {
		t.Fatal(err)
	}
	signal, ext := semaphore.HashToField([]byte("s")), semaphore.ExternalNullifier("app_test", "")
	proof, _, err := prover.Prove(pk, id, path, signal, ext)
	if err != nil {
		t.Fatal(err)
	}
	root, nh := path.Root(), id.NullifierHash(ext)
	claim := func(identifier string) record.Claim {
		return record.Claim{Identifier: identifier, Environment: "production", AppID: "app_test",
			MerkleRoot: root.Bytes(), NullifierHash: nh.Bytes(), SignalHash: signal.Bytes(), Proof: proof.ABIHex()}
	}
	st, c := jsontest.Open(t), &clock{time.Unix(1_800_000_000, 0)}
	without := openTest(t, st, pk.VerifyingKey(), c, false)
	if code := codeOf(without.CheckClaim(t.Context(), claim("orb"))); code != record.CodeInvalidMerkleRoot {
		t.Fatalf("without the hook: %q", code)
	}
	hook := func(credentialType, environment string, r fr.Element) bool {
		return credentialType == "orb" && environment == "production" && r.Equal(&root)
	}
	with, err := Open(t.Context(), Options{Store: st, LocalKey: pk.VerifyingKey(), Now: c.now, TestRoots: hook})
	if err != nil {
		t.Fatal(err)
	}
	defer with.Close()
	if err := with.CheckClaim(t.Context(), claim("orb")); err != nil {
		t.Fatalf("with the hook: %v", err)
	}
	if code := codeOf(with.CheckClaim(t.Context(), claim("device"))); code != record.CodeInvalidMerkleRoot {
		t.Fatalf("a type the hook does not name: %q", code)
	}
	roots, err := st.ExternalRoots(t.Context())
	if n := leafCount(t, st); err != nil || n != 0 || len(roots) != 0 {
		t.Fatalf("the store got %d leaves and %d roots (%v)", n, len(roots), err)
	}
}

package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"worldid/record"
)

// RegistryBackend is the method set of package registry's Store, plus
// AppendLeaf (a batch of one): the ordered leaves of each identity tree and
// the operator's external roots.
type RegistryBackend interface {
	AppendLeaf(ctx context.Context, tree, commitment string, at time.Time) (int, error)
	AppendLeaves(ctx context.Context, tree string, commitments []string, at time.Time) (first int, err error)
	Leaves(ctx context.Context, tree string, from int) ([]record.Leaf, error)
	AddExternalRoot(ctx context.Context, r record.ExternalRoot) error
	ExternalRoots(ctx context.Context) ([]record.ExternalRoot, error)
	AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error
	TrustAnchors(ctx context.Context) ([]record.TrustAnchor, error)
}

// RegistryOpener opens a fresh, empty backend for t, like Opener.
type RegistryOpener func(t *testing.T) (b RegistryBackend, reopen func() RegistryBackend)

// RunRegistry runs the identity-tree conformance suite.
func RunRegistry(t *testing.T, open RegistryOpener) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, open RegistryOpener)
	}{
		{"AppendOrder", testAppendOrder},
		{"LeavesFrom", testLeavesFrom},
		{"DuplicateCommitment", testDuplicateCommitment},
		{"TreesIndependent", testTreesIndependent},
		{"CanceledContextRegistry", testCanceledContextRegistry},
		{"ConcurrentAppends", testConcurrentAppends},
		{"ConcurrentSameCommitment", testConcurrentSameCommitment},
		{"ExternalRoots", testExternalRoots},
		{"RegistryReopen", testRegistryReopen},
		{"AppendLeavesIndexes", testAppendLeavesIndexes},
		{"AppendLeavesAllOrNothing", testAppendLeavesAllOrNothing},
		{"ConcurrentBatches", testConcurrentBatches},
		{"AppendLeavesReopen", testAppendLeavesReopen},
		{"TrustAnchors", testTrustAnchors},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, open) })
	}
}

const (
	regTree  = "orb/production"
	regOther = "device/staging"
)

// regT0 has nanoseconds and a non-UTC zone: backends must keep the instant.
var regT0 = time.Date(2025, 6, 1, 14, 0, 0, 987654321, time.FixedZone("CEST", 2*3600))

func regCommitment(n int) string { return fmt.Sprintf("0x%064x", n) }

// regLeaf is the leaf the suite appends as the i-th of a tree: commitment
// n, inserted i minutes after regT0.
func regLeaf(i, n int) record.Leaf {
	return record.Leaf{Index: i, Commitment: regCommitment(n), At: regT0.Add(time.Duration(i) * time.Minute)}
}

func mustAppend(t *testing.T, b RegistryBackend, tree string, l record.Leaf) {
	t.Helper()
	index, err := b.AppendLeaf(context.Background(), tree, l.Commitment, l.At)
	if err != nil || index != l.Index {
		t.Fatalf("AppendLeaf(%s, %s) = %d, %v; want %d", tree, l.Commitment, index, err, l.Index)
	}
}

func equalLeaves(a, b record.Leaf) bool {
	return a.Index == b.Index && a.Commitment == b.Commitment && a.At.Equal(b.At)
}

// checkLeaves asserts that Leaves(tree, from) is exactly want.
func checkLeaves(t *testing.T, b RegistryBackend, tree string, from int, want []record.Leaf) {
	t.Helper()
	got, err := b.Leaves(context.Background(), tree, from)
	if err != nil {
		t.Fatalf("Leaves(%s, %d): %v", tree, from, err)
	}
	if !slices.EqualFunc(got, want, equalLeaves) {
		t.Errorf("Leaves(%s, %d) = %+v; want %+v", tree, from, got, want)
	}
}

func testAppendOrder(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	checkLeaves(t, b, regTree, 0, nil)
	var want []record.Leaf
	// Commitments in descending order: the index, not the value, orders.
	for i := range 5 {
		l := regLeaf(i, 100-i)
		mustAppend(t, b, regTree, l)
		want = append(want, l)
	}
	checkLeaves(t, b, regTree, 0, want)
}

func testLeavesFrom(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	var want []record.Leaf
	for i := range 4 {
		l := regLeaf(i, i+1)
		mustAppend(t, b, regTree, l)
		want = append(want, l)
	}
	for from := range len(want) {
		checkLeaves(t, b, regTree, from, want[from:])
	}
	checkLeaves(t, b, regTree, len(want), nil)
	checkLeaves(t, b, regTree, len(want)+10, nil)
}

func testDuplicateCommitment(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	first, second := regLeaf(0, 1), regLeaf(1, 2)
	mustAppend(t, b, regTree, first)
	mustAppend(t, b, regTree, second)
	for _, c := range []string{first.Commitment, second.Commitment} {
		if index, err := b.AppendLeaf(context.Background(), regTree, c, regT0); !errors.Is(err, record.ErrExists) {
			t.Fatalf("AppendLeaf of a commitment in the tree = %d, %v; want ErrExists", index, err)
		}
	}
	// The refusals consumed no index.
	third := regLeaf(2, 3)
	mustAppend(t, b, regTree, third)
	checkLeaves(t, b, regTree, 0, []record.Leaf{first, second, third})
}

// Each tree has its own indexes and its own commitments.
func testTreesIndependent(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	mustAppend(t, b, regTree, regLeaf(0, 1))
	mustAppend(t, b, regTree, regLeaf(1, 2))
	mustAppend(t, b, regOther, regLeaf(0, 2))
	mustAppend(t, b, regOther, regLeaf(1, 1))
	mustAppend(t, b, regTree+"/x", regLeaf(0, 1))
	checkLeaves(t, b, regTree, 0, []record.Leaf{regLeaf(0, 1), regLeaf(1, 2)})
	checkLeaves(t, b, regOther, 0, []record.Leaf{regLeaf(0, 2), regLeaf(1, 1)})
	checkLeaves(t, b, regTree+"/x", 0, []record.Leaf{regLeaf(0, 1)})
	checkLeaves(t, b, "orb", 0, nil)
}

func testCanceledContextRegistry(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.AppendLeaf(ctx, regTree, regCommitment(1), regT0); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendLeaf with canceled context: %v, want context.Canceled", err)
	}
	if _, err := b.AppendLeaves(ctx, regTree, []string{regCommitment(1), regCommitment(2)}, regT0); !errors.Is(err, context.Canceled) {
		t.Fatalf("AppendLeaves with canceled context: %v, want context.Canceled", err)
	}
	root := record.ExternalRoot{Tree: regTree, Root: regCommitment(1), Depth: 30, At: regT0}
	if err := b.AddExternalRoot(ctx, root); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddExternalRoot with canceled context: %v, want context.Canceled", err)
	}
	checkLeaves(t, b, regTree, 0, nil)
	checkRoots(t, b, nil)
	mustAppend(t, b, regTree, regLeaf(0, 1))
}

// appendRace appends commitment(i) to regTree from concurrency goroutines at
// once and returns the indexes and errors.
func appendRace(b RegistryBackend, commitment func(i int) string) ([]int, []error) {
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		indexes = make([]int, concurrency)
		errs    = make([]error, concurrency)
	)
	for i := range concurrency {
		wg.Go(func() {
			<-start
			indexes[i], errs[i] = b.AppendLeaf(context.Background(), regTree, commitment(i), regT0)
		})
	}
	close(start)
	wg.Wait()
	return indexes, errs
}

// Concurrent appends get distinct, consecutive indexes, and each leaf is
// stored at the index its append returned.
func testConcurrentAppends(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	indexes, errs := appendRace(b, regCommitment)
	want := make([]record.Leaf, concurrency)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("racer %d: %v", i, err)
		}
		if indexes[i] < 0 || indexes[i] >= concurrency || want[indexes[i]].Commitment != "" {
			t.Fatalf("indexes %v are not a permutation of 0..%d", indexes, concurrency-1)
		}
		want[indexes[i]] = record.Leaf{Index: indexes[i], Commitment: regCommitment(i), At: regT0}
	}
	checkLeaves(t, b, regTree, 0, want)
}

func testConcurrentSameCommitment(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	indexes, errs := appendRace(b, func(int) string { return regCommitment(7) })
	won := 0
	for i, err := range errs {
		switch {
		case err == nil && indexes[i] == 0:
			won++
		case err == nil:
			t.Errorf("racer %d appended at index %d", i, indexes[i])
		case !errors.Is(err, record.ErrExists):
			t.Errorf("racer %d: %v, want nil or ErrExists", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d appends of one commitment succeeded", won, concurrency)
	}
	mustAppend(t, b, regTree, regLeaf(1, 8))
	checkLeaves(t, b, regTree, 0, []record.Leaf{{Index: 0, Commitment: regCommitment(7), At: regT0}, regLeaf(1, 8)})
}

func equalRoots(a, b record.ExternalRoot) bool {
	return a.Tree == b.Tree && a.Root == b.Root && a.Depth == b.Depth && a.At.Equal(b.At)
}

func checkRoots(t *testing.T, b RegistryBackend, want []record.ExternalRoot) {
	t.Helper()
	got, err := b.ExternalRoots(context.Background())
	if err != nil {
		t.Fatalf("ExternalRoots: %v", err)
	}
	if !slices.EqualFunc(got, want, equalRoots) {
		t.Errorf("ExternalRoots = %+v; want %+v", got, want)
	}
}

func testExternalRoots(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	ctx := context.Background()
	checkRoots(t, b, nil)
	roots := []record.ExternalRoot{
		{Tree: regTree, Root: regCommitment(9), Depth: 30, At: regT0},
		{Tree: regOther, Root: regCommitment(1), Depth: 16, At: regT0.Add(time.Hour)},
		{Tree: regTree, Root: regCommitment(2), Depth: 20, At: regT0.Add(-time.Hour)},
		{Tree: regOther, Root: regCommitment(9), Depth: 32, At: regT0}, // the same root in another tree
	}
	for _, r := range roots {
		if err := b.AddExternalRoot(ctx, r); err != nil {
			t.Fatalf("AddExternalRoot(%+v): %v", r, err)
		}
	}
	dup := roots[0]
	dup.Depth, dup.At = 16, regT0.Add(time.Hour)
	if err := b.AddExternalRoot(ctx, dup); !errors.Is(err, record.ErrExists) {
		t.Fatalf("re-adding a root: %v, want ErrExists", err)
	}
	// Ordered by tree, then root; the refused duplicate changed nothing.
	checkRoots(t, b, []record.ExternalRoot{roots[1], roots[3], roots[2], roots[0]})
}

func testRegistryReopen(t *testing.T, open RegistryOpener) {
	b, reopen := open(t)
	ctx := context.Background()
	var want []record.Leaf
	for i := range 3 {
		l := regLeaf(i, 10+i)
		mustAppend(t, b, regTree, l)
		want = append(want, l)
	}
	root := record.ExternalRoot{Tree: regTree, Root: regCommitment(5), Depth: 30, At: regT0}
	if err := b.AddExternalRoot(ctx, root); err != nil {
		t.Fatal(err)
	}
	b = reopen()
	checkLeaves(t, b, regTree, 0, want)
	checkRoots(t, b, []record.ExternalRoot{root})
	// Constraints and the next index survive the reopen.
	if _, err := b.AppendLeaf(ctx, regTree, want[1].Commitment, regT0); !errors.Is(err, record.ErrExists) {
		t.Errorf("duplicate commitment after reopen: %v, want ErrExists", err)
	}
	if err := b.AddExternalRoot(ctx, root); !errors.Is(err, record.ErrExists) {
		t.Errorf("duplicate root after reopen: %v, want ErrExists", err)
	}
	next := regLeaf(3, 13)
	mustAppend(t, b, regTree, next)
	b = reopen()
	checkLeaves(t, b, regTree, 2, append(want[2:], next))
}

// batch returns commitments from, from+1, …, from+n−1 and the leaves they
// become when appended at index first, all at time at.
func batch(first, from, n int, at time.Time) ([]string, []record.Leaf) {
	commitments := make([]string, n)
	leaves := make([]record.Leaf, n)
	for i := range n {
		commitments[i] = regCommitment(from + i)
		leaves[i] = record.Leaf{Index: first + i, Commitment: commitments[i], At: at}
	}
	return commitments, leaves
}

func mustAppendBatch(t *testing.T, b RegistryBackend, tree string, commitments []string, at time.Time, wantFirst int) {
	t.Helper()
	first, err := b.AppendLeaves(context.Background(), tree, commitments, at)
	if err != nil || first != wantFirst {
		t.Fatalf("AppendLeaves(%s, %d commitments) = %d, %v; want %d", tree, len(commitments), first, err, wantFirst)
	}
}

// Batches and single appends share one sequence of indexes; a batch's
// leaves keep its order (not their values') and its one time.
func testAppendLeavesIndexes(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	at := regT0.Add(time.Hour)
	c1, want := batch(0, 100, 3, at)
	slices.Reverse(c1)
	slices.Reverse(want)
	for i := range want {
		want[i].Index = i
	}
	mustAppendBatch(t, b, regTree, c1, at, 0)
	single := regLeaf(3, 1)
	mustAppend(t, b, regTree, single)
	c2, l2 := batch(4, 200, 5, at)
	mustAppendBatch(t, b, regTree, c2, at, 4)
	mustAppendBatch(t, b, regOther, c2[:1], regT0, 0) // another tree: its own indexes
	want = append(append(want, single), l2...)
	checkLeaves(t, b, regTree, 0, want)
	checkLeaves(t, b, regTree, 5, want[5:])
	checkLeaves(t, b, regOther, 0, []record.Leaf{{Index: 0, Commitment: c2[0], At: regT0}})
}

// A batch holding a commitment already in the tree, or one commitment
// twice, or nothing at all, writes nothing and consumes no index.
func testAppendLeavesAllOrNothing(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	ctx := context.Background()
	c, want := batch(0, 1, 3, regT0)
	mustAppendBatch(t, b, regTree, c, regT0, 0)
	for name, bad := range map[string][]string{
		"one already in the tree": {regCommitment(10), regCommitment(11), c[1], regCommitment(12)},
		"the first in the tree":   {c[0], regCommitment(10)},
		"repeated in the batch":   {regCommitment(10), regCommitment(11), regCommitment(10)},
	} {
		if first, err := b.AppendLeaves(ctx, regTree, bad, regT0); !errors.Is(err, record.ErrExists) {
			t.Fatalf("%s: AppendLeaves = %d, %v; want ErrExists", name, first, err)
		}
	}
	if first, err := b.AppendLeaves(ctx, regTree, nil, regT0); err == nil {
		t.Fatalf("empty batch: AppendLeaves = %d, nil; want an error", first)
	}
	checkLeaves(t, b, regTree, 0, want)
	// The refused batches' new commitments were not kept.
	c2, l2 := batch(3, 10, 3, regT0)
	mustAppendBatch(t, b, regTree, c2, regT0, 3)
	checkLeaves(t, b, regTree, 0, append(want, l2...))
}

// Concurrent batches get disjoint ranges of consecutive indexes that
// together cover 0..n−1, each holding its batch in order.
func testConcurrentBatches(t *testing.T, open RegistryOpener) {
	b, _ := open(t)
	const size = 7
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		firsts = make([]int, concurrency)
		errs   = make([]error, concurrency)
	)
	for i := range concurrency {
		wg.Go(func() {
			c, _ := batch(0, i*size, size, regT0)
			<-start
			firsts[i], errs[i] = b.AppendLeaves(context.Background(), regTree, c, regT0)
		})
	}
	close(start)
	wg.Wait()
	want := make([]record.Leaf, concurrency*size)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if firsts[i] < 0 || firsts[i]%size != 0 || firsts[i] >= len(want) || want[firsts[i]].Commitment != "" {
			t.Fatalf("first indexes %v are not disjoint ranges of %d covering 0..%d", firsts, size, len(want)-1)
		}
		_, leaves := batch(firsts[i], i*size, size, regT0)
		copy(want[firsts[i]:], leaves)
	}
	checkLeaves(t, b, regTree, 0, want)
}

func testAppendLeavesReopen(t *testing.T, open RegistryOpener) {
	b, reopen := open(t)
	c, want := batch(0, 1, 4, regT0)
	mustAppendBatch(t, b, regTree, c, regT0, 0)
	b = reopen()
	checkLeaves(t, b, regTree, 0, want)
	if _, err := b.AppendLeaves(context.Background(), regTree, []string{regCommitment(9), c[3]}, regT0); !errors.Is(err, record.ErrExists) {
		t.Errorf("batch with a duplicate after reopen: %v, want ErrExists", err)
	}
	c2, l2 := batch(4, 9, 2, regT0.Add(time.Second))
	mustAppendBatch(t, b, regTree, c2, regT0.Add(time.Second), 4)
	b = reopen()
	checkLeaves(t, b, regTree, 0, append(want, l2...))
}

// Trust anchors: one per kind and id, a second add replaces the first,
// ordered by kind and id, kept across a reopen with the instant intact.
func testTrustAnchors(t *testing.T, open RegistryOpener) {
	b, reopen := open(t)
	ctx := context.Background()
	if got, err := b.TrustAnchors(ctx); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	issuer := record.TrustAnchor{Kind: record.AnchorIssuerKey, ID: "1", X: regCommitment(1), Y: regCommitment(2), At: regT0}
	oprf := record.TrustAnchor{Kind: record.AnchorOPRFKey, ID: "rp_0123456789abcdef", X: regCommitment(3), Y: regCommitment(4), At: regT0}
	other := record.TrustAnchor{Kind: record.AnchorIssuerKey, ID: "2", X: regCommitment(5), Y: regCommitment(6), At: regT0}
	for _, a := range []record.TrustAnchor{oprf, other, issuer} {
		if err := b.AddTrustAnchor(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	replaced := issuer
	replaced.X, replaced.At = regCommitment(7), regT0.Add(time.Hour)
	if err := b.AddTrustAnchor(ctx, replaced); err != nil {
		t.Fatalf("replacing an anchor: %v", err)
	}
	want := []record.TrustAnchor{replaced, other, oprf}
	for _, s := range []func() RegistryBackend{func() RegistryBackend { return b }, reopen} {
		got, err := s().TrustAnchors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("TrustAnchors = %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i].Kind != want[i].Kind || got[i].ID != want[i].ID || got[i].X != want[i].X || got[i].Y != want[i].Y || !got[i].At.Equal(want[i].At) {
				t.Fatalf("TrustAnchors[%d] = %+v, want %+v", i, got[i], want[i])
			}
		}
	}
}

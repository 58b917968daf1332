package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
)

// TreeDepth is the depth of every local tree (World ID's).
const TreeDepth = 30

// defaultMaxAge is doc/crypto.md §g's default root max age.
const defaultMaxAge = 7 * 24 * time.Hour

// Store is what the registry keeps durable.
type Store interface {
	// AppendLeaves stores commitments atomically at consecutive indexes
	// from first; a commitment already in the tree or repeated in the
	// batch is an error wrapping record.ErrExists and stores nothing.
	AppendLeaves(ctx context.Context, tree string, commitments []string, at time.Time) (first int, err error)
	Leaves(ctx context.Context, tree string, from int) ([]record.Leaf, error)
	AddExternalRoot(ctx context.Context, r record.ExternalRoot) error
	ExternalRoots(ctx context.Context) ([]record.ExternalRoot, error)
	// AddTrustAnchor stores a, replacing the anchor of the same kind and id.
	AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error
	// TrustAnchors returns every anchor, one per kind and id.
	TrustAnchors(ctx context.Context) ([]record.TrustAnchor, error)
}

// RootSource answers, from outside (package rootsource: World's identity
// contracts over Ethereum JSON-RPC), whether a root of a tree named by
// record tree names is valid now.
type RootSource interface {
	// Has reports whether the source knows the tree.
	Has(tree string) bool
	// ValidRoot reports whether root is valid now; an error means the
	// source could not tell, never that the root is valid.
	ValidRoot(ctx context.Context, tree string, root fr.Element) (bool, error)
}

// KeySource reads World ID 4.0 trust anchors where WorldIDVerifier reads
// them, World's key registries on chain (package rootsource).
type KeySource interface {
	// Has reports whether the source knows the anchor set
	// (record.V4AnchorSet).
	Has(set string) bool
	// PublicKey reads the key registered under id; found is false when
	// none is; an error means the source could not tell, never a key.
	PublicKey(ctx context.Context, set string, id uint64) (x, y fr.Element, found bool, err error)
}

// Options configures a Registry.
type Options struct {
	Store    Store
	LocalKey *semaphore.VerifyingKey // the local prover's key (depth 30)
	Now      func() time.Time
	// Rand seeds batch-verification randomizers; nil disables batching.
	Rand     io.Reader
	MaxBatch int // largest batch (default 64)
	// Roots, if set, is asked about roots no history here knows.
	Roots RootSource
	// RootSourceDepth is the Semaphore v3 tree depth of the roots Roots
	// vouches for (default 30, World ID's).
	RootSourceDepth int
	// MinExpiration is WorldIDVerifier's minimum expiration threshold for
	// 4.0 proofs (default DefaultMinExpiration).
	MinExpiration time.Duration
	// Keys, if set, is asked for a 4.0 trust anchor no stored anchor
	// names, before DefaultAnchors.
	Keys KeySource
	// DefaultAnchors are used where no stored anchor of the kind and id
	// exists and Keys has no set for it (the server's own PoH issuer key
	// for schema 1).
	DefaultAnchors []record.TrustAnchor
	// TestRoots, if set, is asked about a root no history here knows,
	// before Roots: true means root is the root of a tree of test
	// identities kept in memory for this credential type and environment
	// (the developer simulator, set only while it is on), proven with
	// LocalKey. Nothing of it is stored.
	TestRoots func(credentialType, environment string, root fr.Element) bool
	// Checkpoints, if set, keeps each tree's checkpoint, so that a start
	// reads the tree rather than hashing every stored leaf (load.go).
	Checkpoints Checkpoints
	// Log receives how each tree was loaded and why a checkpoint was not
	// used. Nil means slog.Default().
	Log *slog.Logger
}

// Registry holds the trees and checks proofs. It is safe for concurrent use.
type Registry struct {
	store    Store
	localKey *semaphore.VerifyingKey
	now      func() time.Time
	batcher  *semaphore.Batcher // nil: verify one by one
	trees    map[string]*tree

	roots          RootSource // nil: none
	rootSourceKey  *semaphore.VerifyingKey
	v4Roots        map[string]*semaphore.RootHistory // environment → operator-added 4.0 roots
	anchors        sync.Map                          // kind/id → oprfproof.Point
	defaultAnchors map[string]oprfproof.Point
	keys           KeySource // nil: none
	minExpiration  time.Duration
	// testRoots is Options.TestRoots (nil: none).
	testRoots   func(credentialType, environment string, root fr.Element) bool
	checkpoints Checkpoints // nil: none
	saving      sync.Mutex  // serializes SaveCheckpoints
	log         *slog.Logger
}

// tree is one identity tree with its local and external root histories.
type tree struct {
	mu       sync.Mutex // serializes appends: store order = tree order
	name     string
	merkle   *semaphore.Tree // replaced only by load, before Open returns
	saved    int             // leaves in the last checkpoint written or read
	local    *semaphore.RootHistory
	external *semaphore.RootHistory
	extKeys  sync.Map // fr.Element root → *semaphore.VerifyingKey
}

// Open loads every tree from the store.
func Open(ctx context.Context, o Options) (*Registry, error) {
	if o.LocalKey == nil || o.Store == nil || o.Now == nil {
		return nil, errors.New("registry: Store, LocalKey and Now are required")
	}
	if o.MaxBatch < 0 || o.RootSourceDepth < 0 {
		return nil, errors.New("registry: MaxBatch and RootSourceDepth must not be negative")
	}
	r := &Registry{store: o.Store, localKey: o.LocalKey, now: o.Now, trees: map[string]*tree{},
		roots: o.Roots, keys: o.Keys, testRoots: o.TestRoots, v4Roots: map[string]*semaphore.RootHistory{}, defaultAnchors: map[string]oprfproof.Point{},
		minExpiration: cmp.Or(o.MinExpiration, DefaultMinExpiration),
		checkpoints:   o.Checkpoints, log: cmp.Or(o.Log, slog.New(slog.DiscardHandler))}
	if o.Roots != nil {
		key, err := semaphore.PublishedKey(cmp.Or(o.RootSourceDepth, 30))
		if err != nil {
			return nil, err
		}
		r.rootSourceKey = key
	}
	for _, a := range o.DefaultAnchors {
		p, err := ParseAnchor(a)
		if err != nil {
			return nil, err
		}
		r.defaultAnchors[a.Kind+"/"+a.ID] = p
	}
	for _, env := range record.Environments() {
		r.v4Roots[env] = semaphore.NewRootHistory()
	}
	for _, id := range record.Identifiers() {
		for _, env := range record.Environments() {
			t, err := newTree(id + "/" + env)
			if err != nil {
				return nil, err
			}
			r.trees[t.name] = t
		}
	}
	for _, t := range r.trees {
		if err := r.load(ctx, t); err != nil {
			return nil, err
		}
	}
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	if o.Rand != nil {
		r.batcher = semaphore.NewBatcher(o.Rand, cmp.Or(o.MaxBatch, 64))
	}
	return r, nil
}

func newTree(name string) (*tree, error) {
	m, err := semaphore.NewTree(TreeDepth)
	if err != nil {
		return nil, err
	}
	return &tree{name: name, merkle: m,
		local: semaphore.NewRootHistory(), external: semaphore.NewRootHistory()}, nil
}

// Close stops the batcher.
func (r *Registry) Close() {
	if r.batcher != nil {
		r.batcher.Close()
	}
}

// Follow calls Refresh every interval until ctx is done, so that identities
// and roots added through another replica sharing the store become
// provable and verifiable here within one interval. Errors are reported
// to onError and retried at the next tick.
func (r *Registry) Follow(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := r.Refresh(ctx); err != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}

// Refresh appends the leaves and external roots stored since the last
// load, e.g. by another replica sharing the store.
func (r *Registry) Refresh(ctx context.Context) error {
	for _, t := range r.trees {
		if err := r.catchUp(ctx, t); err != nil {
			return err
		}
	}
	roots, err := r.store.ExternalRoots(ctx)
	if err != nil {
		return err
	}
	for _, er := range roots {
		if err := r.loadExternalRoot(er); err != nil {
			return err
		}
	}
	return r.loadAnchors(ctx)
}

func (r *Registry) catchUp(ctx context.Context, t *tree) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return r.catchUpLocked(ctx, t)
}

// insert adds stored leaves, whose first index is want, to the in-memory
// tree and their final root, created at, to the history; t.mu is held.
func (t *tree) insert(leaves []fr.Element, want int, at time.Time) (fr.Element, error) {
	first, root, err := t.merkle.InsertBatch(leaves)
	if err != nil {
		return fr.Element{}, err
	}
	if first != want {
		return fr.Element{}, fmt.Errorf("registry: %s: stored leaf index %d, tree index %d", t.name, want, first)
	}
	t.local.Add(root, at)
	return root, nil
}

func (r *Registry) loadExternalRoot(er record.ExternalRoot) error {
	for env, h := range r.v4Roots {
		if er.Tree == record.V4RootTree(env) {
			root, err := field.ParseStrict(er.Root)
			if err != nil {
				return fmt.Errorf("registry: World ID 4.0 root: %w", err)
			}
			if errors.Is(h.Check(root, er.At, 0), semaphore.ErrUnknownRoot) {
				h.Add(root, er.At) // once: a refresh must not make an old root current again
			}
			return nil
		}
	}
	t, ok := r.trees[er.Tree]
	if !ok {
		return fmt.Errorf("registry: external root for unknown tree %q", er.Tree)
	}
	root, err := field.ParseStrict(er.Root)
	if err != nil {
		return fmt.Errorf("registry: external root: %w", err)
	}
	key, err := semaphore.PublishedKey(er.Depth)
	if err != nil {
		return fmt.Errorf("registry: external root %s: %w", er.Root, err)
	}
	if _, loaded := t.extKeys.LoadOrStore(root, key); !loaded {
		t.external.Add(root, er.At)
	}
	return nil
}

// ErrUnknownTree: the identifier or environment names no tree.
var ErrUnknownTree = errors.New("registry: unknown identifier or environment")

// tree returns the tree of the identifier's credential type: "selfie"
// names the face tree (record.CredentialType).
func (r *Registry) tree(identifier, environment string) (*tree, error) {
	t, ok := r.trees[record.CredentialType(identifier)+"/"+environment]
	if !ok {
		return nil, fmt.Errorf("%w: %q/%q", ErrUnknownTree, identifier, environment)
	}
	return t, nil
}

// legacyTree is the tree, if any, that held the identifier's credentials
// before "selfie" and "face" became one type: leaves and external roots
// stored under "selfie/<environment>" stay there and stay valid for both
// names.
func (r *Registry) legacyTree(identifier, environment string) *tree {
	if record.CredentialType(identifier) != "face" {
		return nil
	}
	return r.trees["selfie/"+environment]
}

// AddIdentity appends commitment to the tree of identifier and environment
// and returns its leaf index and the new root: AddIdentities with one
// commitment.
func (r *Registry) AddIdentity(ctx context.Context, identifier, environment string, commitment fr.Element) (int, fr.Element, error) {
	return r.AddIdentities(ctx, identifier, environment, []fr.Element{commitment})
}

// AddIdentities appends commitments, in order, to the tree of identifier
// and environment in one atomic store operation, and returns the index of
// the first and the new root, the only one the batch adds to the history.
// A commitment already in the tree or repeated in commitments returns an
// error wrapping record.ErrExists, and 0 one wrapping semaphore.ErrZeroLeaf;
// either way none is added. The tree stays locked for the whole batch
// (about 20 µs per leaf at depth 30): callers bound its size.
func (r *Registry) AddIdentities(ctx context.Context, identifier, environment string, commitments []fr.Element) (first int, root fr.Element, err error) {
	t, err := r.tree(identifier, environment)
	if err != nil {
		return 0, fr.Element{}, err
	}
	stored, err := formatLeaves(commitments)
	if err != nil {
		return 0, fr.Element{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := r.catchUpLocked(ctx, t); err != nil {
		return 0, fr.Element{}, err
	}
	at := r.now().UTC()
	first, err = r.store.AppendLeaves(ctx, t.name, stored, at)
	if err != nil {
		return 0, fr.Element{}, err
	}
	root, err = t.insert(commitments, first, at)
	return first, root, err
}

// formatLeaves checks a batch before anything is stored, since a stored
// leaf the tree refuses would stop every later rebuild, and formats it.
func formatLeaves(commitments []fr.Element) ([]string, error) {
	if len(commitments) == 0 {
		return nil, errors.New("registry: no commitments to add")
	}
	stored := make([]string, len(commitments))
	for i := range commitments {
		if commitments[i].IsZero() {
			return nil, fmt.Errorf("registry: commitment %d: %w", i, semaphore.ErrZeroLeaf)
		}
		stored[i] = field.Format(&commitments[i])
	}
	return stored, nil
}

// catchUpLocked is catchUp for a caller holding t.mu: another replica may
// have appended since, and the store's next index must match the tree's.
func (r *Registry) catchUpLocked(ctx context.Context, t *tree) error {
	stored, err := r.store.Leaves(ctx, t.name, t.merkle.Len())
	if err != nil {
		return err
	}
	leaves, err := parseLeaves(ctx, t.name, stored)
	if err != nil {
		return err
	}
	return r.appendStored(ctx, t, stored, leaves)
}

// AddExternalRoot records a root of a tree kept elsewhere, checked with the
// published Semaphore v3 key of the given depth.
func (r *Registry) AddExternalRoot(ctx context.Context, identifier, environment string, root fr.Element, depth int, at time.Time) error {
	t, err := r.tree(identifier, environment)
	if err != nil {
		return err
	}
	if _, err := semaphore.PublishedKey(depth); err != nil {
		return err
	}
	er := record.ExternalRoot{Tree: t.name, Root: field.Format(&root), Depth: depth, At: at.UTC()}
	if err := r.store.AddExternalRoot(ctx, er); err != nil {
		return err
	}
	return r.loadExternalRoot(er)
}

// InclusionProof returns the Merkle path of commitment in the tree of
// identifier and environment; the path's Root is the tree's current root.
func (r *Registry) InclusionProof(identifier, environment string, commitment fr.Element) (semaphore.MerklePath, error) {
	t, err := r.tree(identifier, environment)
	if err != nil {
		return semaphore.MerklePath{}, err
	}
	p, err := t.path(commitment)
	if legacy := r.legacyTree(identifier, environment); errors.Is(err, record.ErrNotFound) && legacy != nil {
		return legacy.path(commitment)
	}
	return p, err
}

func (t *tree) path(commitment fr.Element) (semaphore.MerklePath, error) {
	index, ok := t.merkle.Find(commitment)
	if !ok {
		return semaphore.MerklePath{}, fmt.Errorf("registry: commitment not in %s: %w", t.name, record.ErrNotFound)
	}
	return t.merkle.Path(index)
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"worldid/record"
	"worldid/store/engine"
)

// Identity trees: the ordered leaves of each tree and the operator's
// external roots. The trees themselves are rebuilt in memory from these.
const (
	tableLeaves        = "leaves"         // "<tree>/<index, 10 digits>" → record.Leaf
	tableLeafIndex     = "leaf_index"     // "<tree>/<commitment>" → index, for leaves the engine does not pack (addLeaf)
	tableTreeSizes     = "tree_sizes"     // tree → number of leaves
	tableExternalRoots = "external_roots" // "<tree>/<root>" → record.ExternalRoot
	tableTrustAnchors  = "trust_anchors"  // "<kind>/<id>" → record.TrustAnchor
)

// maxTreeLeaves bounds a tree at depth 30 (2^30 leaves).
const maxTreeLeaves = 1 << 30

func leafKey(tree string, index int64) string { return fmt.Sprintf("%s/%010d", tree, index) }

// AppendLeaf appends commitment to tree and returns its index. A
// commitment already in the tree returns an error wrapping record.ErrExists
// and writes nothing.
func (db *DB) AppendLeaf(ctx context.Context, tree, commitment string, at time.Time) (int, error) {
	return db.AppendLeaves(ctx, tree, []string{commitment}, at)
}

// AppendLeaves appends commitments to tree in one atomic Update, at
// consecutive indexes from first. A commitment already in the tree or
// repeated in the batch returns an error wrapping record.ErrExists and
// writes nothing.
func (db *DB) AppendLeaves(ctx context.Context, tree string, commitments []string, at time.Time) (first int, err error) {
	if len(commitments) == 0 {
		return 0, errors.New("store: no commitments to append")
	}
	at = at.UTC()
	err = db.Update(ctx, func(tx *engine.Tx) error {
		for i, c := range commitments {
			n, err := tx.Increment(tableTreeSizes, tree, maxTreeLeaves)
			if err != nil {
				return fmt.Errorf("store: tree %q is full: %w", tree, err)
			}
			if i == 0 {
				first = int(n - 1)
			}
			// The Tx sees its own writes: a repeat within the batch fails too.
			if err := addLeaf(tx, tx.Put, tree, record.Leaf{Index: int(n - 1), Commitment: c, At: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return first, nil
}

// leafReader is what addLeaf reads: engine.Tx, or the engine.State a
// restore fills.
type leafReader interface {
	Get(table, key string) (json.RawMessage, bool)
	Lookup(table, group string, second []byte) (key string, ok bool)
}

// addLeaf stores l as the next leaf of tree with put, unless tree holds
// its commitment already (an error wrapping record.ErrExists). The engine
// finds a packed leaf by its commitment (leafCodec's second key); a leaf
// it does not pack (a commitment not spelled canonically, a time it
// cannot hold) gets a leaf_index row instead.
func addLeaf(r leafReader, put func(table, key string, v any) error, tree string, l record.Leaf) error {
	if lookupLeaf(r, tree, l.Commitment) {
		return fmt.Errorf("store: tree %q holds %s: %w", tree, l.Commitment, record.ErrExists)
	}
	key := leafKey(tree, int64(l.Index))
	if err := put(tableLeaves, key, l); err != nil {
		return err
	}
	if v, err := json.Marshal(l); err != nil || engine.Packs(leafCodec{}, key, v) {
		return err
	}
	return put(tableLeafIndex, tree+"/"+l.Commitment, l.Index)
}

// lookupLeaf reports whether tree holds commitment: a packed leaf, or a
// leaf_index row.
func lookupLeaf(r leafReader, tree, commitment string) bool {
	if _, ok := r.Get(tableLeafIndex, tree+"/"+commitment); ok {
		return true
	}
	var h [hashSize]byte
	if !packHash(h[:], commitment) {
		return false
	}
	_, ok := r.Lookup(tableLeaves, tree+"/", h[:])
	return ok
}

// obsoleteLeafIndex reports whether a leaf_index row, which earlier
// versions wrote for every leaf, is one lookupLeaf no longer needs: its
// leaf is packed (engine.Options.Obsolete drops it).
func obsoleteLeafIndex(st engine.State, key, _ string) bool {
	group, commitment, _ := splitLast(key, '/')
	var h [hashSize]byte
	if !packHash(h[:], commitment) {
		return false
	}
	_, ok := st.Lookup(tableLeaves, group, h[:])
	return ok
}

// Leaves returns the leaves of tree in index order, starting at index from
// (so a replica can catch up on what others appended). Packed leaves are
// decoded from their records, in one pass over the table; the others
// (none, unless the codec could not pack them) are read by key.
func (db *DB) Leaves(ctx context.Context, tree string, from int) (leaves []record.Leaf, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		var size int64
		if raw, ok := tx.Get(tableTreeSizes, tree); ok {
			if err := json.Unmarshal(raw, &size); err != nil {
				return fmt.Errorf("store: tree %q size: %w", tree, err)
			}
		}
		leaves = make([]record.Leaf, max(size-int64(from), 0))
		// The commitments are spelled into one buffer, made one string and
		// sliced: a million leaves are one allocation, not a million.
		spelled := make([]byte, len(leaves)*commitmentLen)
		packed := make([]bool, len(leaves))
		// By group, not by prefix: "orb/production/…" must not pick up the
		// leaves of a tree whose name extends this one.
		tx.Records(tableLeaves, tree+"/", func(rec []byte) {
			if l := unpackLeafTime(rec); l.Index >= from && l.Index < from+len(leaves) {
				i := l.Index - from
				appendLeafCommitment(spelled[i*commitmentLen:i*commitmentLen], rec)
				leaves[i], packed[i] = l, true
			}
		})
		commitments := string(spelled)
		for i := range leaves {
			if i%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if packed[i] {
				leaves[i].Commitment = commitments[i*commitmentLen : (i+1)*commitmentLen]
			} else if err := getJSON(tx, tableLeaves, leafKey(tree, int64(from+i)), &leaves[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return leaves, err
}

// AddExternalRoot records r; re-adding a root returns an error wrapping
// record.ErrExists.
func (db *DB) AddExternalRoot(ctx context.Context, r record.ExternalRoot) error {
	r.At = r.At.UTC()
	return db.Update(ctx, func(tx *engine.Tx) error { return tx.Insert(tableExternalRoots, r.Tree+"/"+r.Root, r) })
}

// ExternalRoots returns every external root, ordered by tree and root.
func (db *DB) ExternalRoots(_ context.Context) (roots []record.ExternalRoot, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		roots, err = scanJSON[record.ExternalRoot](tx, tableExternalRoots, "")
		return err
	})
	return roots, err
}

// AddTrustAnchor stores a, replacing the anchor of the same kind and id.
func (db *DB) AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error {
	a.At = a.At.UTC()
	return db.Update(ctx, func(tx *engine.Tx) error { return tx.Put(tableTrustAnchors, a.Kind+"/"+a.ID, a) })
}

// TrustAnchors returns every anchor, ordered by kind and id.
func (db *DB) TrustAnchors(_ context.Context) (anchors []record.TrustAnchor, err error) {
	err = db.View(func(tx *engine.ReadTx) error {
		anchors, err = scanJSON[record.TrustAnchor](tx, tableTrustAnchors, "")
		return err
	})
	return anchors, err
}

package registry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
)

// loadChunk is how many stored leaves are parsed, or inserted with their
// roots, between two looks at the context: a chunk costs about 2 hashes
// per leaf plus depth hashes per root it adds.
const loadChunk = 1024

// load fills t, still empty, from the store at start: from its checkpoint
// when that matches the stored leaves, then the leaves stored after it;
// otherwise from every stored leaf.
func (r *Registry) load(ctx context.Context, t *tree) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	started := r.now()
	stored, err := r.store.Leaves(ctx, t.name, 0)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		r.log.Info("registry: loading tree", "tree", t.name, "leaves", len(stored))
	}
	leaves, err := parseLeaves(ctx, t.name, stored)
	if err != nil {
		return err
	}
	how := "rebuilt from the stored leaves"
	if r.checkpoints != nil {
		if err := r.restore(ctx, t, leaves); err == nil {
			how = "read from its checkpoint"
		} else if len(leaves) > 0 {
			r.log.Warn("registry: tree checkpoint not used", "tree", t.name, "reason", err)
		}
	}
	from := t.merkle.Len()
	if err := r.appendStored(ctx, t, stored[from:], leaves[from:]); err != nil {
		return err
	}
	if len(leaves) > 0 {
		r.log.Info("registry: tree loaded", "tree", t.name, "leaves", len(leaves), "how", how,
			"checkpoint_leaves", from, "replayed", len(leaves)-from, "took", r.now().Sub(started))
	}
	return nil
}

// parseLeaves parses stored commitments.
func parseLeaves(ctx context.Context, name string, stored []record.Leaf) ([]fr.Element, error) {
	leaves := make([]fr.Element, len(stored))
	for i, l := range stored {
		if i%loadChunk == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var err error
		if leaves[i], err = field.ParseStrict(l.Commitment); err != nil {
			return nil, fmt.Errorf("registry: %s leaf %d: %w", name, l.Index, err)
		}
	}
	return leaves, nil
}

// restore installs t's checkpoint if it holds a prefix of leaves, the
// stored leaves; otherwise it says why not and leaves t empty.
func (r *Registry) restore(ctx context.Context, t *tree, leaves []fr.Element) error {
	data, err := r.checkpoints.ReadCheckpoint(ctx, t.name)
	if err != nil {
		return err
	}
	merkle, roots, err := checkCheckpoint(t.name, data, leaves)
	if err != nil {
		return err
	}
	t.merkle, t.saved = merkle, merkle.Len()
	cutoff := r.now().Add(-defaultMaxAge)
	for i, e := range roots {
		if i == len(roots)-1 || !e.At.Before(cutoff) {
			t.local.Add(e.Root, e.At)
		}
	}
	return nil
}

// checkCheckpoint decodes data and checks it against the stored leaves:
// its tree must hold their first leaves exactly and its last root must be
// that tree's root.
func checkCheckpoint(name string, data []byte, leaves []fr.Element) (*semaphore.Tree, []semaphore.RootEntry, error) {
	c, err := decodeCheckpoint(data)
	if err != nil {
		return nil, nil, err
	}
	if c.name != name {
		return nil, nil, fmt.Errorf("the checkpoint is of tree %q", c.name)
	}
	merkle, err := semaphore.ParseTree(c.tree)
	if err != nil {
		return nil, nil, err
	}
	n := merkle.Len()
	switch {
	case merkle.Depth() != TreeDepth:
		return nil, nil, fmt.Errorf("the checkpoint's tree has depth %d", merkle.Depth())
	case n > len(leaves):
		return nil, nil, fmt.Errorf("the checkpoint has %d leaves, the store %d", n, len(leaves))
	case !merkle.HasLeaves(0, leaves[:n]):
		return nil, nil, errors.New("the checkpoint's leaves are not the stored ones")
	case len(c.roots) == 0 || c.roots[len(c.roots)-1].Root != merkle.Root():
		return nil, nil, errors.New("the checkpoint's current root is not its tree's root")
	}
	return merkle, c.roots, nil
}

// appendStored inserts stored leaves (parsed: leaves) in chunks, each with
// one InsertBatch, and adds to the history the root after each run of
// leaves sharing one time (one AddIdentities batch) created within the
// largest max_age, and the root after each chunk. Between chunks the tree
// and its history agree, so an interrupted catch-up resumes where it
// stopped.
func (r *Registry) appendStored(ctx context.Context, t *tree, stored []record.Leaf, leaves []fr.Element) error {
	cutoff := r.now().Add(-defaultMaxAge)
	for len(leaves) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(loadChunk, len(leaves))
		if err := t.appendChunk(stored[:n], leaves[:n], cutoff); err != nil {
			return err
		}
		stored, leaves = stored[n:], leaves[n:]
	}
	return nil
}

func (t *tree) appendChunk(stored []record.Leaf, leaves []fr.Element, cutoff time.Time) error {
	first, root, err := t.merkle.InsertBatch(leaves)
	if err != nil {
		return err
	}
	if first != stored[0].Index {
		return fmt.Errorf("registry: %s: stored leaf index %d, tree index %d", t.name, stored[0].Index, first)
	}
	for i := range len(stored) - 1 {
		if at := stored[i].At; !at.Equal(stored[i+1].At) && !at.Before(cutoff) {
			batchRoot, err := t.merkle.RootAfter(first + i + 1)
			if err != nil {
				return err
			}
			t.local.Add(batchRoot, at)
		}
	}
	t.local.Add(root, stored[len(stored)-1].At)
	return nil
}

// SaveCheckpoints writes the checkpoint of every tree that has leaves its
// last checkpoint lacks; without Checkpoints it does nothing. The trees
// stay locked only while their state is captured (O(depth) plus the roots
// of the last max_age), not while it is encoded and written.
func (r *Registry) SaveCheckpoints(ctx context.Context) error {
	if r.checkpoints == nil {
		return nil
	}
	r.saving.Lock()
	defer r.saving.Unlock()
	var errs []error
	for _, t := range r.trees {
		if err := r.saveCheckpoint(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("registry: checkpoint of %s: %w", t.name, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Registry) saveCheckpoint(ctx context.Context, t *tree) error {
	t.mu.Lock()
	snap := t.merkle.Snapshot()
	saved := t.saved
	roots := t.local.Since(r.now().Add(-defaultMaxAge))
	t.mu.Unlock()
	if snap.Len() == saved {
		return nil
	}
	encoded, err := snap.MarshalBinary()
	if err != nil {
		return err
	}
	data := checkpoint{name: t.name, roots: roots, tree: encoded}.encode()
	if err := r.checkpoints.WriteCheckpoint(ctx, t.name, data); err != nil {
		return err
	}
	t.mu.Lock()
	t.saved = snap.Len()
	t.mu.Unlock()
	return nil
}

// KeepCheckpoints calls SaveCheckpoints now and then every interval until
// ctx is done, so that a start reads what an earlier process built; errors
// go to onError and the next tick retries. The server also saves once at
// shutdown.
func (r *Registry) KeepCheckpoints(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := r.SaveCheckpoints(ctx); err != nil && ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"worldid/record"
)

// TreeCheckpointDir is the data-dir directory of the registry's tree
// checkpoints, one file per non-empty tree. They are derived data, checked
// against the stored leaves at every start: backups leave them out, and a
// restore removes them. With PostgreSQL each replica keeps its own, in its
// own data dir: the database stays the one shared truth and is not
// rewritten with every tree's nodes (64 bytes a leaf) by every replica; a
// replica whose data dir has none rebuilds its trees once, in batches.
const TreeCheckpointDir = "trees"

// checkpointInterval bounds how often a changed tree's checkpoint is
// rewritten, and so how many leaves a start after a crash replays.
const checkpointInterval = 30 * time.Second

// dirCheckpoints is registry.Checkpoints over files in dir.
type dirCheckpoints struct{ dir string }

func (d dirCheckpoints) path(tree string) string {
	return filepath.Join(d.dir, strings.ReplaceAll(tree, "/", "_")+".checkpoint")
}

func (d dirCheckpoints) ReadCheckpoint(_ context.Context, tree string) ([]byte, error) {
	b, err := os.ReadFile(d.path(tree))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no checkpoint: %w", record.ErrNotFound)
	}
	return b, err
}

func (d dirCheckpoints) WriteCheckpoint(_ context.Context, tree string, data []byte) error {
	if err := os.MkdirAll(d.dir, 0o700); err != nil {
		return err
	}
	return writeFileAtomic(d.path(tree), data, 0o600)
}

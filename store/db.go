package store

import (
	"context"

	"worldid/store/engine"
)

// Options configures Open (engine.Options: compaction threshold, accepting
// a data loss, the logger). The zero value is ready to use.
type Options = engine.Options

// ErrDataLoss: Open found less on disk than the store had acknowledged
// (engine.ErrDataLoss).
var ErrDataLoss = engine.ErrDataLoss

// Witness keeps a second copy of the store's mark outside its files
// (engine.Witness); Mark is what it records (engine.Mark).
type (
	Witness = engine.Witness
	Mark    = engine.Mark
)

// ErrNotEmpty: a restore target already holds data (engine.ErrNotEmpty).
var ErrNotEmpty = engine.ErrNotEmpty

// DB is an open JSON store: the engine's tables (View, Update, Health,
// Close) and the domain methods on them, plus the sign-in scan marks,
// which are never written. Its methods are safe for concurrent use.
type DB struct {
	*engine.DB
	scans scanMarks // in memory only (MarkScanned)
}

// Open opens the store in dir (engine.Open: created if absent, locked,
// recovered from its snapshot and journal).
func Open(dir string, opts Options) (*DB, error) {
	return OpenContext(context.Background(), dir, opts)
}

// OpenContext is Open, stopped with ctx's error, changing nothing on disk,
// when ctx is done before the store is loaded (engine.OpenContext). It
// packs the leaves and the nullifiers (codecs.go) and drops the leaf_index
// rows of packed leaves, which earlier versions wrote (obsoleteLeafIndex);
// opts.Codecs and opts.Obsolete are ignored.
func OpenContext(ctx context.Context, dir string, opts Options) (*DB, error) {
	opts.Codecs = codecs
	opts.Obsolete = map[string]func(engine.State, string, string) bool{tableLeafIndex: obsoleteLeafIndex}
	db, err := engine.OpenContext(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	return &DB{DB: db}, nil
}

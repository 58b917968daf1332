package semaphore

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Root validity errors (doc/crypto.md §g "Root validity").
var (
	ErrUnknownRoot = errors.New("semaphore: merkle root is not in the history")
	ErrRootTooOld  = errors.New("semaphore: merkle root is older than max_age")
)

// RootHistory records the roots of one identity tree with the time each
// root was created (or mined or finalized, for roots of trees kept
// elsewhere). It is safe for concurrent use.
//
// The current root is the most recently added one, whether it came from the
// local tree or from the operator: either way it is the newest state of the
// tree the history describes.
type RootHistory struct {
	mu      sync.RWMutex
	created map[fr.Element]time.Time
	current fr.Element
}

// NewRootHistory returns an empty history.
func NewRootHistory() *RootHistory {
	return &RootHistory{created: make(map[fr.Element]time.Time)}
}

// Add records root with its time and makes it the current root. A root
// already present keeps its first time: that is when it was created.
func (h *RootHistory) Add(root fr.Element, t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.created[root]; !ok {
		h.created[root] = t
	}
	h.current = root
}

// Check applies doc/crypto.md §g "Root validity" at time now: an unknown root is
// ErrUnknownRoot; the current root is valid whatever its age; any other root
// is valid iff now − t_root ≤ maxAge, else ErrRootTooOld. The caller chooses
// maxAge (the request's max_age or the 604800 s default).
func (h *RootHistory) Check(root fr.Element, now time.Time, maxAge time.Duration) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	t, ok := h.created[root]
	switch {
	case !ok:
		return ErrUnknownRoot
	case root == h.current:
		return nil
	case now.Sub(t) <= maxAge:
		return nil
	default:
		return ErrRootTooOld
	}
}

// Current returns the current root, and false if the history is empty.
func (h *RootHistory) Current() (fr.Element, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.current, len(h.created) > 0
}

// RootEntry is a root with its creation time.
type RootEntry struct {
	Root fr.Element
	At   time.Time
}

// Since returns the roots created at or after t, oldest first, and then
// the current root whatever its time: adding them in order to an empty
// history gives a history that answers Check like this one for every root
// of that time or later.
func (h *RootHistory) Since(t time.Time) []RootEntry {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var entries []RootEntry
	for root, at := range h.created {
		if root != h.current && !at.Before(t) {
			entries = append(entries, RootEntry{root, at})
		}
	}
	slices.SortFunc(entries, func(a, b RootEntry) int { return a.At.Compare(b.At) })
	if len(h.created) > 0 {
		entries = append(entries, RootEntry{h.current, h.created[h.current]})
	}
	return entries
}

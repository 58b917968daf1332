package registry

import (
	"slices"
	"strings"
	"time"
)

// What a monitor reads from the registry at scrape time. Events (a batch
// checked) are reported through Options.ObserveBatch instead.

// TreeStats describes one identity tree.
type TreeStats struct {
	Name string // the store's tree name, "orb:production"
	Size int    // leaves
	// RootChanged is when the tree's current root was created (by a local
	// insert or an operator's external root); zero for an empty history.
	RootChanged time.Time
}

// TreeStats returns every tree, by name.
func (r *Registry) TreeStats() []TreeStats {
	stats := make([]TreeStats, 0, len(r.trees))
	for _, t := range r.trees {
		stats = append(stats, t.stats())
	}
	slices.SortFunc(stats, func(a, b TreeStats) int { return strings.Compare(a.Name, b.Name) })
	return stats
}

func (t *tree) stats() TreeStats {
	t.mu.Lock()
	size := t.merkle.Len()
	t.mu.Unlock()
	s := TreeStats{Name: t.name, Size: size}
	for _, h := range []interface{ CurrentSince() (time.Time, bool) }{t.local, t.external} {
		if at, ok := h.CurrentSince(); ok && at.After(s.RootChanged) {
			s.RootChanged = at
		}
	}
	return s
}

// CheckingAlone reports whether proofs are verified one by one now
// because invalid ones are frequent (semaphore.Batcher), or because
// batching is off.
func (r *Registry) CheckingAlone() bool { return r.batcher == nil || r.batcher.Alone() }

package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
	"worldid/store"
	"worldid/store/jsontest"
)

// memCheckpoints is an in-memory Checkpoints.
type memCheckpoints struct {
	mu   sync.Mutex
	data map[string][]byte
}

func newMemCheckpoints() *memCheckpoints { return &memCheckpoints{data: map[string][]byte{}} }

func (m *memCheckpoints) ReadCheckpoint(_ context.Context, tree string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.data[tree]
	if !ok {
		return nil, fmt.Errorf("no checkpoint of %s: %w", tree, record.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

func (m *memCheckpoints) WriteCheckpoint(_ context.Context, tree string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data[tree] = bytes.Clone(data)
	return nil
}

// openLogged opens a registry over st and cps and returns its log.
func openLogged(t *testing.T, st Store, cps Checkpoints, c *clock) (*Registry, *strings.Builder) {
	t.Helper()
	var log strings.Builder
	r, err := Open(t.Context(), Options{Store: st, LocalKey: mustKey(t, 16), Now: c.now, Checkpoints: cps,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r, &log
}

// addBatches adds leaves 1..sum(sizes) to orb/production, one batch per
// size, an hour apart.
func addBatches(t *testing.T, r *Registry, c *clock, from int, sizes ...int) {
	t.Helper()
	for _, n := range sizes {
		if _, _, err := r.AddIdentities(t.Context(), "orb", "production", elements(from, n)); err != nil {
			t.Fatal(err)
		}
		from += n
		c.t = c.t.Add(time.Hour)
	}
}

// checkTree requires orb/production to hold exactly leaves, with every
// leaf's path folding to the root of a tree built from them, and the roots
// after each batch end (ends) known with the live registry's answers.
func checkTree(t *testing.T, r *Registry, leaves []fr.Element, ends []int, want []string) {
	t.Helper()
	roots := rootsAfter(t, leaves)
	tr, _ := r.tree("orb", "production")
	if got := tr.merkle.Root(); got != roots[len(leaves)] || tr.merkle.Len() != len(leaves) {
		t.Fatalf("tree of %d leaves, root %s; want %d leaves, root %s", tr.merkle.Len(), got.String(), len(leaves), roots[len(leaves)].String())
	}
	for i, leaf := range leaves {
		path, err := r.InclusionProof("orb", "production", leaf)
		if got := path.Root(); err != nil || path.Index != i || got != roots[len(leaves)] {
			t.Fatalf("leaf %d: index %d, root %s, %v", i, path.Index, got.String(), err)
		}
	}
	for i, n := range ends {
		if code := codeOf(func() error { _, err := r.keyFor(tr, roots[n], defaultMaxAge); return err }()); code != want[i] {
			t.Errorf("root after %d leaves: %q, want %q", n, code, want[i])
		}
	}
}

// TestCheckpointRestart: a start reads the checkpoint instead of
// rebuilding, and answers for every root as the process that wrote it.
func TestCheckpointRestart(t *testing.T) {
	st, cps, c := jsontest.Open(t), newMemCheckpoints(), &clock{time.Unix(1_800_000_000, 0)}
	r, _ := openLogged(t, st, cps, c)
	addBatches(t, r, c, 1, 1, 3, 1)
	if err := r.SaveCheckpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	ends, live := []int{1, 2, 4, 5}, []string{"", record.CodeInvalidMerkleRoot, "", ""}
	checkTree(t, r, elements(1, 5), ends, live)
	again, log := openLogged(t, st, cps, c)
	if !strings.Contains(log.String(), `how="read from its checkpoint" checkpoint_leaves=5 replayed=0`) {
		t.Fatalf("the start did not read the checkpoint:\n%s", log)
	}
	checkTree(t, again, elements(1, 5), ends, live)
}

// TestCheckpointNotUsed: a checkpoint that is missing, damaged, of another
// tree, of other leaves or of more leaves than the store holds is not
// used: the tree is rebuilt from the stored leaves and its root is theirs.
// One older than the store is used, and only the leaves after it are
// replayed: what a crash between storing leaves and writing the
// checkpoint leaves behind.
func TestCheckpointNotUsed(t *testing.T) {
	for name, tc := range map[string]struct {
		damage func(t *testing.T, cps *memCheckpoints, older []byte)
		how    string
	}{
		"missing":   {func(t *testing.T, cps *memCheckpoints, older []byte) { delete(cps.data, "orb/production") }, rebuilt},
		"truncated": {func(t *testing.T, cps *memCheckpoints, older []byte) { cut(cps, len(cps.data["orb/production"])/2) }, rebuilt},
		"empty":     {func(t *testing.T, cps *memCheckpoints, older []byte) { cut(cps, 0) }, rebuilt},
		"bit flipped": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			b := cps.data["orb/production"]
			b[len(b)-100] ^= 1
		}, rebuilt},
		"node changed, digest recomputed": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			b := cps.data["orb/production"]
			b[len(b)-sha256.Size-40] ^= 1 // in the level below the root
			redigest(b)
		}, rebuilt},
		"leaf changed, digest recomputed": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			b := cps.data["orb/production"]
			i := bytes.Index(b, []byte("semaphore tree 2\n")) + len("semaphore tree 2\n") + 9 + 31
			b[i] ^= 2
			redigest(b)
		}, rebuilt},
		"of another tree": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			cps.data["orb/production"] = cps.data["orb/staging"]
		}, rebuilt},
		"of more leaves than the store": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			cps.data["orb/production"] = checkpointOf(t, 1, 6)
		}, rebuilt},
		"of other leaves": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			cps.data["orb/production"] = checkpointOf(t, 100, 5)
		}, rebuilt},
		"older than the store": {func(t *testing.T, cps *memCheckpoints, older []byte) {
			cps.data["orb/production"] = older
		}, `how="read from its checkpoint" checkpoint_leaves=4 replayed=1`},
	} {
		t.Run(name, func(t *testing.T) {
			st, cps, c := jsontest.Open(t), newMemCheckpoints(), &clock{time.Unix(1_800_000_000, 0)}
			r, _ := openLogged(t, st, cps, c)
			addBatches(t, r, c, 1, 1, 3)
			if _, _, err := r.AddIdentities(t.Context(), "orb", "staging", elements(50, 2)); err != nil {
				t.Fatal(err)
			}
			if err := r.SaveCheckpoints(t.Context()); err != nil {
				t.Fatal(err)
			}
			older := cps.data["orb/production"]
			addBatches(t, r, c, 5, 1)
			if err := r.SaveCheckpoints(t.Context()); err != nil {
				t.Fatal(err)
			}
			tc.damage(t, cps, older)
			again, log := openLogged(t, st, cps, c)
			if !strings.Contains(log.String(), "tree=orb/production leaves=5 "+tc.how) {
				t.Fatalf("want %s in the log:\n%s", tc.how, log)
			}
			checkTree(t, again, elements(1, 5), []int{1, 4, 5}, []string{"", "", ""})
		})
	}
}

const rebuilt = `how="rebuilt from the stored leaves" checkpoint_leaves=0 replayed=5`

func cut(cps *memCheckpoints, n int) { cps.data["orb/production"] = cps.data["orb/production"][:n] }

// redigest recomputes the digest of a changed checkpoint.
func redigest(b []byte) {
	sum := sha256.Sum256(b[:len(b)-sha256.Size])
	copy(b[len(b)-sha256.Size:], sum[:])
}

// checkpointOf is the orb/production checkpoint of a registry holding n
// leaves from, added in one batch.
func checkpointOf(t *testing.T, from, n int) []byte {
	t.Helper()
	cps, c := newMemCheckpoints(), &clock{time.Unix(1_800_000_000, 0)}
	r, _ := openLogged(t, jsontest.Open(t), cps, c)
	addBatches(t, r, c, from, n)
	if err := r.SaveCheckpoints(t.Context()); err != nil {
		t.Fatal(err)
	}
	return cps.data["orb/production"]
}

// cancellingStore cancels the start's context once the leaves are read,
// as SIGTERM arriving while a tree loads.
type cancellingStore struct {
	Store
	cancel context.CancelFunc
}

func (s cancellingStore) Leaves(ctx context.Context, tree string, from int) ([]record.Leaf, error) {
	leaves, err := s.Store.Leaves(ctx, tree, from)
	s.cancel()
	return leaves, err
}

// TestLoadStops: a start whose context ends while it loads a tree stops
// and says so.
func TestLoadStops(t *testing.T) {
	st := jsontest.Open(t)
	commitments := make([]string, 3*loadChunk)
	for i, e := range elements(1, len(commitments)) {
		commitments[i] = field.Format(&e)
	}
	if _, err := st.AppendLeaves(t.Context(), "orb/production", commitments, time.Unix(1_800_000_000, 0)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := Open(ctx, Options{Store: cancellingStore{st, cancel}, LocalKey: mustKey(t, 16), Now: time.Now})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open = %v, want context.Canceled", err)
	}
}

// storeOf is a store holding n leaves in orb/production, in batches of
// 10,000 an hour apart ending now.
func storeOf(b *testing.B, n int) *store.DB {
	st := jsontest.Open(b)
	const batch = 10_000
	at := time.Now().Add(-time.Duration(n/batch) * time.Hour)
	for first := 0; first < n; first += batch {
		commitments := make([]string, min(batch, n-first))
		for i, e := range elements(first+1, len(commitments)) {
			commitments[i] = field.Format(&e)
		}
		if _, err := st.AppendLeaves(b.Context(), "orb/production", commitments, at); err != nil {
			b.Fatal(err)
		}
		at = at.Add(time.Hour)
	}
	return st
}

// BenchmarkOpen measures Open over a store of n leaves, reading the
// checkpoint or rebuilding without one, and the heap the loaded registry
// holds per leaf (B/leaf, after a GC, the store's own leaves excluded):
//
//	go test -run '^$' -bench Open -benchtime 3x ./registry
func BenchmarkOpen(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		st := storeOf(b, n)
		cps := newMemCheckpoints()
		key, err := semaphore.PublishedKey(16)
		if err != nil {
			b.Fatal(err)
		}
		for _, checkpoint := range []bool{true, false} {
			b.Run(fmt.Sprintf("leaves=%d/checkpoint=%t", n, checkpoint), func(b *testing.B) {
				if checkpoint {
					writeCheckpoints(b, st, cps, key)
					b.ResetTimer() // the first run's rebuild is not the open measured
				}
				o := Options{Store: st, LocalKey: key, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
				if checkpoint {
					o.Checkpoints = cps
				}
				var before, after runtime.MemStats
				for range b.N {
					runtime.GC()
					runtime.ReadMemStats(&before)
					r, err := Open(b.Context(), o)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					runtime.GC()
					runtime.ReadMemStats(&after)
					runtime.KeepAlive(r)
					r.Close()
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/leaf")
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B/leaf")
			})
		}
	}
}

// writeCheckpoints makes the checkpoints of st's trees, once.
func writeCheckpoints(b *testing.B, st Store, cps *memCheckpoints, key *semaphore.VerifyingKey) {
	if len(cps.data) > 0 {
		return
	}
	r, err := Open(b.Context(), Options{Store: st, LocalKey: key, Now: time.Now, Checkpoints: cps, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if err := r.SaveCheckpoints(b.Context()); err != nil {
		b.Fatal(err)
	}
}

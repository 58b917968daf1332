package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"worldid/record"
)

// second is hexCodec's second key of value n.
func second(n int) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(n)) }

// checkLookups asserts that Lookup finds, for every group and value, one of
// the keys the model holds it at, and nothing where it holds none.
func checkLookups(t *testing.T, st State, model map[string]string, groups []string, values int) {
	t.Helper()
	for _, g := range groups {
		for n := range values {
			want := map[string]bool{}
			for k, v := range model {
				if strings.HasPrefix(k, g) && !strings.Contains(k[len(g):], "/") && v == strconv.Itoa(n) {
					want[k] = true
				}
			}
			if k, ok := st.Lookup("packed", g, second(n)); ok != (len(want) > 0) || ok && !want[k] {
				t.Fatalf("Lookup(%s, %d) = %q, %t; want one of %v", g, n, k, ok, want)
			}
		}
	}
}

// Random puts (new keys, overwrites, values shared by several keys),
// deletes (which move the last record) and reopens keep the second index
// exact: Lookup answers as a scan of a map model would.
func TestLookupFollowsModel(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Codecs: testCodecs}
	db := mustOpen(t, dir, opts)
	defer func() { db.Close() }()
	groups := []string{"g/", "h/", "i/j/"}
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := range 4000 {
		g := groups[rng.IntN(len(groups))]
		key := g + fmt.Sprintf("%064x", rng.IntN(300))
		if rng.IntN(3) == 0 {
			del(t, db, "packed", key)
			delete(model, key)
		} else {
			v := strconv.Itoa(rng.IntN(200))
			put(t, db, "packed", key, json.RawMessage(v))
			model[key] = v
		}
		if step%1000 == 999 {
			checkLookups(t, db.base, model, groups, 200)
			db.Close()
			db = mustOpen(t, dir, opts)
			checkLookups(t, db.base, model, groups, 200)
		}
	}
	st, err := db.Copy()
	if err != nil {
		t.Fatal(err)
	}
	checkLookups(t, st, model, groups, 200)
}

// Tx.Lookup sees the Tx's own writes and the queued writes of Updates not
// yet durable, and not what they deleted or changed.
func TestTxLookupSeesQueuedWrites(t *testing.T) {
	db, journal := openFaulty(t, t.TempDir(), Options{Codecs: testCodecs})
	defer db.Close()
	put(t, db, "packed", packedKey("g", 1), json.RawMessage("10"))
	put(t, db, "packed", packedKey("g", 2), json.RawMessage("20"))
	gate, entered := make(chan struct{}), make(chan struct{})
	journal.set(func(f *faultyFile) { f.gate, f.entered = gate, entered })
	queued := make(chan error, 1)
	go func() {
		queued <- db.Update(context.Background(), func(tx *Tx) error {
			tx.Delete("packed", packedKey("g", 1))
			if err := tx.Put("packed", packedKey("g", 2), 21); err != nil {
				return err
			}
			return tx.Put("packed", packedKey("g", 3), 30)
		})
	}()
	<-entered // the Update is queued, its fsync held
	check := func(tx *Tx, n int, want string) {
		t.Helper()
		if k, ok := tx.Lookup("packed", "g/", second(n)); k != want || ok != (want != "") {
			t.Errorf("Lookup(%d) = %q, %t; want %q", n, k, ok, want)
		}
	}
	read, checked := make(chan error, 1), make(chan struct{})
	go func() {
		read <- db.Update(context.Background(), func(tx *Tx) error {
			defer close(checked)
			check(tx, 10, "")
			check(tx, 20, "")
			check(tx, 21, packedKey("g", 2))
			check(tx, 30, packedKey("g", 3))
			if err := tx.Put("packed", packedKey("g", 4), 40); err != nil {
				return err
			}
			check(tx, 40, packedKey("g", 4))
			tx.Delete("packed", packedKey("g", 3))
			check(tx, 30, "")
			if _, ok := tx.Lookup("packed", "h/", second(40)); ok {
				t.Error("Lookup found a key of another group")
			}
			return nil
		})
	}()
	<-checked
	journal.set(func(f *faultyFile) { f.gate, f.entered = nil, nil })
	close(gate)
	if err := errors.Join(<-queued, <-read); err != nil {
		t.Fatal(err)
	}
}

// Concurrent Updates that each write a row under a second key unless
// Lookup finds one: exactly one writes.
func TestLookupBeforeWriteIsUnique(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{Codecs: testCodecs})
	defer db.Close()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			errs[i] = db.Update(context.Background(), func(tx *Tx) error {
				if _, ok := tx.Lookup("packed", "g/", second(7)); ok {
					return record.ErrExists
				}
				return tx.Put("packed", packedKey("g", i), 7)
			})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, record.ErrExists) {
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d Updates wrote value 7, want 1", won)
	}
}

// Open drops the rows Options.Obsolete names, from memory and, by
// rewriting the snapshot, from the files; the other rows stay.
func TestOpenDropsObsoleteRows(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{Codecs: testCodecs})
	put(t, db, "packed", packedKey("g", 1), json.RawMessage("1"))
	put(t, db, "packed", packedKey("g", 2), json.RawMessage("2"))
	put(t, db, "plain", "a", "keep")
	put(t, db, "plain", "b", "drop")
	db.Close()
	odd := func(_ State, _, v string) bool { return v == "1" || v == `"drop"` }
	opts := Options{Codecs: testCodecs, Obsolete: map[string]func(State, string, string) bool{"packed": odd, "plain": odd}}
	db = mustOpen(t, dir, opts)
	want := map[string]map[string]string{"packed": {packedKey("g", 2): "2"}, "plain": {"a": `"keep"`}}
	checkState(t, db, want)
	if db.records != 2 {
		t.Fatalf("record count %d, want 2", db.records)
	}
	db.Close()
	db = mustOpen(t, dir, Options{Codecs: testCodecs})
	defer db.Close()
	checkState(t, db, want)
	if snap, err := os.ReadFile(snapshotPath(dir)); err != nil || strings.Contains(string(snap), "drop") {
		t.Fatalf("the snapshot keeps a dropped row (%v)", err)
	}
}

// renamedHex is hexCodec under a new name, which reads what it wrote as
// test-hex/1.
type renamedHex struct{ hexCodec }

func (renamedHex) Name() string          { return "test-hex/2" }
func (renamedHex) FormerNames() []string { return []string{"test-hex/1"} }

// A snapshot whose packed table names a codec's former name loads with it
// and is rewritten under the current name, which a build that knows only
// the former one refuses.
func TestOpenRenamesCodec(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{Codecs: testCodecs})
	put(t, db, "packed", packedKey("g", 1), json.RawMessage("1"))
	db.Close()
	db = mustOpen(t, dir, Options{Codecs: testCodecs}) // compacts the journal: test-hex/1 in the snapshot
	db.Close()
	renamed := Options{Codecs: map[string]Codec{"packed": renamedHex{}}}
	db = mustOpen(t, dir, renamed)
	want := map[string]map[string]string{"packed": {packedKey("g", 1): "1"}}
	checkState(t, db, want)
	db.Close()
	if snap := readFile(t, snapshotPath(dir)); !strings.Contains(string(snap), `"codec":"test-hex/2"`) {
		t.Fatalf("the snapshot was not rewritten under the new name:\n%s", snap)
	}
	if _, err := Open(dir, Options{Codecs: testCodecs}); err == nil || !strings.Contains(err.Error(), "test-hex/2") {
		t.Fatalf("a build with only the former codec opened the renamed snapshot: %v", err)
	}
	db = mustOpen(t, dir, renamed)
	defer db.Close()
	checkState(t, db, want)
}

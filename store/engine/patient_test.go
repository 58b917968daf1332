package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// TestPatientWritersShareFsyncs: on one processor kept busy by writers that
// compute before each write (as /token signs), UpdatePatient's writes share
// fsyncs; every write is durable and readable afterwards. Update's writes,
// each alone in its commit, are the contrast logged.
func TestPatientWritersShareFsyncs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const writers, rounds = 16, 8
	syncs := map[bool]int{}
	for _, patient := range []bool{false, true} {
		dir := t.TempDir()
		db, journal := openFaulty(t, dir, Options{})
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				buf := make([]byte, 64<<10)
				for r := range rounds {
					for range 8 {
						s := sha256.Sum256(buf) // about 0.3 ms of work in all
						buf[0] = s[0]
					}
					key := fmt.Sprintf("%d-%d", w, r)
					write := func(tx *Tx) error { return tx.Put("t", key, "1") }
					var err error
					if patient {
						err = db.UpdatePatient(context.Background(), write)
					} else {
						err = db.Update(context.Background(), write)
					}
					if err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		journal.set(func(f *faultyFile) { syncs[patient] = f.syncs })
		if n := len(dump(t, db)["t"]); n != writers*rounds {
			t.Fatalf("patient %v: %d rows, want %d", patient, n, writers*rounds)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if n := len(dump(t, mustOpen(t, dir, Options{}))["t"]); n != writers*rounds {
			t.Fatalf("patient %v: %d rows after reopening", patient, n)
		}
	}
	t.Logf("fsyncs for %d writes: Update %d, UpdatePatient %d", writers*rounds, syncs[false], syncs[true])
	if syncs[true] > writers*rounds/4 {
		t.Fatalf("UpdatePatient: %d fsyncs for %d writes, want at most a quarter", syncs[true], writers*rounds)
	}
}

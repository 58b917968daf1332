package store

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"worldid/backup"
)

// BenchmarkVerifyBurst replays the store's part of a verify burst: a store
// holding 200,000 nullifiers of one action records 44,000 new ones (10 s
// of `worldid bench verify` at about 4,400/s) from 64 writers. It reports
// the live heap per stored nullifier before the burst, how much the live
// heap grew per new nullifier (after a GC), and how much heap the runtime
// held from the OS at the end of the burst beyond what it held before
// (HeapSys − HeapReleased: the part of the RSS that is heap), in MiB, and
// the same after debug.FreeOSMemory (a GC that returns every free page;
// the state before the burst is measured the same way).
//
//	go test -run '^$' -bench VerifyBurst -benchtime 1x ./store
func BenchmarkVerifyBurst(b *testing.B) {
	const stored, burst, writers = 200_000, 44_000, 64
	at := time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC)
	for range b.N {
		dir := b.TempDir()
		if err := Restore(dir, false, func(emit backup.Emit) error {
			for i := range stored {
				if err := emit(backup.TableNullifiers, backup.Nullifier{RPID: "rp_0123456789abcdef", Environment: "production",
					Action: "vote", Nullifier: fmt.Sprintf("0x%064x", i+1), CreatedAt: at, Count: 1}); err != nil {
					return err
				}
			}
			return nil
		}, nil); err != nil {
			b.Fatal(err)
		}
		base := heapAfterGC()
		db := mustOpen(b, dir, Options{})
		debug.FreeOSMemory()
		before := heapStats()
		live0 := before.HeapAlloc
		var next atomic.Int64
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				for i := next.Add(1); i <= burst; i = next.Add(1) {
					if _, err := db.RecordVerification(context.Background(), "rp_0123456789abcdef", "vote", "production",
						fmt.Sprintf("0x%064x", stored+i), at); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		after := heapStats()
		live := heapAfterGC()
		debug.FreeOSMemory()
		freed := heapStats()
		b.ReportMetric(float64(live0-base)/stored, "live-B/nullifier")
		b.ReportMetric(float64(live-live0)/burst, "growth-B/new-nullifier")
		b.ReportMetric(heldGrowth(before, after), "held-growth-MiB")
		b.ReportMetric(heldGrowth(before, freed), "held-after-free-MiB")
		runtime.KeepAlive(db)
		db.Close()
	}
}

// heldGrowth is how much more heap memory the runtime holds from the OS
// in to than in from, in MiB.
func heldGrowth(from, to runtime.MemStats) float64 {
	return float64(int64(to.HeapSys-to.HeapReleased)-int64(from.HeapSys-from.HeapReleased)) / (1 << 20)
}

// heapStats returns the runtime's memory statistics as they are, without
// a GC.
func heapStats() runtime.MemStats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

package engine

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchValue is a small record shaped like a stored nullifier.
var benchValue = map[string]any{"created_at": "2025-06-01T12:00:00Z", "uses": 1}

// BenchmarkDurableWrites measures acknowledged, fsynced single-record
// Updates per second with 1, 8 and 64 concurrent writers. Group commit
// should make many writers far faster than one (each op is one Update).
func BenchmarkDurableWrites(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := mustOpen(b, b.TempDir(), Options{})
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Go(func() {
					for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
						key := strconv.FormatInt(i, 10)
						err := db.Update(context.Background(), func(tx *Tx) error {
							return tx.Put("bench", key, benchValue)
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
			if err := db.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// recoveryRecords is the journal length of BenchmarkRecovery1M.
const recoveryRecords = 1_000_000

// BenchmarkRecovery1M measures Open on a journal of a million records (one
// nullifier-like put per line, no snapshot): replay, then the compaction into
// a snapshot. It also reports the CPU time Open used (all threads, GC
// included: a better guide than wall time on a shared machine) and the heap
// the recovered state occupies. Run it with -benchtime=1x: building the
// fixture takes a few seconds.
func BenchmarkRecovery1M(b *testing.B) {
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		writeRecoveryJournal(b, journalPath(dir), recoveryRecords)
		runtime.GC()
		cpu := cpuTime(b)
		b.StartTimer()
		db := mustOpen(b, dir, Options{})
		b.StopTimer()
		b.ReportMetric((cpuTime(b) - cpu).Seconds(), "cpu-s")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "MiB-heap")
		if db.records != recoveryRecords {
			b.Fatalf("recovered %d records, want %d", db.records, recoveryRecords)
		}
		db.Close()
	}
}

func writeRecoveryJournal(b *testing.B, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 1; i <= n; i++ {
		key := fmt.Sprintf("0x%064x", uint64(i)*0x9e3779b97f4a7c15)
		value := fmt.Sprintf(`{"created_at":"2025-06-01T12:00:00Z","rp":"rp_%016x","action":"vote"}`, i%97)
		w.Write(encodedLine(b, uint64(i), putChange("nullifiers", key, value)))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

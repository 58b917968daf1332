package store

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"worldid/backup"
	"worldid/record"
)

// BenchmarkOpen measures what a start costs the JSON store with n leaves
// in one tree, or n nullifiers of one action: Open (the snapshot, written
// by Restore) and, for leaves, Leaves from index 0 as the registry reads
// them. It reports CPU time per row (all threads, GC included; steadier
// than wall time on a shared machine) and the heap the open store holds
// per row after a GC. Run it with -benchtime 1x (the fill takes seconds):
//
//	go test -run '^$' -bench Open -benchtime 1x ./store
func BenchmarkOpen(b *testing.B) {
	for _, kind := range []string{"leaves", "nullifiers"} {
		for _, n := range []int{100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s=%d", kind, n), func(b *testing.B) { benchmarkOpen(b, kind, n) })
		}
	}
}

func benchmarkOpen(b *testing.B, kind string, n int) {
	dir := b.TempDir()
	at := time.Date(2026, 11, 28, 1, 2, 3, 456789000, time.UTC)
	err := Restore(dir, false, func(emit backup.Emit) error {
		for i := range n {
			var err error
			if kind == "leaves" {
				err = emit(backup.TableLeaves, backup.Leaf{Tree: "orb/production", Leaf: record.Leaf{Index: i, Commitment: fmt.Sprintf("0x%064x", i+1), At: at}})
			} else {
				err = emit(backup.TableNullifiers, backup.Nullifier{RPID: "rp_0123456789abcdef", Environment: "production",
					Action: "vote", Nullifier: fmt.Sprintf("0x%064x", i+1), CreatedAt: at, Count: 1})
			}
			if err != nil {
				return err
			}
		}
		return nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var cpu time.Duration
	var heap uint64
	for range b.N {
		base := heapAfterGC()
		start := cpuTime(b)
		db, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if kind == "leaves" {
			leaves, err := db.Leaves(context.Background(), "orb/production", 0)
			if err != nil || len(leaves) != n {
				b.Fatalf("%d leaves, %v", len(leaves), err)
			}
		}
		cpu += cpuTime(b) - start
		heap += heapAfterGC() - base
		runtime.KeepAlive(db)
		db.Close()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/row")
	b.ReportMetric(float64(heap)/float64(b.N*n), "heap-B/row")
}

func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// cpuTime returns the user and system CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

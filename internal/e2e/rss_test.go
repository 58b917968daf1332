package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"worldid/store"
)

// BenchmarkServerRSS measures the resident memory of a real `worldid serve`
// idle on an empty data dir and after 1,000,000 stored nullifiers (design
// target: under 512 MiB). The nullifiers are written through the store's
// domain method, since a million distinct proofs cannot be made here; the
// server then loads them as it would after any restart. Run it once:
//
//	go test -run '^$' -bench ServerRSS -benchtime 1x .
func BenchmarkServerRSS(b *testing.B) {
	for _, n := range []int{0, 1_000_000} {
		b.Run(fmt.Sprintf("nullifiers=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			fillNullifiers(b, dir, n)
			for range b.N {
				p := startProc(b, dir)
				b.ReportMetric(float64(settledRSS(b, p.cmd.Process.Pid))/(1<<20), "RSS-MiB")
				p.stop(b)
			}
		})
	}
}

// fillNullifiers records n distinct nullifiers with 256 concurrent writers
// sharing group commits.
func fillNullifiers(b *testing.B, dir string, n int) {
	if n == 0 {
		return
	}
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var next atomic.Int64
	var wg sync.WaitGroup
	now := time.Now()
	for range 256 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				nullifier := fmt.Sprintf("0x%064x", i)
				if _, err := db.RecordVerification(context.Background(), "rp_0000000000000001", "bench-rss", "production", nullifier, now); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// settledRSS is the resident memory once start-up is over: two samples a
// quarter second apart within 1 % of each other (at most 10 s).
func settledRSS(b *testing.B, pid int) int64 {
	var last int64
	eventually(10*time.Second, 250*time.Millisecond, func() bool {
		prev := last
		last = rssBytes(b, pid)
		return max(last-prev, prev-last) <= prev/100
	})
	return last
}

func rssBytes(b *testing.B, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	b.Fatal("VmRSS not found")
	return 0
}

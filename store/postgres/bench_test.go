package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"worldid/store"
	"worldid/store/storetest"
)

// BenchmarkRecordVerification measures acknowledged first verifications
// (a new nullifier each) per second with 1 and 64 concurrent writers, for
// the JSON store and PostgreSQL in the same run. Both make every write
// durable (fsync; PostgreSQL's synchronous_commit as the server sets it).
// PostgreSQL runs with pgx's default pool: max(4, CPUs) connections.
func BenchmarkRecordVerification(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) storetest.VerifyBackend
	}{
		{"json", openJSON},
		{"postgres", openPostgres},
	}
	for _, be := range backends {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("store=%s/writers=%d", be.name, writers), func(b *testing.B) {
				benchVerifications(b, be.open(b), writers)
			})
		}
	}
}

func openJSON(b *testing.B) storetest.VerifyBackend {
	db, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func openPostgres(b *testing.B) storetest.VerifyBackend {
	db, _ := openFresh(b)
	return db
}

func benchVerifications(b *testing.B, s storetest.VerifyBackend, writers int) {
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range writers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				nullifier := fmt.Sprintf("0x%064x", i)
				if _, err := s.RecordVerification(ctx, "rp_00000000000000aa", "vote", "production", nullifier, now); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

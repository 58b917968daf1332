package semaphore

import (
	"crypto/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// floodAttackers keep invalid proofs (a valid proof with a changed public
// input: it costs a full check) coming during BenchmarkHonestUnderFlood.
const floodAttackers = 4

// BenchmarkHonestUnderFlood measures an honest caller's latency (ns/op,
// and the median p50-ns)
// while floodAttackers callers submit invalid proofs without pause:
// verifying directly (no batcher), through the Batcher, and through a
// Batcher that always batches (its failing batches are bisected).
func BenchmarkHonestUnderFlood(b *testing.B) {
	vc, _ := depth30Case(b)
	honest := vc.inputs.scalars()
	forged := vc.inputs.scalars()
	forged[len(forged)-1].Add(&forged[len(forged)-1], new(fr.Element).SetOne())
	for _, c := range []struct {
		name   string
		verify func(b *Batcher, in []fr.Element) bool
		adapt  bool
	}{
		{"direct", func(_ *Batcher, in []fr.Element) bool { return VerifyScalars(vc.key, vc.proof, in) }, true},
		{"batcher", func(bt *Batcher, in []fr.Element) bool { return bt.VerifyScalars(vc.key, vc.proof, in) }, true},
		{"batcher-always", func(bt *Batcher, in []fr.Element) bool { return bt.VerifyScalars(vc.key, vc.proof, in) }, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			bt := NewBatcher(rand.Reader, BatcherOptions{MaxBatch: 64})
			bt.adaptive = c.adapt
			defer bt.Close()
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range floodAttackers {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if c.verify(bt, forged) {
							b.Error("a forged proof was accepted")
						}
					}
				})
			}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if !c.verify(bt, honest) {
					b.Fatal("the honest proof was refused")
				}
				took = append(took, time.Since(start))
			}
			close(stop)
			wg.Wait()
			// The median resists the preemption spikes of a shared machine.
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
		})
	}
}

package semaphore

import (
	"io"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Batcher verifies proofs submitted by concurrent callers in batches
// (doc/design.md §5): one goroutine takes every request waiting when it becomes
// free, up to a maximum, and checks them with VerifyBatch. A lone request is
// verified at once, so batching adds no latency when the server is idle, and
// each caller gets exactly Verify's answer. Under load it lingers (fill):
// a batch smaller than the previous one waits up to lingerMax for the
// requests the previous batch's callers are about to send.
type Batcher struct {
	rand      io.Reader
	max       int
	linger    time.Duration // lingerMax outside tests
	requests  chan *batchRequest
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type batchRequest struct {
	item   batchItem
	result chan bool
}

// NewBatcher starts a batcher that reads randomizers from rand (only from
// its own goroutine) and checks at most maxBatch proofs at once. Call Close
// to stop it.
func NewBatcher(rand io.Reader, maxBatch int) *Batcher {
	return newBatcher(rand, maxBatch, lingerMax, 1)
}

// newBatcher is NewBatcher with the linger bound and the size of a
// previous batch given (tests).
func newBatcher(rand io.Reader, maxBatch int, linger time.Duration, expect int) *Batcher {
	b := &Batcher{
		rand:     rand,
		max:      max(maxBatch, 1),
		linger:   linger,
		requests: make(chan *batchRequest),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.run(expect)
	return b
}

// Verify returns Verify(vk, p, in), checked together with concurrent calls.
// After Close it verifies directly.
func (b *Batcher) Verify(vk *VerifyingKey, p *Proof, in PublicInputs) bool {
	return b.VerifyScalars(vk, p, in.scalars())
}

// VerifyScalars returns VerifyScalars(vk, p, in), checked together with
// concurrent calls of either method: one batch may mix statements and
// keys. After Close it verifies directly.
func (b *Batcher) VerifyScalars(vk *VerifyingKey, p *Proof, in []fr.Element) bool {
	req := &batchRequest{batchItem{vk, p, in}, make(chan bool, 1)}
	select {
	case b.requests <- req:
		return <-req.result
	case <-b.quit:
		return VerifyScalars(vk, p, in)
	}
}

// Close stops the batcher after the batch in progress.
func (b *Batcher) Close() {
	b.closeOnce.Do(func() { close(b.quit) })
	<-b.done
}

// lingerMax bounds the wait for a batch to grow to the previous batch's
// size. Without it, a busy server alternates a lone proof — the first of the
// previous batch's callers to come back, checked alone at the cost of about
// three batched ones on one core — with a batch of the rest; measured at 64
// closed-loop clients, two thirds of all batches held one proof. A
// client's turnaround (response, next request, parse, G2 subgroup check)
// takes a few hundred microseconds of CPU, so 64 of them on two cores
// take about 2 ms.
const lingerMax = 2 * time.Millisecond

// run serves batches; expect is the size of the batch before the first.
func (b *Batcher) run(expect int) {
	defer close(b.done)
	prev := expect
	for {
		var batch []*batchRequest
		select {
		case req := <-b.requests:
			batch = append(batch, req)
		case <-b.quit:
			return
		}
		batch = b.fill(batch, min(prev, b.max))
		prev = len(batch)
		items := make([]batchItem, len(batch))
		for i, req := range batch {
			items[i] = req.item
		}
		for i, ok := range verifyBatch(items, b.rand) {
			batch[i].result <- ok
		}
	}
}

// fill adds the requests already waiting to batch, up to the maximum, then,
// while it holds fewer than want, waits for more until lingerMax has passed.
// After a lone request want is 1, so an idle server never waits.
func (b *Batcher) fill(batch []*batchRequest, want int) []*batchRequest {
	var linger <-chan time.Time
	for len(batch) < b.max {
		select {
		case req := <-b.requests:
			batch = append(batch, req)
			continue
		default:
		}
		if len(batch) >= want {
			return batch
		}
		if linger == nil {
			t := time.NewTimer(b.linger)
			defer t.Stop()
			linger = t.C
		}
		select {
		case req := <-b.requests:
			batch = append(batch, req)
		case <-linger:
			return batch
		case <-b.quit:
			return batch
		}
	}
	return batch
}

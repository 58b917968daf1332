package semaphore

import (
	"io"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Batcher verifies proofs submitted by concurrent callers in batches
// (doc/design.md §5): one goroutine takes every request waiting when it becomes
// free, up to a maximum, and checks them with VerifyBatch. A lone request is
// verified at once, so batching adds no latency when the server is idle, and
// each caller gets exactly Verify's answer.
type Batcher struct {
	rand      io.Reader
	max       int
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
	b := &Batcher{
		rand:     rand,
		max:      max(maxBatch, 1),
		requests: make(chan *batchRequest),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.run()
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

func (b *Batcher) run() {
	defer close(b.done)
	for {
		var batch []*batchRequest
		select {
		case req := <-b.requests:
			batch = append(batch, req)
		case <-b.quit:
			return
		}
	waiting:
		for len(batch) < b.max {
			select {
			case req := <-b.requests:
				batch = append(batch, req)
			default:
				break waiting
			}
		}
		items := make([]batchItem, len(batch))
		for i, req := range batch {
			items[i] = req.item
		}
		for i, ok := range verifyBatch(items, b.rand) {
			batch[i].result <- ok
		}
	}
}

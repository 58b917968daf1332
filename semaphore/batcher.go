package semaphore

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// Batcher verifies proofs submitted by concurrent callers in batches
// (doc/design.md §5): one goroutine takes every request waiting when it becomes
// free, up to a maximum, and checks them with VerifyBatch. A lone request is
// verified at once, so batching adds no latency when the server is idle, and
// each caller gets exactly Verify's answer. Under load it lingers (fill):
// a batch smaller than the previous one waits up to lingerMax for the
// requests the previous batch's callers are about to send, so a busy
// server does not check the first of them alone. A batch of splitMin or
// more (a saturated server) hands half to an idle helper goroutine, one
// per further core, so two batches are checked at once (split).
//
// Batching pays only while invalid proofs are rare: a batch holding one is
// bisected, about 2·log2(n) combined checks per invalid proof, and every
// honest proof in it waits for that. The batcher therefore keeps a running
// fraction of invalid proofs among the last ~rateWindow it answered; above
// enterAlone (a flood of invalid proofs) each caller verifies its own
// proof alone, at once and in parallel with the others, exactly as
// without a batcher, and batching resumes once the fraction falls below
// leaveAlone.
type Batcher struct {
	rand      io.Reader
	max       int
	linger    time.Duration // lingerMax outside tests
	observe   func(size int)
	requests  chan *batchRequest
	overflow  chan []*batchRequest // half of a large batch, to an idle helper (split)
	quit      chan struct{}
	done      chan struct{}
	running   sync.WaitGroup
	closeOnce sync.Once
	rate      invalidRate
	alone     atomic.Bool
	adaptive  bool // false only in benchmarks that show the flood's cost
}

// Thresholds of the invalid-proof fraction that switch the batcher
// between batching and verifying each proof alone (hysteresis, so that a
// fraction near one threshold does not flip the mode on every batch).
// Above 1/16, a batch of 16 or more usually holds an invalid proof and is
// bisected; below 1/64 most batches hold none.
const (
	rateWindow = 64
	enterAlone = 1.0 / 16
	leaveAlone = 1.0 / 64
)

// lingerMax bounds how long a batch waits for the previous batch's callers.
const lingerMax = 2 * time.Millisecond

// splitMin is the smallest batch split shares with an idle core: 16 proofs
// on each side still cost within about 15 % per proof of a batch of 64.
const splitMin = 32

// BatcherOptions configure NewBatcher.
type BatcherOptions struct {
	MaxBatch int // proofs checked together at most; at least 1
	// ObserveBatch, if set, is called from the batcher's goroutines
	// (concurrently) with the size of every batch they check (not for
	// proofs verified alone).
	ObserveBatch func(size int)
}

type batchRequest struct {
	item   batchItem
	result chan bool
}

// NewBatcher starts a batcher that reads randomizers from rand (from its
// goroutines, one read at a time). Call Close to stop it.
func NewBatcher(rand io.Reader, o BatcherOptions) *Batcher {
	return newBatcher(rand, o, lingerMax, 1)
}

// newBatcher is NewBatcher with the linger bound and the size of a
// previous batch given (tests).
func newBatcher(rand io.Reader, o BatcherOptions, linger time.Duration, expect int) *Batcher {
	b := &Batcher{
		rand:     &lockedReader{r: rand},
		max:      max(o.MaxBatch, 1),
		linger:   linger,
		observe:  o.ObserveBatch,
		requests: make(chan *batchRequest),
		overflow: make(chan []*batchRequest),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		adaptive: true,
	}
	helpers := runtime.GOMAXPROCS(0) - 1
	b.running.Add(1 + helpers)
	go b.run(expect)
	var started sync.WaitGroup
	started.Add(helpers)
	for range helpers {
		go b.help(&started)
	}
	started.Wait() // so that the first large batch finds them
	go func() { b.running.Wait(); close(b.done) }()
	return b
}

// Verify returns Verify(vk, p, in), checked together with concurrent calls.
// After Close it verifies directly.
func (b *Batcher) Verify(vk *VerifyingKey, p *Proof, in PublicInputs) bool {
	return b.VerifyScalars(vk, p, in.scalars())
}

// VerifyScalars returns VerifyScalars(vk, p, in), checked together with
// concurrent calls of either method: one batch may mix statements and
// keys. After Close, or while invalid proofs are frequent, it verifies
// directly.
func (b *Batcher) VerifyScalars(vk *VerifyingKey, p *Proof, in []fr.Element) bool {
	if b.alone.Load() {
		ok := VerifyScalars(vk, p, in)
		b.account(1, invalidCount(ok))
		return ok
	}
	req := &batchRequest{batchItem{vk, p, in}, make(chan bool, 1)}
	select {
	case b.requests <- req:
		return <-req.result
	case <-b.quit:
		return VerifyScalars(vk, p, in)
	}
}

// Alone reports whether proofs are verified one by one now, because
// invalid proofs are frequent.
func (b *Batcher) Alone() bool { return b.alone.Load() }

// Close stops the batcher after the batch in progress.
func (b *Batcher) Close() {
	b.closeOnce.Do(func() { close(b.quit) })
	<-b.done
}

// run serves batches; expect is the size of the batch before the first.
func (b *Batcher) run(expect int) {
	defer b.running.Done()
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
		b.check(b.split(batch))
	}
}

// split hands the first half of a batch of at least splitMin proofs to an
// idle helper goroutine, if one is idle, and returns the rest: a saturated
// server then checks two batches on two cores at once, each answering its
// own callers, while the smaller batches of a lighter load stay whole (a
// batch's cost per proof falls with its size, doc/performance.md).
func (b *Batcher) split(batch []*batchRequest) []*batchRequest {
	if len(batch) < splitMin {
		return batch
	}
	half := len(batch) / 2
	select {
	case b.overflow <- batch[:half]:
		return batch[half:]
	default:
		return batch
	}
}

// help checks the halves split hands it until the batcher closes.
func (b *Batcher) help(started *sync.WaitGroup) {
	defer b.running.Done()
	started.Done()
	for {
		select {
		case batch := <-b.overflow:
			b.check(batch)
		case <-b.quit:
			return
		}
	}
}

// fill adds the requests already waiting to batch, up to the maximum, then,
// while it holds fewer than want, waits for more until b.linger has passed.
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

// check verifies one batch and answers its callers.
func (b *Batcher) check(batch []*batchRequest) {
	if b.observe != nil {
		b.observe(len(batch))
	}
	items := make([]batchItem, len(batch))
	for i, req := range batch {
		items[i] = req.item
	}
	invalid := 0
	for i, ok := range verifyBatch(items, b.rand) {
		invalid += invalidCount(ok)
		batch[i].result <- ok
	}
	b.account(len(batch), invalid)
}

// account adds n answers, invalid of them false, to the running fraction
// and switches the mode when it crosses a threshold.
func (b *Batcher) account(n, invalid int) {
	f := b.rate.add(n, invalid)
	switch {
	case !b.adaptive:
	case f > enterAlone:
		b.alone.Store(true)
	case f < leaveAlone:
		b.alone.Store(false)
	}
}

func invalidCount(ok bool) int {
	if ok {
		return 0
	}
	return 1
}

// invalidRate is an exponentially weighted fraction of invalid proofs,
// each answer weighing 1/rateWindow.
type invalidRate struct {
	mu sync.Mutex
	f  float64
}

// add counts n answers, invalid of them false, and returns the fraction.
func (r *invalidRate) add(n, invalid int) float64 {
	keep := 1.0
	for range n {
		keep *= 1 - 1.0/rateWindow
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f = r.f*keep + float64(invalid)/float64(n)*(1-keep)
	return r.f
}

// lockedReader serializes reads of the randomness source, which the
// batcher's goroutines share.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

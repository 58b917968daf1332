package semaphore

import (
	"crypto/rand"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// batchSizes is a randomizer source that records how many randomizers
// each batch drew, i.e. each batch's size.
type batchSizes struct {
	mu    sync.Mutex
	sizes []int
}

func (s *batchSizes) Read(p []byte) (int, error) {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(p)/randomizerBytes)
	s.mu.Unlock()
	return rand.Read(p)
}

func (s *batchSizes) get() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes...)
}

// submit hands an unusable item to the batcher and returns once the
// batcher has taken it; its answer arrives on the returned channel.
func submit(b *Batcher) chan bool {
	req := &batchRequest{result: make(chan bool, 1)}
	b.requests <- req
	return req.result
}

// TestBatcherLingersForTheExpectedBatch: after a batch of two, a request
// that arrives alone waits for the next one instead of being checked
// alone, as the previous batch's callers are about to come back.
func TestBatcherLingersForTheExpectedBatch(t *testing.T) {
	var sizes batchSizes
	b := newBatcher(&sizes, BatcherOptions{MaxBatch: 64}, time.Minute, 2)
	defer b.Close()
	first := submit(b) // taken: the batcher now waits for a second
	second := submit(b)
	if <-first || <-second {
		t.Fatal("unusable items verified")
	}
	if got := sizes.get(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("batch sizes %v, want [2]", got)
	}
}

// TestBatcherIdleDoesNotLinger: when the previous batch was a lone
// request, the next lone request is checked at once (the linger bound is
// a minute, so waiting would stall the test).
func TestBatcherIdleDoesNotLinger(t *testing.T) {
	var sizes batchSizes
	b := newBatcher(&sizes, BatcherOptions{MaxBatch: 64}, time.Minute, 1)
	defer b.Close()
	for range 3 {
		if <-submit(b) {
			t.Fatal("unusable item verified")
		}
	}
	if got := sizes.get(); len(got) != 3 {
		t.Fatalf("batch sizes %v, want three lone batches", got)
	}
}

// TestBatcherLingerIsBounded: a batch short of the expected size goes
// ahead once the linger bound has passed, and the expectation follows.
func TestBatcherLingerIsBounded(t *testing.T) {
	var sizes batchSizes
	b := newBatcher(&sizes, BatcherOptions{MaxBatch: 64}, time.Millisecond, 8)
	defer b.Close()
	for range 2 {
		if <-submit(b) {
			t.Fatal("unusable item verified")
		}
	}
	if got := sizes.get(); len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Fatalf("batch sizes %v, want [1 1]", got)
	}
}

// TestBatcherSplitsLargeBatches: with a second core, a batch of splitMin
// or more proofs is checked as two halves at once, every caller answered;
// a smaller batch stays whole. split hands a half over only if the helper
// is already waiting, which a fresh batcher's helper may not be yet, so a
// large batch is tried a few times.
func TestBatcherSplitsLargeBatches(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if got := batchOnce(t, splitMin-1); !slices.Equal(got, []int{splitMin - 1}) {
		t.Errorf("%d proofs: batch sizes %v, want one batch", splitMin-1, got)
	}
	var got []int
	for range 20 {
		if got = batchOnce(t, 2*splitMin); slices.Equal(got, []int{splitMin, splitMin}) {
			return
		}
	}
	t.Errorf("%d proofs: batch sizes %v, want two halves", 2*splitMin, got)
}

// batchOnce submits n proofs to a fresh batcher that expects n, waits
// for every answer and returns the sizes of the batches checked, sorted.
func batchOnce(t *testing.T, n int) []int {
	var sizes batchSizes
	b := newBatcher(&sizes, BatcherOptions{MaxBatch: 64}, time.Minute, n)
	results := make([]chan bool, n)
	for i := range results {
		results[i] = submit(b)
	}
	for _, r := range results {
		if <-r {
			t.Fatal("unusable item verified")
		}
	}
	b.Close()
	got := sizes.get()
	slices.Sort(got)
	return got
}

package refresh

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"
)

// Defaults of the proof lane (Options.ProofChecks, Options.ProofWait).
const defaultProofWait = 2 * time.Second

func defaultProofChecks() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// proofLane bounds the x-zkp-proof checks running at once. Nothing tells a
// stranger's false proof from a holder's true one before its Groth16
// equation is computed, and a stranger with fresh source addresses is not
// slowed by the per-source limit, so a flood of false proofs could take
// every core. The lane leaves at least one core to verify, sign-in and
// the rest of refresh; proofs past it wait, and one that cannot start
// within the wait is shed with 503 and Retry-After, its body never read.
type proofLane struct {
	slots   chan struct{}
	wait    time.Duration
	waiting atomic.Int64 // requests waiting for a slot
}

func newProofLane(checks int, wait time.Duration) *proofLane {
	return &proofLane{slots: make(chan struct{}, checks), wait: wait}
}

// enter waits for a slot; the caller calls the returned release when its
// check is done.
func (l *proofLane) enter(ctx context.Context) (release func(), err error) {
	select {
	case l.slots <- struct{}{}: // a free slot: no timer
		return l.release, nil
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	wait := time.NewTimer(l.wait)
	defer wait.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-wait.C:
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeServiceUnavailable,
			Message: "too many proofs are being checked; retry later", RetryAfter: 1}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *proofLane) release() { <-l.slots }

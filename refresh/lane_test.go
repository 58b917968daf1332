package refresh

import (
	"testing"
	"time"
)

// TestProofLaneSheds: with every proof check slot taken, a refresh waits
// ProofWait and is shed with 503 and Retry-After, writing nothing; once a
// slot is free the same request succeeds.
func TestProofLaneSheds(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.ProofChecks, o.ProofWait = 1, 20*time.Millisecond })
	id := identity(t, 4)
	e.signup(id, "signup-4")
	parts := []part{{name: "sub", value: sub1}}
	header := encodeProof(t, proofJSON(t, id, sub1, t0, nil))
	release, err := e.h.lane.enter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before := e.store.state(t)
	r := e.do(idCommOf(id), parts, header)
	r.expect(t, 503, CodeServiceUnavailable)
	if got := r.header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	if e.store.state(t) != before {
		t.Error("a shed request wrote to the store")
	}
	release()
	e.issued(e.do(idCommOf(id), parts, header))
}

// TestProofLaneDefault leaves a core free of proof checks on any machine
// with more than one.
func TestProofLaneDefault(t *testing.T) {
	e := newEnv(t, nil)
	if got := cap(e.h.lane.slots); got != defaultProofChecks() || got < 1 {
		t.Errorf("%d proof check slots, want %d", got, defaultProofChecks())
	}
}

// TestProofLaneReports: ProofLane counts the checks running and the
// requests waiting; Observe gets each request's outcome.
func TestProofLaneReports(t *testing.T) {
	outcomes := make(chan string, 2)
	e := newEnv(t, func(o *Options) {
		o.ProofChecks, o.ProofWait = 1, time.Minute
		o.Observe = func(outcome string) { outcomes <- outcome }
	})
	id := identity(t, 4)
	e.signup(id, "signup-4")
	release, err := e.h.lane.enter(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *result)
	go func() {
		done <- e.do(idCommOf(id), []part{{name: "sub", value: sub1}}, encodeProof(t, proofJSON(t, id, sub1, t0, nil)))
	}()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if checking, waiting := e.h.ProofLane(); checking == 1 && waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting request was not counted")
		}
		time.Sleep(time.Millisecond)
	}
	release()
	e.issued(<-done)
	if checking, waiting := e.h.ProofLane(); checking != 0 || waiting != 0 {
		t.Errorf("after the request: %d checking, %d waiting", checking, waiting)
	}
	e.do(idCommOf(id), nil, "").expect(t, 401, CodeInvalidProof)
	if a, b := <-outcomes, <-outcomes; a != "success" || b != CodeInvalidProof {
		t.Errorf("observed %q, %q", a, b)
	}
}

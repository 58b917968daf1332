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

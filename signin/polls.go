package signin

import (
	"sync"
	"time"

	"worldid/bridge/client"
)

// polls remembers, per bridge request id, when this replica last asked
// the relay and what it learned: at most one relay call per
// bridgePollInterval per sign-in, and the outcome of an answer the relay
// hands out only once. Bounded to maxPolled ids; no goroutine.
type polls struct {
	mu        sync.Mutex
	max       int
	m         map[string]pollEntry
	lastSweep time.Time
}

type pollEntry struct {
	at time.Time
	st waitState
	// answer is a wallet's answer the relay handed out whose check could
	// not finish (a store or checker failure): it is checked again on the
	// next poll instead of being lost.
	answer *client.Polled
}

func newPolls(max int) *polls { return &polls{max: max, m: map[string]pollEntry{}} }

// final states come from an answer the relay no longer has.
func final(state string) bool {
	return state == stateRefused || state == stateWalletError || state == stateGone
}

// begin reports what is known of id and whether to act now (ask the
// relay, or check a kept answer again); if so, it notes the time, so that
// concurrent polls do not repeat it.
func (p *polls) begin(id string, now time.Time) (pollEntry, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[id]
	if ok && (final(e.st.State) || now.Sub(e.at) < bridgePollInterval) {
		return e, false
	}
	if !ok && len(p.m) >= p.max {
		p.evict(now)
	}
	p.m[id] = pollEntry{at: now, st: e.st, answer: e.answer}
	return e, true
}

// end records what the call learned, and an answer to check again.
func (p *polls) end(id string, st waitState, answer *client.Polled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.m[id]; ok {
		e.st, e.answer = st, answer
		p.m[id] = e
	}
}

// evict drops the entries of sign-ins that can no longer be shown (a
// sweep at most once a second), else one arbitrary entry (it is asked
// again on its next poll; a lost final state makes its page start a fresh
// bridge request).
func (p *polls) evict(now time.Time) {
	if now.Sub(p.lastSweep) >= time.Second {
		p.lastSweep = now
		for id, e := range p.m {
			if now.Sub(e.at) > signinLifetime+finishGrace {
				delete(p.m, id)
			}
		}
	}
	if len(p.m) < p.max {
		return
	}
	for id := range p.m {
		delete(p.m, id)
		return
	}
}

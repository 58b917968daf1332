package relay

import (
	"container/list"
	"context"
	"sync"
	"time"

	"worldid/bridge"
	"worldid/record"
)

// Memory is a Store in this process's memory, bounded in entries and in
// the bytes of the envelopes it holds. Lifetimes are checked on access and
// expired entries are dropped, oldest first, on every write: all entries
// share one ttl, so the list in order of last write is also in order of
// expiry and no timer or goroutine is needed.
type Memory struct {
	mu         sync.Mutex
	byID       map[string]*list.Element // of *entry
	byExpiry   list.List                // *entry, soonest expiry first
	bytes      int
	maxEntries int
	maxBytes   int
}

type entry struct {
	id       string
	request  *bridge.Envelope
	response *bridge.Envelope
	status   bridge.Status
	expires  time.Time
}

func (e *entry) size() int {
	n := len(e.id)
	for _, env := range []*bridge.Envelope{e.request, e.response} {
		if env != nil {
			n += len(env.IV) + len(env.Payload)
		}
	}
	return n
}

// NewMemory returns an empty Memory that holds at most maxEntries ids and
// maxBytes bytes of ids and envelopes; beyond them creating a request is
// record.ErrUnavailable.
func NewMemory(maxEntries, maxBytes int) *Memory {
	return &Memory{byID: map[string]*list.Element{}, maxEntries: maxEntries, maxBytes: maxBytes}
}

// live returns id's entry if its lifetime has not ended.
func (m *Memory) live(id string, now time.Time) *entry {
	el, ok := m.byID[id]
	if !ok {
		return nil
	}
	e := el.Value.(*entry)
	if !now.Before(e.expires) {
		m.remove(el)
		return nil
	}
	return e
}

func (m *Memory) remove(el *list.Element) {
	e := m.byExpiry.Remove(el).(*entry)
	m.bytes -= e.size()
	delete(m.byID, e.id)
}

// sweep drops expired entries from the front.
func (m *Memory) sweep(now time.Time) {
	for el := m.byExpiry.Front(); el != nil && !now.Before(el.Value.(*entry).expires); el = m.byExpiry.Front() {
		m.remove(el)
	}
}

// update applies change to e (already in the list), renewing its lifetime
// and keeping the byte count.
func (m *Memory) update(e *entry, now time.Time, ttl time.Duration, change func()) {
	m.bytes -= e.size()
	change()
	m.bytes += e.size()
	e.expires = now.Add(ttl)
	m.byExpiry.MoveToBack(m.byID[e.id])
}

func (m *Memory) CreateBridgeRequest(_ context.Context, id string, req bridge.Envelope, now time.Time, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if m.live(id, now) != nil {
		return record.ErrExists
	}
	e := &entry{id: id, request: &req, status: bridge.StatusInitialized, expires: now.Add(ttl)}
	if len(m.byID) >= m.maxEntries || m.bytes+e.size() > m.maxBytes {
		return record.ErrUnavailable
	}
	m.byID[id] = m.byExpiry.PushBack(e)
	m.bytes += e.size()
	return nil
}

func (m *Memory) TakeBridgeRequest(_ context.Context, id string, now time.Time, ttl time.Duration) (bridge.Envelope, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(id, now)
	if e == nil || e.request == nil {
		return bridge.Envelope{}, record.ErrNotFound
	}
	req := *e.request
	m.update(e, now, ttl, func() { e.request, e.status = nil, bridge.StatusRetrieved })
	return req, nil
}

func (m *Memory) HasBridgeRequest(_ context.Context, id string, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(id, now)
	return e != nil && e.request != nil, nil
}

func (m *Memory) PutBridgeResponse(_ context.Context, id string, resp bridge.Envelope, now time.Time, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	e := m.live(id, now)
	switch {
	case e == nil:
		return record.ErrNotFound
	case e.response != nil:
		return record.ErrExists
	case m.bytes+len(resp.IV)+len(resp.Payload) > m.maxBytes:
		return record.ErrUnavailable
	}
	m.update(e, now, ttl, func() { e.response, e.status = &resp, bridge.StatusCompleted })
	return nil
}

func (m *Memory) TakeBridgeResponse(_ context.Context, id string, now time.Time) (bridge.Poll, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.live(id, now)
	if e == nil {
		return bridge.Poll{}, record.ErrNotFound
	}
	p := bridge.Poll{Status: e.status, Response: e.response}
	if e.response != nil {
		m.remove(m.byID[id])
	}
	return p, nil
}

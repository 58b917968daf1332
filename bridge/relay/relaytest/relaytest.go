package relaytest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/relay"
	"worldid/record"
)

const ttl = 900 * time.Second

// Run runs the suite; newStore returns an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) relay.Store) {
	for name, fn := range map[string]func(*testing.T, relay.Store){
		"lifecycle":          lifecycle,
		"collision":          collision,
		"expiry":             expiry,
		"answer before read": answerBeforeRead,
		"concurrent take":    concurrentTake,
	} {
		t.Run(name, func(t *testing.T) { fn(t, newStore(t)) })
	}
}

var (
	t0  = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	req = bridge.Envelope{IV: "cmVxdWVzdC1pdi0x", Payload: "cmVxdWVzdA=="}
	res = bridge.Envelope{IV: "cmVzcG9uc2UtaXYx", Payload: "cmVzcG9uc2U="}
)

// newID is an id no other subtest uses, on a shared database too.
func newID() string { return fmt.Sprintf("conformance-%d", time.Now().UnixNano()) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

func poll(t *testing.T, s relay.Store, id string, now time.Time, want bridge.Status) bridge.Poll {
	t.Helper()
	p, err := s.TakeBridgeResponse(context.Background(), id, now)
	if err != nil || p.Status != want {
		t.Fatalf("poll: %+v %v, want %s", p, err, want)
	}
	return p
}

func lifecycle(t *testing.T, s relay.Store) {
	ctx, id := context.Background(), newID()
	must(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl))
	if ok, err := s.HasBridgeRequest(ctx, id, t0); !ok || err != nil {
		t.Fatal("created request not there", err)
	}
	if p := poll(t, s, id, t0, bridge.StatusInitialized); p.Response != nil {
		t.Fatal("response before any answer")
	}
	got, err := s.TakeBridgeRequest(ctx, id, t0.Add(time.Second), ttl)
	if err != nil || got != req {
		t.Fatalf("take: %+v %v", got, err)
	}
	_, err = s.TakeBridgeRequest(ctx, id, t0.Add(time.Second), ttl)
	wantErr(t, err, record.ErrNotFound)
	if ok, _ := s.HasBridgeRequest(ctx, id, t0); ok {
		t.Fatal("read request still there")
	}
	poll(t, s, id, t0.Add(2*time.Second), bridge.StatusRetrieved)
	must(t, s.PutBridgeResponse(ctx, id, res, t0.Add(3*time.Second), ttl))
	wantErr(t, s.PutBridgeResponse(ctx, id, res, t0.Add(3*time.Second), ttl), record.ErrExists)
	if p := poll(t, s, id, t0.Add(4*time.Second), bridge.StatusCompleted); p.Response == nil || *p.Response != res {
		t.Fatalf("completed without the answer: %+v", p)
	}
	_, err = s.TakeBridgeResponse(ctx, id, t0.Add(4*time.Second))
	wantErr(t, err, record.ErrNotFound)
	wantErr(t, s.PutBridgeResponse(ctx, id, res, t0.Add(5*time.Second), ttl), record.ErrNotFound)
	wantErr(t, s.PutBridgeResponse(ctx, "conformance-never-created", res, t0, ttl), record.ErrNotFound)
}

func collision(t *testing.T, s relay.Store) {
	ctx, id := context.Background(), newID()
	must(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl))
	wantErr(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl), record.ErrExists)
	_, err := s.TakeBridgeRequest(ctx, id, t0, ttl)
	must(t, err)
	wantErr(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl), record.ErrExists) // retrieved is still live
	must(t, s.CreateBridgeRequest(ctx, id, req, t0.Add(ttl), ttl))             // expired: free again
}

func expiry(t *testing.T, s relay.Store) {
	ctx, id := context.Background(), newID()
	must(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl))
	// Reading renews the lifetime: still there ttl−1s after the read.
	_, err := s.TakeBridgeRequest(ctx, id, t0.Add(ttl-time.Second), ttl)
	must(t, err)
	poll(t, s, id, t0.Add(2*ttl-2*time.Second), bridge.StatusRetrieved)
	_, err = s.TakeBridgeResponse(ctx, id, t0.Add(2*ttl-time.Second))
	wantErr(t, err, record.ErrNotFound)
	wantErr(t, s.PutBridgeResponse(ctx, id, res, t0.Add(2*ttl), ttl), record.ErrNotFound)

	id2 := id + "2"
	must(t, s.CreateBridgeRequest(ctx, id2, req, t0, ttl))
	_, err = s.TakeBridgeRequest(ctx, id2, t0.Add(ttl), ttl)
	wantErr(t, err, record.ErrNotFound)
	if ok, _ := s.HasBridgeRequest(ctx, id2, t0.Add(ttl)); ok {
		t.Fatal("expired request still there")
	}
}

func answerBeforeRead(t *testing.T, s relay.Store) {
	ctx, id := context.Background(), newID()
	must(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl))
	must(t, s.PutBridgeResponse(ctx, id, res, t0, ttl))
	poll(t, s, id, t0, bridge.StatusCompleted)
	if ok, _ := s.HasBridgeRequest(ctx, id, t0); ok {
		t.Fatal("request still readable after its answer was fetched")
	}
}

func concurrentTake(t *testing.T, s relay.Store) {
	ctx, id := context.Background(), newID()
	must(t, s.CreateBridgeRequest(ctx, id, req, t0, ttl))
	must(t, s.PutBridgeResponse(ctx, id, res, t0, ttl))
	var wg sync.WaitGroup
	var mu sync.Mutex
	requests, responses := 0, 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errReq := s.TakeBridgeRequest(ctx, id, t0, ttl)
			p, errRes := s.TakeBridgeResponse(ctx, id, t0)
			mu.Lock()
			defer mu.Unlock()
			if errReq == nil {
				requests++
			}
			if errRes == nil && p.Response != nil {
				responses++
			}
		}()
	}
	wg.Wait()
	if requests > 1 || responses != 1 {
		t.Fatalf("request read %d times, answer %d times; want at most once and once", requests, responses)
	}
}

// NewServer serves a relay on Memory over loopback HTTP until t ends, for
// the clients' tests.
func NewServer(t *testing.T) *httptest.Server {
	t.Helper()
	rl, err := relay.New(relay.Options{Store: relay.NewMemory(100, 1<<20), Now: time.Now,
		Rand: rand.NewChaCha8([32]byte{}), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	rl.Register(mux, "")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

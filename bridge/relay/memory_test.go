package relay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/relay"
	"worldid/bridge/relay/relaytest"
	"worldid/record"
)

func TestMemoryConformance(t *testing.T) {
	relaytest.Run(t, func(*testing.T) relay.Store { return relay.NewMemory(1000, 1<<20) })
}

func TestMemoryBounds(t *testing.T) {
	ctx, now := context.Background(), time.Unix(1e9, 0)
	env := bridge.Envelope{IV: "aaaaaaaaaaaaaaaa", Payload: "bbbbbbbbbbbbbbbbbbbbbbbb"}
	m := relay.NewMemory(2, 1<<20)
	for _, id := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} {
		if err := m.CreateBridgeRequest(ctx, id, env, now, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.CreateBridgeRequest(ctx, "cccccccccccccccc", env, now, time.Minute); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("third entry: %v", err)
	}
	// Expired entries make room without anyone reading them.
	if err := m.CreateBridgeRequest(ctx, "cccccccccccccccc", env, now.Add(time.Minute), time.Minute); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	small := relay.NewMemory(100, 60)
	if err := small.CreateBridgeRequest(ctx, "aaaaaaaaaaaaaaaa", env, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := small.CreateBridgeRequest(ctx, "bbbbbbbbbbbbbbbb", env, now, time.Minute); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("over the byte budget: %v", err)
	}
	if err := small.PutBridgeResponse(ctx, "aaaaaaaaaaaaaaaa", env, now, time.Minute); !errors.Is(err, record.ErrUnavailable) {
		t.Fatalf("answer over the byte budget: %v", err)
	}
}

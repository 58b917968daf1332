package client

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"worldid/bridge"
	"worldid/bridge/relay/relaytest"
)

var sample = bridge.Request{AppID: "app_staging_0123", Action: "", Signal: "0x00ab", VerificationLevel: "device"}

func TestRoundTrip(t *testing.T) {
	srv, ctx := relaytest.NewServer(t), context.Background()
	var c Client
	created, err := c.Create(ctx, srv.URL, rand.NewChaCha8([32]byte{}), sample)
	if err != nil {
		t.Fatal(err)
	}
	conn := bridge.Connect{Base: bridge.StagingVerify, RequestID: created.RequestID, Key: created.Key, Bridge: srv.URL}
	parsed, err := bridge.ParseConnect(conn.String())
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.Poll(ctx, srv.URL, created.RequestID, created.Key); err != nil || p.Status != bridge.StatusInitialized {
		t.Fatalf("poll: %+v %v", p, err)
	}
	got, err := c.Fetch(ctx, parsed)
	if err != nil || got.AppID != sample.AppID || got.Signal != sample.Signal {
		t.Fatalf("fetch: %+v %v", got, err)
	}
	if _, err := c.Fetch(ctx, parsed); !errors.Is(err, ErrGone) {
		t.Fatalf("second fetch: %v", err)
	}
	if p, err := c.Poll(ctx, srv.URL, created.RequestID, created.Key); err != nil || p.Status != bridge.StatusRetrieved {
		t.Fatalf("poll: %+v %v", p, err)
	}
	answer := bridge.Response{Proof: "0x01", MerkleRoot: "0x02", NullifierHash: "0x03", VerificationLevel: "device"}
	if err := c.Answer(ctx, parsed, rand.NewChaCha8([32]byte{}), answer); err != nil {
		t.Fatal(err)
	}
	var se *StatusError
	if err := c.Answer(ctx, parsed, rand.NewChaCha8([32]byte{}), answer); !errors.As(err, &se) || se.Status != http.StatusConflict {
		t.Fatalf("second answer: %v", err)
	}
	p, err := c.Poll(ctx, srv.URL, created.RequestID, created.Key)
	if err != nil || p.Status != bridge.StatusCompleted || p.Kind != bridge.KindV3 || p.Response != answer {
		t.Fatalf("completed: %+v %v", p, err)
	}
	if _, err := c.Poll(ctx, srv.URL, created.RequestID, created.Key); !errors.Is(err, ErrGone) {
		t.Fatalf("replayed poll: %v", err)
	}
}

func TestWrongKey(t *testing.T) {
	srv, ctx := relaytest.NewServer(t), context.Background()
	var c Client
	created, err := c.Create(ctx, srv.URL, rand.NewChaCha8([32]byte{}), sample)
	if err != nil {
		t.Fatal(err)
	}
	other := created.Key
	other[3] ^= 0x80
	if _, err := c.Fetch(ctx, bridge.Connect{RequestID: created.RequestID, Key: other, Bridge: srv.URL}); !errors.Is(err, bridge.ErrOpen) {
		t.Fatalf("fetch with another key: %v", err)
	}
	conn := bridge.Connect{RequestID: created.RequestID, Key: other, Bridge: srv.URL}
	if err := c.Answer(ctx, conn, rand.NewChaCha8([32]byte{}), bridge.Response{ErrorCode: bridge.ErrCodeGenericError}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Poll(ctx, srv.URL, created.RequestID, created.Key); !errors.Is(err, bridge.ErrOpen) {
		t.Fatalf("answer under another key: %v", err)
	}
}

func TestBounds(t *testing.T) {
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"initialized","response":null,"pad":"` + strings.Repeat("x", 2048) + `"}`))
	}))
	defer huge.Close()
	c := Client{MaxBody: 1024}
	if _, err := c.Poll(context.Background(), huge.URL, "0123456789abcdef", bridge.Key{}); err == nil || !strings.Contains(err.Error(), "over 1024 bytes") {
		t.Fatalf("oversized answer: %v", err)
	}
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stuck.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Poll(ctx, stuck.URL, "0123456789abcdef", bridge.Key{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stuck relay: %v", err)
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"request_id":"../x"}`))
	}))
	defer bad.Close()
	if _, err := c.Create(context.Background(), bad.URL, rand.NewChaCha8([32]byte{}), sample); !errors.Is(err, bridge.ErrRequestID) {
		t.Fatalf("bad id from relay: %v", err)
	}
}

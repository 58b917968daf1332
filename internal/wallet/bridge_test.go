package wallet

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/bridge/relay/relaytest"
)

// TestBridgeReadAndRefuse: the wallet reads a request from its connect URL
// (once), shows where the user returns to, and a refusal reaches the
// requester as its error code.
func TestBridgeReadAndRefuse(t *testing.T) {
	ctx, relayURL := context.Background(), relaytest.NewServer(t).URL
	var requester client.Client
	sent := bridge.Request{AppID: "app_staging_0123456789abcdef0123456789abcdef", Signal: "0x00ab", VerificationLevel: "orb", ReturnToURL: "https://rp.example/wait?x=1"}
	created, err := requester.Create(ctx, relayURL, rand.NewChaCha8([32]byte{}), sent)
	if err != nil {
		t.Fatal(err)
	}
	link := bridge.Connect{Base: bridge.ProductionVerify, RequestID: created.RequestID, Key: created.Key, Bridge: relayURL}.String()
	w := &Wallet{HTTP: NewHTTPClient()}
	got, err := w.ReadBridgeRequest(ctx, link+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.Request.AppID != sent.AppID || got.ReturnHost() != "rp.example" || got.Environment() != "staging" {
		t.Fatalf("read %+v (return host %q, environment %q)", got.Request, got.ReturnHost(), got.Environment())
	}
	if _, err := w.ReadBridgeRequest(ctx, link); !errors.Is(err, client.ErrGone) {
		t.Fatalf("second read: %v", err)
	}
	if _, err := w.ReadBridgeRequest(ctx, link+"&x=1"); !errors.Is(err, bridge.ErrConnectURL) {
		t.Fatalf("non-canonical link: %v", err)
	}
	if _, err := w.AnswerBridgeRequest(ctx, BridgeRequest{Connect: got.Connect, Request: bridge.Request{Signal: "yes"}}, "", rand.NewChaCha8([32]byte{})); err == nil {
		t.Fatal("an unhashed signal was proven")
	}
	if err := w.RefuseBridgeRequest(ctx, got, bridge.ErrCodeVerificationRejected, rand.NewChaCha8([32]byte{})); err != nil {
		t.Fatal(err)
	}
	p, err := requester.Poll(ctx, relayURL, created.RequestID, created.Key)
	if err != nil || p.Kind != bridge.KindError || p.Response.ErrorCode != bridge.ErrCodeVerificationRejected {
		t.Fatalf("requester got %+v %v", p, err)
	}
}

func TestBridgeEnvironment(t *testing.T) {
	for want, r := range map[string]BridgeRequest{
		"production": {Request: bridge.Request{AppID: "app_0123"}},
		"staging":    {Connect: bridge.Connect{Base: bridge.StagingVerify}, Request: bridge.Request{AppID: "app_0123"}},
		"sandbox":    {Request: bridge.Request{AppID: "app_staging_1", Environment: "sandbox"}},
	} {
		if got := r.Environment(); got != want {
			t.Errorf("%+v: %s, want %s", r, got, want)
		}
	}
}

package wallet

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"worldid/bridge"
	"worldid/bridge/client"
	"worldid/field"
)

// BridgeRequest is a World ID request the wallet read through a Wallet
// Bridge relay, named by a connect URL (the text of a scanned QR code):
// what it shows the user and what it proves.
type BridgeRequest struct {
	Connect bridge.Connect
	Request bridge.Request
}

// ReturnHost is the host the World App would send the user back to after
// approving (return_to), or "".
func (r BridgeRequest) ReturnHost() string {
	for _, s := range []string{r.Request.ReturnToURL, r.Connect.ReturnTo} {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			return u.Host
		}
	}
	return ""
}

// Environment is the tree environment to prove in: the request's IDKit 4
// environment, else staging for a staging app or a staging connect URL,
// else production.
func (r BridgeRequest) Environment() string {
	switch {
	case r.Request.Environment != "":
		return r.Request.Environment
	case strings.HasPrefix(r.Request.AppID, "app_staging_") || r.Connect.Base == bridge.StagingVerify:
		return "staging"
	}
	return "production"
}

func (w *Wallet) bridgeClient() *client.Client { return &client.Client{HTTP: w.HTTP} }

// ReadBridgeRequest parses a connect URL and fetches and decrypts its
// request from the relay it names. The relay hands a request out once:
// after this, only this wallet can answer it.
func (w *Wallet) ReadBridgeRequest(ctx context.Context, connectURL string) (BridgeRequest, error) {
	conn, err := bridge.ParseConnect(strings.TrimSpace(connectURL))
	if err != nil {
		return BridgeRequest{}, err
	}
	req, err := w.bridgeClient().Fetch(ctx, conn)
	if err != nil {
		return BridgeRequest{}, fmt.Errorf("wallet: reading the bridge request: %w", err)
	}
	return BridgeRequest{Connect: conn, Request: req}, nil
}

// AnswerBridgeRequest proves for the request (its app, action and already
// hashed signal) from the tree level (empty: the level the request asks
// for), encrypts the World ID 3.0 answer under the request's key and a
// fresh IV from rand, and puts it at the relay. It returns the answer.
func (w *Wallet) AnswerBridgeRequest(ctx context.Context, r BridgeRequest, level string, rand io.Reader) (bridge.Response, error) {
	resp, err := w.ProveBridgeRequest(ctx, r, level)
	if err != nil {
		return resp, err
	}
	return resp, w.SendBridgeAnswer(ctx, r, rand, resp)
}

// ProveBridgeRequest makes the World ID 3.0 answer to r without sending
// it (SendBridgeAnswer sends it).
func (w *Wallet) ProveBridgeRequest(ctx context.Context, r BridgeRequest, level string) (bridge.Response, error) {
	signalHash, err := field.ParsePrefixedHex(r.Request.Signal)
	if err != nil {
		return bridge.Response{}, fmt.Errorf("wallet: the request's signal is not a hashed signal: %w", err)
	}
	item, err := w.ProveHash(ctx, ProofRequest{AppID: r.Request.AppID, Action: r.Request.Action,
		Identifier: cmp.Or(level, r.Request.VerificationLevel), Environment: r.Environment()}, signalHash)
	if err != nil {
		return bridge.Response{}, err
	}
	return bridge.Response{Proof: item.Proof, MerkleRoot: item.MerkleRoot, NullifierHash: item.Nullifier, VerificationLevel: item.Identifier}, nil
}

// RefuseBridgeRequest answers with an error code, as the World App does
// when the user declines (bridge.ErrCodeVerificationRejected).
func (w *Wallet) RefuseBridgeRequest(ctx context.Context, r BridgeRequest, code string, rand io.Reader) error {
	return w.SendBridgeAnswer(ctx, r, rand, bridge.Response{ErrorCode: code})
}

// SendBridgeAnswer encrypts resp under the request's key and a fresh IV
// from rand and puts it at the relay.
func (w *Wallet) SendBridgeAnswer(ctx context.Context, r BridgeRequest, rand io.Reader, resp bridge.Response) error {
	if err := w.bridgeClient().Answer(ctx, r.Connect, rand, resp); err != nil {
		return fmt.Errorf("wallet: answering through the bridge: %w", err)
	}
	return nil
}

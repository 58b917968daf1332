package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"worldid/bridge"
)

// DefaultMaxBody bounds what a client reads from a relay: above the
// relay's own body bound (bridge/relay DefaultMaxBody), as World's relay
// stores bodies of a few KiB.
const DefaultMaxBody = 256 << 10

// Client is a bridge client; the zero value uses http.DefaultClient.
type Client struct {
	HTTP    *http.Client
	MaxBody int64 // 0: DefaultMaxBody
}

// ErrGone: the relay does not know the id (unknown, expired or consumed).
var ErrGone = errors.New("bridge client: request unknown, expired or already consumed")

// StatusError is any other unexpected answer of a relay.
type StatusError struct {
	Method, Path string
	Status       int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("bridge client: %s %s: HTTP %d", e.Method, e.Path, e.Status)
}

// Created is a new bridge request: its id at the relay, and the key the
// requester keeps.
type Created struct {
	RequestID string
	Key       bridge.Key
}

// Create encrypts req under a fresh key and IV drawn from rand and posts
// it to the relay at bridgeURL.
func (c *Client) Create(ctx context.Context, bridgeURL string, rand io.Reader, req bridge.Request) (Created, error) {
	key, err := bridge.NewKey(rand)
	if err != nil {
		return Created{}, err
	}
	env, err := seal(key, rand, req)
	if err != nil {
		return Created{}, err
	}
	var out bridge.Created
	if err := c.do(ctx, http.MethodPost, bridgeURL, "/request", env, http.StatusOK, &out); err != nil {
		return Created{}, err
	}
	id, err := bridge.NormalizeRequestID(out.RequestID)
	if err != nil || id != out.RequestID {
		return Created{}, fmt.Errorf("bridge client: relay returned request id %q: %w", out.RequestID, bridge.ErrRequestID)
	}
	return Created{RequestID: id, Key: key}, nil
}

// Polled is a request's state; Response and Kind are set when Status is
// completed.
type Polled struct {
	Status   bridge.Status
	Response bridge.Response
	Kind     bridge.Kind
}

// Poll asks the relay for id's answer and decrypts it with key. A
// completed answer is handed out once: the caller must act on it.
func (c *Client) Poll(ctx context.Context, bridgeURL, id string, key bridge.Key) (Polled, error) {
	var p bridge.Poll
	if err := c.do(ctx, http.MethodGet, bridgeURL, "/response/"+url.PathEscape(id), nil, http.StatusOK, &p); err != nil {
		return Polled{}, err
	}
	switch p.Status {
	case bridge.StatusInitialized, bridge.StatusRetrieved:
		return Polled{Status: p.Status}, nil
	case bridge.StatusCompleted:
		if p.Response == nil {
			return Polled{}, errors.New("bridge client: completed without a response")
		}
		pt, err := key.Open(*p.Response)
		if err != nil {
			return Polled{}, err
		}
		r, kind, err := bridge.ParseResponse(pt)
		if err != nil {
			return Polled{}, err
		}
		return Polled{Status: p.Status, Response: r, Kind: kind}, nil
	}
	return Polled{}, fmt.Errorf("bridge client: unknown status %q", p.Status)
}

// Fetch reads (and so consumes) the request a connect URL names.
func (c *Client) Fetch(ctx context.Context, conn bridge.Connect) (bridge.Request, error) {
	var env bridge.Envelope
	if err := c.do(ctx, http.MethodGet, conn.BridgeURL(), "/request/"+url.PathEscape(conn.RequestID), nil, http.StatusOK, &env); err != nil {
		return bridge.Request{}, err
	}
	pt, err := conn.Key.Open(env)
	if err != nil {
		return bridge.Request{}, err
	}
	return bridge.ParseRequest(pt)
}

// Answer encrypts resp under the connect URL's key and a fresh IV from
// rand and puts it at the relay.
func (c *Client) Answer(ctx context.Context, conn bridge.Connect, rand io.Reader, resp bridge.Response) error {
	env, err := seal(conn.Key, rand, resp)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, conn.BridgeURL(), "/response/"+url.PathEscape(conn.RequestID), env, http.StatusCreated, nil)
}

func seal(key bridge.Key, rand io.Reader, v any) (bridge.Envelope, error) {
	pt, err := json.Marshal(v)
	if err != nil {
		return bridge.Envelope{}, err
	}
	return key.Seal(rand, pt)
}

// do sends body (JSON, or none) to base+path and decodes a JSON answer of
// status want into out (nil: the body is ignored).
func (c *Client) do(ctx context.Context, method, base, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("bridge client: %s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, c.maxBody()+1))
	switch {
	case err != nil:
		return fmt.Errorf("bridge client: %s %s: %w", method, path, err)
	case res.StatusCode == http.StatusNotFound:
		return ErrGone
	case res.StatusCode != want:
		return &StatusError{Method: method, Path: strings.SplitN(path, "/", 3)[1], Status: res.StatusCode}
	case int64(len(raw)) > c.maxBody():
		return fmt.Errorf("bridge client: %s %s: answer over %d bytes", method, path, c.maxBody())
	case out == nil:
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("bridge client: %s %s: %w", method, path, err)
	}
	return nil
}

func (c *Client) maxBody() int64 {
	if c.MaxBody > 0 {
		return c.MaxBody
	}
	return DefaultMaxBody
}

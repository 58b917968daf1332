package bridge

import (
	"errors"
	"net/url"
	"strings"
)

// DefaultURL is World's public bridge, the one the World App requires
// (IDKit BridgeUrl::DEFAULT, idkit-js DEFAULT_BRIDGE_URL). A connect URL
// names its bridge (b) only when it is another one.
const DefaultURL = "https://bridge.worldcoin.org"

// Connect bases: IDKit's Environment::connect_base_url (rust/core/src/bridge.rs).
const (
	ProductionVerify = "https://world.org/verify"
	StagingVerify    = "https://staging.world.org/verify"
	SandboxVerify    = "https://sandbox.world.org/verify"
)

// Connect is what a connect URL carries: the wallet finds the request at
// Bridge under RequestID and decrypts it with Key.
type Connect struct {
	Base      string // ProductionVerify, StagingVerify or SandboxVerify
	RequestID string // as the relay returned it
	Key       Key
	Bridge    string // the relay's base URL; "" or DefaultURL for World's bridge
	ReturnTo  string // optional: where the World App sends the user after approving (IDKit 4)
}

// ErrConnectURL reports a connect URL that is not in the canonical form
// String writes.
var ErrConnectURL = errors.New("bridge: not a canonical connect URL (https://world.org/verify?t=wld&i=…&k=…[&return_to=…][&b=…])")

// String is the connect URL in IDKit's layout: t, i, k, then return_to and
// b when present, each value percent-encoded except the unreserved
// characters (RFC 3986 §2.3), as IDKit's urlencoding::encode and
// encodeURIComponent (for base64 and URLs) do.
func (c Connect) String() string {
	var b strings.Builder
	b.WriteString(c.Base)
	b.WriteString("?t=wld&i=")
	b.WriteString(escape(c.RequestID))
	b.WriteString("&k=")
	b.WriteString(escape(c.Key.Base64()))
	if c.ReturnTo != "" {
		b.WriteString("&return_to=")
		b.WriteString(escape(c.ReturnTo))
	}
	if c.Bridge != "" && c.Bridge != DefaultURL {
		b.WriteString("&b=")
		b.WriteString(escape(c.Bridge))
	}
	return b.String()
}

// BridgeURL is the relay the wallet talks to.
func (c Connect) BridgeURL() string {
	if c.Bridge == "" {
		return DefaultURL
	}
	return c.Bridge
}

// escape percent-encodes every byte but A-Z a-z 0-9 - _ . ~; QueryEscape
// differs from that only in writing a space as '+'.
func escape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// ParseConnect reads a connect URL (the text of a scanned QR code) and
// accepts only the canonical form String writes: one of the three bases,
// t=wld, a valid request id, a 32-byte key, an absolute http(s) return_to
// and bridge URL (the bridge without path, query or fragment). Anything
// else (another order, a repeated or unknown parameter, another encoding)
// is ErrConnectURL: a wallet acts on exactly what a requester could have
// written.
func ParseConnect(s string) (Connect, error) {
	base, query, ok := strings.Cut(s, "?")
	if !ok || (base != ProductionVerify && base != StagingVerify && base != SandboxVerify) {
		return Connect{}, ErrConnectURL
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return Connect{}, ErrConnectURL
	}
	c := Connect{Base: base, RequestID: values.Get("i"), ReturnTo: values.Get("return_to"), Bridge: values.Get("b")}
	if values.Get("t") != "wld" {
		return Connect{}, ErrConnectURL
	}
	if _, err := NormalizeRequestID(c.RequestID); err != nil {
		return Connect{}, ErrConnectURL
	}
	if c.Key, err = ParseKey(values.Get("k")); err != nil {
		return Connect{}, ErrConnectURL
	}
	if c.ReturnTo != "" && !isHTTPURL(c.ReturnTo, false) || c.Bridge != "" && !isHTTPURL(c.Bridge, true) {
		return Connect{}, ErrConnectURL
	}
	if c.String() != s {
		return Connect{}, ErrConnectURL
	}
	return c, nil
}

// isHTTPURL: an absolute http(s) URL with a host and no userinfo or
// fragment; a bridge (bare) also has no path and no query.
func isHTTPURL(s string, bare bool) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	return !bare || (u.Path == "" && u.RawQuery == "" && !u.ForceQuery)
}

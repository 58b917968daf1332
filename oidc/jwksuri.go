package oidc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// A client's documents are fetched bounded and guarded against
// server-side request forgery: https only, no redirects, public unicast
// addresses only (checked on the dialed address, so a name that resolves
// to a private one is refused too), a 5-second deadline and a 64 KiB body.
// They are its jwks_uri (OIDC Core §9 with OIDC Registration §2), at each
// private_key_jwt authentication, and its sector_identifier_uri (OIDC Core
// §8.1, sector.go), when the operator registers it.
const (
	jwksFetchTimeout = 5 * time.Second
	maxJWKSBody      = 64 << 10
)

var errForbiddenAddress = errors.New("the URL resolves to an address that is not public")

// newJWKSClient is the guarded HTTP client of a client's documents.
func newJWKSClient() *http.Client {
	dialer := &net.Dialer{Timeout: jwksFetchTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !publicAddress(ap.Addr()) {
			return errForbiddenAddress
		}
		return nil
	}}
	return &http.Client{
		Timeout:       jwksFetchTimeout,
		Transport:     &http.Transport{DialContext: dialer.DialContext, Proxy: nil, TLSHandshakeTimeout: jwksFetchTimeout},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") },
	}
}

// publicAddress: a global unicast address outside the private, loopback,
// link-local, CGNAT (RFC 6598) and unique-local ranges.
func publicAddress(a netip.Addr) bool {
	a = a.Unmap()
	cgnat := netip.MustParsePrefix("100.64.0.0/10")
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !cgnat.Contains(a)
}

// fetchJWKS reads the JSON Web Key Set at uri.
func (p *Provider) fetchJWKS(ctx context.Context, uri string) (string, error) {
	body, err := p.fetchClientDocument(ctx, "jwks_uri", uri)
	return string(body), err
}

// fetchClientDocument reads the JSON document at a client's URL, which
// its errors call name.
func (p *Provider) fetchClientDocument(ctx context.Context, name, uri string) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s must be an https URL", name)
	}
	ctx, cancel := context.WithTimeout(ctx, jwksFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.jwksClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s", name, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBody+1))
	if err != nil || len(body) > maxJWKSBody {
		return nil, fmt.Errorf("%s body unreadable or over 64 KiB", name)
	}
	return body, nil
}

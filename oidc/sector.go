package oidc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"worldid/internal/leaf/strictjson"
)

// An app's sector identifier (OIDC Core §8.1; doc/interfaces.md §2.4.2):
// an https URL, fetched as the app's other documents are (jwksuri.go:
// SSRF-guarded, 5 s, 64 KiB), whose document is a JSON array of redirect
// URIs that must list every redirect URI the app registers. The operator
// registers it (package admin calls CheckSectorIdentifier at creation,
// import and every change of the app's redirect URIs); the provider never
// fetches it at sign-in. What the sector means for subjects is
// record.App.ProofAppID.

// CheckSectorIdentifier fetches the sector identifier document at uri and
// checks that it lists every one of redirectURIs (exact strings, as
// /authorize compares them). Its errors say what to fix.
func (p *Provider) CheckSectorIdentifier(ctx context.Context, uri string, redirectURIs []string) error {
	body, err := p.fetchClientDocument(ctx, "sector_identifier_uri", uri)
	if err != nil {
		return err
	}
	listed, err := parseSectorDocument(body)
	if err != nil {
		return fmt.Errorf("sector_identifier_uri: %w", err)
	}
	for _, r := range redirectURIs {
		if !listed[r] {
			return fmt.Errorf("sector_identifier_uri: the document does not list the redirect URI %q", r)
		}
	}
	return nil
}

// parseSectorDocument reads a sector identifier document: exactly one
// non-empty JSON array (strict JSON: UTF-8, no duplicate names, nothing
// after it) whose elements are absolute URIs without a fragment, the form
// of a redirect URI (RFC 6749 §3.1.2). It returns the set of them.
func parseSectorDocument(body []byte) (map[string]bool, error) {
	doc, err := strictjson.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("the document is not JSON: %w", err)
	}
	if doc.Kind() != strictjson.Array {
		return nil, errors.New("the document is not a JSON array of redirect URIs")
	}
	listed := map[string]bool{}
	for e := range doc.Elements() {
		s, ok := e.Unquote()
		if !ok {
			return nil, errors.New("an element of the document is not a string")
		}
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || strings.Contains(s, "#") {
			return nil, fmt.Errorf("the element %.80q is not an absolute URI without a fragment", s)
		}
		listed[s] = true
	}
	if len(listed) == 0 {
		return nil, errors.New("the document lists no redirect URI")
	}
	return listed, nil
}

package oidc

import (
	"cmp"
	"context"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"worldid/record"
)

// Key schedule (doc/design.md §4). A successor key is published keyPrepublish
// before it signs, so that relying parties that cache the JWKS for up to
// jwksMaxAge already know it; a retired key stays published keyRetention
// after its successor starts signing, which exceeds the token lifetime.
const (
	rsaBits          = 2048
	keyPrepublish    = 24 * time.Hour
	keyRetention     = 24 * time.Hour
	keyCheckInterval = 10 * time.Minute // Run's period of maintenance
	// keyReloadInterval bounds how long a key another replica revoked
	// (or added at once, as a revocation's replacement) takes to be
	// dropped (or used) here: one small read per period.
	keyReloadInterval = 5 * time.Second
	jwksMaxAge        = 3600 // seconds, Cache-Control of /jwks
)

// signingKey is a parsed record.SigningKey with its encoded JWS headers.
type signingKey struct {
	rec        record.SigningKey
	priv       *rsa.PrivateKey
	seal       cipher.AEAD       // sealed tokens (seal.go, derive.go)
	ec         *ecdsa.PrivateKey // ES256 access tokens, derived from priv
	jwk        jwk               // the RSA key
	ecJWK      jwk               // the EC key
	headers    map[string]string // typ → base64url protected header
	activateAt time.Time
}

// keySet is what signing and verification need at one instant; it is
// rebuilt when the stored keys change or the instant leaves [from, until).
type keySet struct {
	signer      *signingKey
	byHeader    map[string]*signingKey // base64url protected header → the published key that writes it
	published   map[string]*signingKey // kid (RSA and EC) → published key, for sealed tokens
	jwks        []byte                 // pre-encoded /jwks body
	from, until time.Time
}

func (s *keySet) validAt(t time.Time) bool {
	return !t.Before(s.from) && t.Before(s.until)
}

// keyRing holds the keys loaded from the store and the current keySet.
type keyRing struct {
	mu   sync.Mutex    // serializes loads and rebuilds
	keys []*signingKey // sorted by activateAt, then kid
	set  atomic.Pointer[keySet]
}

// keySet returns the key set for now, rebuilding it without store I/O when
// a key has become active or expired since the last build.
func (p *Provider) keySet() *keySet {
	now := p.now()
	if s := p.keys.set.Load(); s != nil && s.validAt(now) {
		return s
	}
	p.keys.mu.Lock()
	defer p.keys.mu.Unlock()
	if s := p.keys.set.Load(); s != nil && s.validAt(now) {
		return s
	}
	s := buildKeySet(p.keys.keys, now)
	p.keys.set.Store(s)
	return s
}

// buildKeySet selects the signer and the published keys at t. Keys are
// sorted by activateAt; New guarantees at least one.
func buildKeySet(keys []*signingKey, t time.Time) *keySet {
	s := &keySet{byHeader: map[string]*signingKey{}, published: map[string]*signingKey{}, until: farFuture}
	active := activeIndex(keys, t)
	if active >= 0 {
		s.from = keys[active].activateAt
	} else {
		// The clock is before every key (it moved back): sign with the
		// oldest key rather than fail, until that key's own start.
		active = 0
		s.until = keys[0].activateAt
	}
	s.signer = keys[active]
	var entries []jwk
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		if i > active {
			s.until = minTime(s.until, k.activateAt) // a pending key starts signing
		}
		if i < active {
			expiry := keys[i+1].activateAt.Add(keyRetention)
			if !t.Before(expiry) {
				continue
			}
			s.until = minTime(s.until, expiry)
		}
		for _, h := range k.headers {
			s.byHeader[h] = k
		}
		s.published[k.jwk.Kid] = k
		s.published[k.ecJWK.Kid] = k
		entries = append(entries, k.jwk, k.ecJWK)
	}
	s.jwks, _ = json.Marshal(struct {
		Keys []jwk `json:"keys"`
	}{entries}) // a slice of flat string structs always encodes
	s.jwks = append(s.jwks, '\n')
	return s
}

var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// activeIndex is the index of the key that signs at t (the newest with
// activateAt ≤ t), or -1.
func activeIndex(keys []*signingKey, t time.Time) int {
	for i := len(keys) - 1; i >= 0; i-- {
		if !keys[i].activateAt.After(t) {
			return i
		}
	}
	return -1
}

// RotateKeys publishes a new signing key now that starts signing after the
// pre-publication time (24 h). If a successor is already scheduled it
// changes nothing: rotating is idempotent until that key is active. It is
// the admin API's key rotation.
func (p *Provider) RotateKeys(ctx context.Context) error {
	now := p.now()
	return p.scheduleSuccessor(ctx, now, now.Add(keyPrepublish))
}

// Run keeps the automatic schedule until ctx ends: every keyCheckInterval
// it reloads the keys (other replicas may have added some), schedules the
// successor keyPrepublish before the rotation period ends, deletes keys
// past their retention and prunes expired sign-in state from the store.
// Errors are logged and retried next period.
func (p *Provider) Run(ctx context.Context) {
	t := time.NewTicker(keyCheckInterval)
	defer t.Stop()
	reload := time.NewTicker(keyReloadInterval)
	defer reload.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := p.maintain(ctx); err != nil {
				p.log.Error("oidc: maintenance", "err", err)
			}
		case <-reload.C:
			if err := p.loadKeys(ctx); err != nil {
				p.log.Error("oidc: reload signing keys", "err", err)
			}
		}
	}
}

// RevokeKey removes the key kid now (the admin API's emergency rotation):
// it leaves the JWKS and every token it signed stops verifying. If it was
// the signing key (or the last one), a new key replaces it in the same
// store operation and signs at once, without pre-publication: relying
// parties that cached the JWKS refetch it on an unknown kid. The store
// keeps the kid and the time. A kid revoked before is an error wrapping
// record.ErrKeyRevoked, another unknown kid record.ErrNotFound.
func (p *Provider) RevokeKey(ctx context.Context, kid string) error {
	if err := p.loadKeys(ctx); err != nil {
		return err
	}
	now := p.now()
	keys := p.loadedKeys()
	active := max(activeIndex(keys, now), 0)
	i := slices.IndexFunc(keys, func(k *signingKey) bool { return k.rec.ID == kid })
	var replacement *record.SigningKey
	if i >= 0 && (i == active || len(keys) == 1) {
		rec, err := newSigningKey(now, now)
		if err != nil {
			return err
		}
		replacement = &rec
	}
	if err := p.store.RevokeSigningKey(ctx, record.RevokedKey{ID: kid, RevokedAt: now}, replacement); err != nil {
		return fmt.Errorf("oidc: revoke signing key %q: %w", kid, err)
	}
	return p.loadKeys(ctx)
}

// KeyList describes every stored key at p.now(), oldest first, then every
// revoked key, in the order of revocation.
func (p *Provider) KeyList(ctx context.Context) ([]record.KeyInfo, error) {
	if err := p.loadKeys(ctx); err != nil {
		return nil, err
	}
	revoked, err := p.store.RevokedKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("oidc: load revoked keys: %w", err)
	}
	keys := p.loadedKeys()
	active := activeIndex(keys, p.now())
	out := make([]record.KeyInfo, len(keys), len(keys)+len(revoked))
	for i, k := range keys {
		info := record.KeyInfo{KID: k.rec.ID, State: "active", CreatedAt: k.rec.CreatedAt.UTC(), ActivatesAt: k.activateAt.UTC()}
		switch {
		case i > active:
			info.State = "pending"
		case i < active:
			info.State = "retiring"
		}
		if i+1 < len(keys) {
			info.RetiresAt = keys[i+1].activateAt.Add(keyRetention).UTC()
		}
		out[i] = info
	}
	slices.SortFunc(revoked, func(a, b record.RevokedKey) int {
		return cmp.Or(a.RevokedAt.Compare(b.RevokedAt), strings.Compare(a.ID, b.ID))
	})
	for _, r := range revoked {
		out = append(out, record.KeyInfo{KID: r.ID, State: "revoked", RevokedAt: r.RevokedAt.UTC()})
	}
	return out, nil
}

// maintain is one period of Run.
func (p *Provider) maintain(ctx context.Context) error {
	if err := p.store.PruneExpired(ctx, p.now()); err != nil {
		return fmt.Errorf("oidc: prune: %w", err)
	}
	return p.maintainKeys(ctx)
}

// maintainKeys runs one step of the schedule at p.now().
func (p *Provider) maintainKeys(ctx context.Context) error {
	now := p.now()
	if err := p.loadKeys(ctx); err != nil {
		return err
	}
	if len(p.keys.keys) == 0 {
		// First start: nothing was ever published, so the key signs now.
		if err := p.addKey(ctx, now, time.Time{}); err != nil {
			return err
		}
	}
	keys := p.loadedKeys()
	active := activeIndex(keys, now)
	if active == len(keys)-1 && active >= 0 {
		due := keys[active].activateAt.Add(p.rotation)
		if !now.Before(due.Add(-keyPrepublish)) {
			at := due
			if earliest := now.Add(keyPrepublish); at.Before(earliest) {
				at = earliest
			}
			if err := p.scheduleSuccessor(ctx, now, at); err != nil {
				return err
			}
		}
	}
	return p.deleteRetired(ctx, now)
}

// scheduleSuccessor adds a key activating at `at` unless one is pending.
func (p *Provider) scheduleSuccessor(ctx context.Context, now, at time.Time) error {
	if err := p.loadKeys(ctx); err != nil {
		return err
	}
	keys := p.loadedKeys()
	if len(keys) > 0 && keys[len(keys)-1].activateAt.After(now) {
		return nil
	}
	return p.addKey(ctx, at, now)
}

// addKey generates a key activating at `at` and stores it unless the store
// already has a key activating after pendingAfter; either way it reloads.
func (p *Provider) addKey(ctx context.Context, at, pendingAfter time.Time) error {
	rec, err := newSigningKey(p.now(), at)
	if err != nil {
		return err
	}
	if err := p.store.AddSigningKey(ctx, rec, pendingAfter); err != nil && !errors.Is(err, record.ErrExists) {
		return fmt.Errorf("oidc: store signing key: %w", err)
	}
	return p.loadKeys(ctx)
}

// deleteRetired removes keys whose retention has ended.
func (p *Provider) deleteRetired(ctx context.Context, now time.Time) error {
	keys := p.loadedKeys()
	deleted := false
	for i := 0; i+1 < len(keys); i++ {
		if now.Before(keys[i+1].activateAt.Add(keyRetention)) {
			break
		}
		err := p.store.DeleteSigningKey(ctx, keys[i].rec.ID)
		if err != nil && !errors.Is(err, record.ErrNotFound) {
			return fmt.Errorf("oidc: delete signing key: %w", err)
		}
		deleted = true
	}
	if deleted {
		return p.loadKeys(ctx)
	}
	return nil
}

func (p *Provider) loadedKeys() []*signingKey {
	p.keys.mu.Lock()
	defer p.keys.mu.Unlock()
	return p.keys.keys
}

// loadKeys reads the stored keys, parses new ones and drops the key set.
func (p *Provider) loadKeys(ctx context.Context) error {
	recs, err := p.store.SigningKeys(ctx)
	if err != nil {
		return fmt.Errorf("oidc: load signing keys: %w", err)
	}
	p.keys.mu.Lock()
	defer p.keys.mu.Unlock()
	known := map[string]*signingKey{}
	for _, k := range p.keys.keys {
		known[k.rec.ID] = k
	}
	keys := make([]*signingKey, 0, len(recs))
	for _, rec := range recs {
		k, ok := known[rec.ID]
		if !ok {
			if k, err = parseSigningKey(rec); err != nil {
				return err
			}
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b *signingKey) int {
		if c := a.activateAt.Compare(b.activateAt); c != 0 {
			return c
		}
		return strings.Compare(a.rec.ID, b.rec.ID)
	})
	if len(keys) == 0 && len(p.keys.keys) > 0 {
		return errors.New("oidc: every signing key vanished from the store")
	}
	p.keys.keys = keys
	p.keys.set.Store(nil)
	return nil
}

// newSigningKey generates an RSA key. crypto/rsa draws from the system's
// secure source regardless of the reader passed (Go ≥ 1.24), so Options.Rand
// is not used here.
func newSigningKey(now, at time.Time) (record.SigningKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, rsaBits)
	if err != nil {
		return record.SigningKey{}, fmt.Errorf("oidc: generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return record.SigningKey{}, fmt.Errorf("oidc: encode signing key: %w", err)
	}
	return record.SigningKey{ID: thumbprint(&priv.PublicKey), PrivateKey: der, CreatedAt: now, ActivateAt: at}, nil
}

// parseSigningKey checks a stored key: PKCS #8 RSA of rsaBits bits whose
// ID is its thumbprint.
func parseSigningKey(rec record.SigningKey) (*signingKey, error) {
	parsed, err := x509.ParsePKCS8PrivateKey(rec.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc: signing key %q: %w", rec.ID, err)
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok || priv.N.BitLen() != rsaBits {
		return nil, fmt.Errorf("oidc: signing key %q is not an RSA-%d key", rec.ID, rsaBits)
	}
	if thumbprint(&priv.PublicKey) != rec.ID {
		return nil, fmt.Errorf("oidc: signing key %q: ID is not the key's thumbprint", rec.ID)
	}
	seal, err := newSealer(rec.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc: signing key %q: %w", rec.ID, err)
	}
	ec, err := accessTokenKey(rec.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("oidc: signing key %q: %w", rec.ID, err)
	}
	k := &signingKey{rec: rec, priv: priv, seal: seal, ec: ec, activateAt: rec.ActivateAt,
		jwk: publicJWK(&priv.PublicKey, rec.ID), ecJWK: ecJWK(&ec.PublicKey)}
	k.headers = map[string]string{
		typIDToken:     encodeHeader(algRS256, rec.ID, typIDToken),
		typAccessToken: encodeHeader(algES256, k.ecJWK.Kid, typAccessToken),
	}
	return k, nil
}

// jwk is one entry of the JWKS (RFC 7517 §4): an RSA key (RFC 7518
// §6.3.1) or a P-256 key (§6.2.1).
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
}

// ecJWK is the public JWK of an access-token key; its kid is its RFC 7638
// thumbprint.
func ecJWK(pub *ecdsa.PublicKey) jwk {
	raw, _ := pub.Bytes() // a P-256 key always encodes: 0x04 ‖ X ‖ Y
	enc := base64.RawURLEncoding
	x, y := enc.EncodeToString(raw[1:33]), enc.EncodeToString(raw[33:])
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + x + `","y":"` + y + `"}`))
	return jwk{Kty: "EC", Use: "sig", Alg: algES256, Kid: enc.EncodeToString(sum[:]), Crv: "P-256", X: x, Y: y}
}

func publicJWK(pub *rsa.PublicKey, kid string) jwk {
	n, e := jwkNE(pub)
	return jwk{Kty: "RSA", Use: "sig", Alg: algRS256, Kid: kid, N: n, E: e}
}

// jwkNE is the base64url big-endian modulus and exponent without leading
// zeros (RFC 7518 §6.3.1.1–2).
func jwkNE(pub *rsa.PublicKey) (n, e string) {
	enc := base64.RawURLEncoding
	return enc.EncodeToString(pub.N.Bytes()), enc.EncodeToString(big.NewInt(int64(pub.E)).Bytes())
}

// thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url): the hash
// of the required members in lexicographic order, no whitespace.
func thumbprint(pub *rsa.PublicKey) string {
	n, e := jwkNE(pub)
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

package oidc

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"worldid/internal/leaf/strictjson"
	"worldid/internal/oauth"
)

// Scopes (doc/interfaces.md §2.1) in the canonical order of a granted scope.
const (
	scopeOpenID  = "openid"
	scopeEmail   = "email"
	scopeProfile = "profile"
)

var knownScopes = [...]string{scopeOpenID, scopeEmail, scopeProfile}

// grant is what one successful sign-in authorizes: who, for which client,
// with which scope. Codes and tokens carry it.
type grant struct {
	id       string // grant id: revocation unit shared by a code and its tokens
	clientID string
	scope    string // granted scopes, space-separated, canonical order
	nonce    string
	sub      string // nullifier hash, "0x" + 64 lowercase hex
	level    string // orb or device
	authTime time.Time
	profile  string // the app's record.App.Profile
}

func hasScope(scope, want string) bool {
	for s := range strings.SplitSeq(scope, " ") {
		if s == want {
			return true
		}
	}
	return false
}

// userClaims are the user information of doc/interfaces.md §2.4, limited to the
// granted scopes (doc/design.md §4). They appear in ID tokens and /userinfo.
// The two legacy claims are the v1 contract's only (§2.4.1).
func (p *Provider) userClaims(sub, level, scope, profile string) map[string]any {
	c := map[string]any{"sub": sub}
	if !currentProfile(profile) {
		likely := "weak"
		if level == oauth.LevelOrb {
			likely = "strong"
		}
		c[p.betaClaim] = map[string]string{"likely_human": likely, "credential_type": level}
		c[p.v1Claim] = map[string]string{"verification_level": level}
	}
	if hasScope(scope, scopeEmail) {
		c["email"] = sub + "@" + p.emailDomain
	}
	if hasScope(scope, scopeProfile) {
		c["name"] = "World ID User"
		c["given_name"] = "World ID"
		c["family_name"] = "User"
	}
	return c
}

// idTokenClaims are the ID token claims of doc/design.md §4. code and
// accessToken are the values issued alongside in the same response; their
// hashes are included where OIDC Core §3.3.2.11 requires them (hybrid and
// implicit responses), so pass "" for the token endpoint.
//
// The current profile (doc/interfaces.md §2.4.1) adds acr and amr, drops the
// two legacy claims and lives idTokenLifetimeCurrent.
func (p *Provider) idTokenClaims(g grant, now time.Time, jti, code, accessToken string) map[string]any {
	c := p.userClaims(g.sub, g.level, g.scope, g.profile)
	lifetime := tokenLifetime
	if currentProfile(g.profile) {
		c["acr"] = acrOf(g.level)
		c["amr"] = []string{amrPoP}
		lifetime = idTokenLifetimeCurrent
	}
	c["iss"] = p.issuer
	c["aud"] = g.clientID
	c["iat"] = now.Unix()
	c["exp"] = now.Add(lifetime).Unix()
	c["auth_time"] = g.authTime.Unix()
	c["jti"] = jti
	if g.nonce != "" {
		c["nonce"] = g.nonce
	}
	if code != "" {
		c["c_hash"] = halfHash(code)
	}
	if accessToken != "" {
		c["at_hash"] = halfHash(accessToken)
	}
	return c
}

// halfHash is at_hash / c_hash for RS256: base64url of the left half of
// SHA-256 of the ASCII value (OIDC Core §3.2.2.10, §3.3.2.11).
func halfHash(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:len(sum)/2])
}

// accessClaims are the claims of an access token (RFC 9068 §2.2 plus the
// verification level and grant id that /userinfo and revocation need).
type accessClaims struct {
	Iss      string `json:"iss"`
	Sub      string `json:"sub"`
	Aud      string `json:"aud"`
	Exp      int64  `json:"exp"`
	Iat      int64  `json:"iat"`
	AuthTime int64  `json:"auth_time"`
	Jti      string `json:"jti"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	Level    string `json:"verification_level"`
	GrantID  string `json:"grant_id"`
}

func newAccessClaims(iss string, g grant, now time.Time, jti string) accessClaims {
	return accessClaims{
		Iss: iss, Sub: g.sub, Aud: g.clientID, ClientID: g.clientID,
		Iat: now.Unix(), Exp: now.Add(tokenLifetime).Unix(), AuthTime: g.authTime.Unix(),
		Jti: jti, Scope: g.scope, Level: g.level, GrantID: g.id,
	}
}

// maxClockSkew tolerates replicas whose clocks differ slightly in iat.
const maxClockSkew = 60 // seconds

// parseAccessToken verifies an access token issued here and returns its
// claims: signature and header (jwt.go), then exact iss, aud = client_id,
// now < exp, iat not in the future. Revocation is checked by the caller.
func (p *Provider) parseAccessToken(token string) (accessClaims, error) {
	var c accessClaims
	payload, err := verifyJWT(token, typAccessToken, p.keySet().byHeader)
	if err != nil {
		return c, err
	}
	if err := strictjson.Decode(payload, &c); err != nil {
		return c, fmt.Errorf("jwt: claims: %w", err)
	}
	now := p.now().Unix()
	switch {
	case c.Iss != p.issuer:
		return c, fmt.Errorf("jwt: iss %q is not this issuer", c.Iss)
	case c.Aud == "" || c.Aud != c.ClientID:
		return c, errors.New("jwt: aud is not the token's client")
	case now >= c.Exp:
		return c, errors.New("jwt: token expired")
	case c.Iat > now+maxClockSkew:
		return c, errors.New("jwt: token issued in the future")
	case c.Sub == "" || c.GrantID == "" || (c.Level != oauth.LevelOrb && c.Level != oauth.LevelDevice):
		return c, errors.New("jwt: claims incomplete")
	}
	return c, nil
}

package refresh

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/credential"
	"worldid/record"
)

// spentProof is the replay key of the request's x-zkp-proof, remembered
// with the success it authorizes and until its timestamp leaves the window
// on every replica (Handler.spentUntil).
type spentProof struct {
	key     string
	expires time.Time
}

// issue answers an authorized refresh. An identity that holds a valid
// credential gets that same credential back unless Options.Reissue, or
// unless the request carries a PCP the held credential was not issued
// for (its claims[0] must come from that hashes.json); else a new one is
// built, signed, self-verified and recorded. genesis_issued_at
// is the time of the identity's first issuance (doc/interfaces.md §2.5), so
// neither re-issuance nor a re-imported signup moves it.
func (h *Handler) issue(ctx context.Context, env *envelope, f *form, claim0 fr.Element, spent spentProof, now time.Time) (*response, error) {
	past, err := h.o.Store.Refreshes(ctx, env.idCommID)
	if err != nil {
		return nil, err
	}
	genesis := time.Unix(now.Unix(), 0).UTC()
	if len(past) > 0 {
		// A concurrent first refresh may have pinned another sub since
		// checkPinnedSub looked; its credential is not this request's.
		if past[0].Sub != f.subID {
			return nil, subMismatch()
		}
		genesis = past[0].At
		if held := past[len(past)-1]; !h.o.Reissue && coveredBy(held, f) && h.stillValid(held, now) {
			return h.returnHeld(ctx, held, spent)
		}
	}
	c, data, err := h.buildCredential(f.sub, claim0, genesis, now)
	if err != nil {
		return nil, err
	}
	rec := record.Refresh{
		IDCommitment:   env.idCommID,
		Sub:            f.subID,
		At:             time.Unix(now.Unix(), 0).UTC(),
		PCPDigest:      f.pcpDigestHex(),
		CredentialID:   c.ID,
		Credential:     string(data),
		ProofKey:       spent.key,
		ProofExpiresAt: spent.expires,
	}
	switch err := h.o.Store.RecordRefresh(ctx, rec); {
	case errors.Is(err, record.ErrSubMismatch):
		return nil, subMismatch()
	case errors.Is(err, record.ErrPCPReused):
		return nil, pcpFailed("pcp_reuse", "this hashes.json already served another identity commitment")
	case errors.Is(err, record.ErrExists):
		return nil, replayed()
	case err != nil:
		return nil, err
	}
	h.o.Log.Info("refresh: credential issued", "credential_id", c.ID, "with_pcp", rec.PCPDigest != "")
	return success(data), nil
}

// coveredBy reports whether the held credential answers the request's
// evidence: a request without a PCP is answered by any credential (a PCP
// credential is not downgraded), one with a PCP only by a credential
// issued for that same hashes.json.
func coveredBy(held record.Refresh, f *form) bool {
	digest := f.pcpDigestHex()
	return digest == "" || held.PCPDigest == digest
}

// stillValid reports whether a recorded credential can be returned again:
// recorded with its bytes (older versions recorded none), issued by
// the current key, and not expired.
func (h *Handler) stillValid(held record.Refresh, now time.Time) bool {
	if held.Credential == "" {
		return false
	}
	c, err := credential.Parse([]byte(held.Credential))
	return err == nil && c.Verify(h.issuer) && uint64(now.Unix()) < c.ExpiresAt
}

// returnHeld answers a repeat refresh with the credential the identity
// holds. The proof is remembered, so it cannot be replayed.
func (h *Handler) returnHeld(ctx context.Context, held record.Refresh, spent spentProof) (*response, error) {
	err := h.o.Store.UseProofOnce(ctx, spent.key, spent.expires)
	if errors.Is(err, record.ErrExists) {
		return nil, replayed()
	} else if err != nil {
		return nil, err
	}
	h.o.Log.Info("refresh: credential already held, returned unchanged", "credential_id", held.CredentialID)
	return success([]byte(held.Credential)), nil
}

func replayed() *Error { return invalidProof("x-zkp-proof was already used") }

func success(credentialJSON []byte) *response {
	return &response{
		Success:    true,
		Credential: base64.StdEncoding.EncodeToString(credentialJSON),
		Message:    "Credential refreshed successfully",
	}
}

// buildCredential makes the PoH credential (doc/design.md §7): the configured
// schema, sub as submitted (see doc.go), genesis_issued_at the given time
// of first issuance, expires_at now + validity, claims[0] given and every other claim 0,
// associated_data_hash 0, a random id. It signs it and checks its own
// output as doc/crypto.md §f "Signing" step 3 recommends: re-serialize,
// re-parse, re-hash and verify.
func (h *Handler) buildCredential(sub, claim0 fr.Element, firstIssued, now time.Time) (*credential.Credential, []byte, error) {
	id, err := randomID(h.o.Rand)
	if err != nil {
		return nil, nil, err
	}
	genesis, err := unixSeconds(firstIssued)
	if err != nil {
		return nil, nil, err
	}
	expires, err := unixSeconds(now.Add(h.o.Validity))
	if err != nil {
		return nil, nil, err
	}
	c := &credential.Credential{
		ID:              id,
		IssuerSchemaID:  h.o.SchemaID,
		Sub:             sub,
		GenesisIssuedAt: genesis,
		ExpiresAt:       expires,
	}
	c.Claims[0] = claim0
	if err := c.Sign(h.o.IssuerKey); err != nil {
		return nil, nil, err
	}
	data, err := c.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	back, err := credential.Parse(data)
	if err != nil || !back.Verify(h.issuer) { // Verify re-hashes the parsed credential
		return nil, nil, fmt.Errorf("refresh: issued credential failed self-verification (parse error: %v)", err)
	}
	return c, data, nil
}

func randomID(r io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("refresh: reading credential id: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]), nil
}

// unixSeconds is t as a u64 of the credential; times before 1970 have none.
func unixSeconds(t time.Time) (uint64, error) {
	if t.Unix() < 0 {
		return 0, fmt.Errorf("refresh: time %v is before 1970", t)
	}
	return uint64(t.Unix()), nil
}

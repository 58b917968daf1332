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

// issue builds, signs and self-verifies the credential, then records the
// refresh; only a recorded credential is returned.
func (h *Handler) issue(ctx context.Context, env *envelope, f *form, signup record.Signup, claim0 fr.Element, now time.Time) (*response, error) {
	c, data, err := h.buildCredential(f.sub, claim0, signup.VerifiedAt, now)
	if err != nil {
		return nil, err
	}
	rec := record.Refresh{
		IDCommitment: env.idCommID,
		Sub:          f.subID,
		At:           time.Unix(now.Unix(), 0).UTC(),
		PCPDigest:    f.pcpDigestHex(),
		CredentialID: c.ID,
	}
	switch err := h.o.Store.RecordRefresh(ctx, rec); {
	case errors.Is(err, record.ErrSubMismatch):
		return nil, subMismatch()
	case errors.Is(err, record.ErrPCPReused):
		return nil, pcpFailed("pcp_reuse", "this hashes.json already served another identity commitment")
	case err != nil:
		return nil, err
	}
	h.o.Log.Info("refresh: credential issued", "credential_id", c.ID, "with_pcp", rec.PCPDigest != "")
	return &response{
		Success:    true,
		Credential: base64.StdEncoding.EncodeToString(data),
		Message:    "Credential refreshed successfully",
	}, nil
}

// buildCredential makes the PoH credential (design.md §7): the configured
// schema, sub as submitted (see doc.go), genesis_issued_at the enrollment
// time, expires_at now + validity, claims[0] given and every other claim 0,
// associated_data_hash 0, a random id. It signs it and checks its own
// output as crypto.md §f "Signing" step 3 recommends: re-serialize,
// re-parse, re-hash and verify.
func (h *Handler) buildCredential(sub, claim0 fr.Element, verifiedAt, now time.Time) (*credential.Credential, []byte, error) {
	id, err := randomID(h.o.Rand)
	if err != nil {
		return nil, nil, err
	}
	genesis, err := unixSeconds(verifiedAt)
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

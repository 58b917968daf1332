package vectors

import "testing"

// WorldID4 is the structure of world_id_4.json: the World ID 4.0 proofs,
// inputs and anchors of worldcoin/world-id-protocol's contract tests (see
// testdata/SOURCES.md), shared by the tests of oprfproof, registry and
// verify.
type WorldID4 struct {
	VerifierCompressed struct {
		Proof        [4]string `json:"proof"`
		PublicInputs []string  `json:"public_inputs"`
		ExpectValid  *bool     `json:"expect_valid"`
	} `json:"verifier_compressed"`
	WorldIDVerifier struct {
		Anchors struct {
			Root                   string    `json:"root"`
			TreeDepth              int       `json:"tree_depth"`
			IssuerSchemaID         uint64    `json:"issuer_schema_id"`
			IssuerPubkey           [2]string `json:"issuer_pubkey"`
			RPID                   string    `json:"rp_id"`
			OPRFPubkey             [2]string `json:"oprf_pubkey"`
			OtherPubkey            [2]string `json:"other_pubkey"`
			MinExpirationThreshold int64     `json:"min_expiration_threshold"`
			Now                    int64     `json:"now"`
		} `json:"anchors"`
		Uniqueness struct {
			Nullifier    string    `json:"nullifier"`
			Action       string    `json:"action"`
			Nonce        string    `json:"nonce"`
			SignalHash   string    `json:"signal_hash"`
			ExpiresAtMin uint64    `json:"expires_at_min"`
			Proof        [5]string `json:"proof"`
			ExpectValid  *bool     `json:"expect_valid"`
		} `json:"uniqueness"`
		Session struct {
			SessionID        string    `json:"session_id"`
			Nonce            string    `json:"nonce"`
			SignalHash       string    `json:"signal_hash"`
			SessionNullifier [2]string `json:"session_nullifier"`
			ExpiresAtMin     uint64    `json:"expires_at_min"`
			Proof            [5]string `json:"proof"`
			ExpectValid      *bool     `json:"expect_valid"`
		} `json:"session"`
		BrokenProof struct {
			ProofWords  [4]string `json:"proof_words"`
			ExpectValid *bool     `json:"expect_valid"`
		} `json:"broken_proof"`
	} `json:"world_id_verifier"`
}

// LoadWorldID4 loads world_id_4.json.
func LoadWorldID4(t testing.TB) *WorldID4 {
	t.Helper()
	var f WorldID4
	Load(t, "world_id_4.json", &f)
	return &f
}

package semaphore

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/vectors"
)

// poseidon1Semaphore is the `semaphore` member of poseidon1.json.
type poseidon1Semaphore struct {
	Identity struct {
		IdentityNullifier string `json:"identity_nullifier"`
		IdentityTrapdoor  string `json:"identity_trapdoor"`
		Secret            string `json:"secret"`
		SecretHex         string `json:"secret_hex"`
		Commitment        string `json:"commitment"`
		CommitmentHex     string `json:"commitment_hex"`
	} `json:"identity"`
	ZeroSubtreeHashes struct {
		ValuesHex []string `json:"values_hex"`
	} `json:"zero_subtree_hashes"`
	SingleLeafRoots []struct {
		Depth     int    `json:"depth"`
		LeafIndex int    `json:"leaf_index"`
		LeafHex   string `json:"leaf_hex"`
		RootHex   string `json:"root_hex"`
	} `json:"single_leaf_roots"`
	TreeExample struct {
		Depth     int      `json:"depth"`
		LeavesHex []string `json:"leaves_hex"`
		RootHex   string   `json:"root_hex"`
		Proofs    []struct {
			LeafIndex   int      `json:"leaf_index"`
			LeafHex     string   `json:"leaf_hex"`
			PathIndices []int    `json:"path_indices"`
			SiblingsHex []string `json:"siblings_hex"`
		} `json:"proofs"`
	} `json:"tree_example"`
	HashToField []struct {
		Name      string  `json:"name"`
		InputUTF8 *string `json:"input_utf8"`
		InputHex  *string `json:"input_hex"`
		OutputHex string  `json:"output_hex"`
	} `json:"hash_to_field"`
	ExternalNullifier []struct {
		AppID     string  `json:"app_id"`
		Action    *string `json:"action"`
		OutputHex string  `json:"output_hex"`
	} `json:"external_nullifier"`
	NullifierHash []struct {
		ExternalNullifierHex string `json:"external_nullifier_hex"`
		IdentityNullifier    string `json:"identity_nullifier"`
		OutputHex            string `json:"output_hex"`
	} `json:"nullifier_hash"`
}

func loadPoseidon1(t *testing.T) (*poseidon1Semaphore, *vectors.Counter) {
	t.Helper()
	var f struct {
		Semaphore poseidon1Semaphore `json:"semaphore"`
	}
	vectors.Load(t, "poseidon1.json", &f)
	return &f.Semaphore, vectors.NewCounter(t, "poseidon1.json")
}

func assertFE(t *testing.T, what string, got fr.Element, wantHex string) {
	t.Helper()
	if want := mustFE(t, wantHex); got != want {
		t.Errorf("%s = %s, want %s", what, field.Format(&got), wantHex)
	}
}

func TestHashToFieldVectors(t *testing.T) {
	s, c := loadPoseidon1(t)
	for _, v := range s.HashToField {
		var in []byte
		switch {
		case v.InputUTF8 != nil && v.InputHex == nil:
			in = []byte(*v.InputUTF8)
		case v.InputHex != nil && v.InputUTF8 == nil:
			b, err := hex.DecodeString(*v.InputHex)
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			in = b
		default:
			t.Fatalf("%s: exactly one of input_utf8 and input_hex is required", v.Name)
		}
		assertFE(t, v.Name, HashToField(in), v.OutputHex)
		c.Inc()
	}
}

func TestExternalNullifierVectors(t *testing.T) {
	s, c := loadPoseidon1(t)
	for _, v := range s.ExternalNullifier {
		action := ""
		if v.Action != nil {
			action = *v.Action
		}
		assertFE(t, v.AppID, ExternalNullifier(v.AppID, action), v.OutputHex)
		c.Inc()
	}
}

func TestIdentityVectors(t *testing.T) {
	s, c := loadPoseidon1(t)
	v := s.Identity
	id := Identity{Nullifier: mustDecimal(t, v.IdentityNullifier), Trapdoor: mustDecimal(t, v.IdentityTrapdoor)}
	secret, commitment := id.Secret(), id.Commitment()
	if secret != mustDecimal(t, v.Secret) || commitment != mustDecimal(t, v.Commitment) {
		t.Errorf("secret %s commitment %s", secret.String(), commitment.String())
	}
	assertFE(t, "secret_hex", secret, v.SecretHex)
	assertFE(t, "commitment_hex", commitment, v.CommitmentHex)
	c.Inc()
	for _, n := range s.NullifierHash {
		id := Identity{Nullifier: mustDecimal(t, n.IdentityNullifier)}
		assertFE(t, "nullifier hash", id.NullifierHash(mustFE(t, n.ExternalNullifierHex)), n.OutputHex)
		c.Inc()
	}
}

func TestNewIdentity(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{7})
	a, err := NewIdentity(rng)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewIdentity(rng)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a.Nullifier == a.Trapdoor || a.Commitment() == b.Commitment() {
		t.Fatal("identities repeat")
	}
	if _, err := NewIdentity(failingReader{}); err == nil {
		t.Fatal("NewIdentity ignored a reader error")
	}
}

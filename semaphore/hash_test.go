package semaphore

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/vectors"
)

func loadPoseidon1(t *testing.T) (*vectors.Poseidon1Semaphore, *vectors.Counter) {
	t.Helper()
	f, c := vectors.LoadPoseidon1(t)
	return &f.Semaphore, c
}

func assertFE(t *testing.T, what string, got fr.Element, wantHex string) {
	t.Helper()
	if want := vectors.Element(t, wantHex); got != want {
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
		assertFE(t, "nullifier hash", id.NullifierHash(vectors.Element(t, n.ExternalNullifierHex)), n.OutputHex)
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

package babyjub

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/cryptotest"
	"worldid/internal/vectors"
	"worldid/poseidon"
)

const eddsaFile = "eddsa_babyjubjub.json"

// signatureVector is one entry of repo_kats[] or computed_signatures[]
// (vectors README, eddsa_babyjubjub.json). Intermediates are optional in
// repo_kats; outcomes are raw so that their vocabulary can be checked.
type signatureVector struct {
	Name                   string          `json:"name"`
	SeedHex                string          `json:"seed_hex"`
	Message                string          `json:"message"`
	PK                     []string        `json:"pk"`
	PKCompressedHex        string          `json:"pk_compressed_hex"`
	R                      []string        `json:"R"`
	S                      string          `json:"s"`
	SignatureHex           string          `json:"signature_hex"`
	Blake3ExpandHex        *string         `json:"blake3_expand_hex"`
	SKScalar               *string         `json:"sk_scalar"`
	NonceSecret            *string         `json:"nonce_secret"`
	NonceR                 *string         `json:"nonce_r"`
	ChallengeFE            *string         `json:"challenge_fe"`
	Verify                 json.RawMessage `json:"verify"`
	VerifyWithMessagePlus1 json.RawMessage `json:"verify_with_message_plus_1"`
}

type eddsaVectors struct {
	RepoKATs           []signatureVector `json:"repo_kats"`
	ComputedSignatures []signatureVector `json:"computed_signatures"`
	Negative           []struct {
		Name            string          `json:"name"`
		PKCompressedHex string          `json:"pk_compressed_hex"`
		SignatureHex    string          `json:"signature_hex"`
		Message         string          `json:"message"`
		ExpectedValid   json.RawMessage `json:"expected_valid"`
	} `json:"negative_verification_cases"`
}

func TestRepoKATs(t *testing.T) { cryptotest.ForEachPath(t, testRepoKATs) }

func testRepoKATs(t *testing.T) {
	var v eddsaVectors
	vectors.Load(t, eddsaFile, &v)
	c := vectors.NewCounter(t, eddsaFile)
	for _, kat := range v.RepoKATs {
		t.Run(kat.Name, func(t *testing.T) {
			checkSignatureVector(t, &kat)
			// Upstream KATs are valid signatures by construction.
			if !verifyHex(t, kat.PKCompressedHex, parseBig(t, kat.Message), kat.SignatureHex) {
				t.Error("KAT signature does not verify")
			}
			c.Inc()
		})
	}
}

func TestComputedSignatures(t *testing.T) { cryptotest.ForEachPath(t, testComputedSignatures) }

func testComputedSignatures(t *testing.T) {
	var v eddsaVectors
	vectors.Load(t, eddsaFile, &v)
	c := vectors.NewCounter(t, eddsaFile)
	for _, sv := range v.ComputedSignatures {
		t.Run(sv.Name, func(t *testing.T) {
			for name, p := range map[string]*string{
				"sk_scalar": sv.SKScalar, "nonce_secret": sv.NonceSecret,
				"nonce_r": sv.NonceR, "challenge_fe": sv.ChallengeFE,
			} {
				if p == nil {
					t.Fatalf("computed signature without %s", name)
				}
			}
			checkSignatureVector(t, &sv)
			msg := parseBig(t, sv.Message)
			if got, want := verifyHex(t, sv.PKCompressedHex, msg, sv.SignatureHex), strictBool(t, "verify", sv.Verify); got != want {
				t.Errorf("verify = %v, want %v", got, want)
			}
			plus1 := new(big.Int).Add(msg, big.NewInt(1))
			if got, want := verifyHex(t, sv.PKCompressedHex, plus1, sv.SignatureHex), strictBool(t, "verify_with_message_plus_1", sv.VerifyWithMessagePlus1); got != want {
				t.Errorf("verify(message+1) = %v, want %v", got, want)
			}
			c.Inc()
		})
	}
}

func TestNegativeVerificationCases(t *testing.T) {
	cryptotest.ForEachPath(t, testNegativeVerificationCases)
}

func testNegativeVerificationCases(t *testing.T) {
	var v eddsaVectors
	vectors.Load(t, eddsaFile, &v)
	c := vectors.NewCounter(t, eddsaFile)
	for _, nc := range v.Negative {
		t.Run(nc.Name, func(t *testing.T) {
			want := strictBool(t, "expected_valid", nc.ExpectedValid)
			if got := verifyHex(t, nc.PKCompressedHex, parseBig(t, nc.Message), nc.SignatureHex); got != want {
				t.Errorf("verify = %v, want %v", got, want)
			}
			c.Inc()
		})
	}
}

// verifyHex runs the whole checklist from the wire forms, through both
// Verify and ParseSignature+VerifySignature, and requires them to agree.
// Malformed hex, a key that fails ParsePublicKey and a message ≥ p all mean
// "not valid".
func verifyHex(t *testing.T, pkHex string, msg *big.Int, sigHex string) bool {
	t.Helper()
	pkBytes, errPK := hex.DecodeString(pkHex)
	sigBytes, errSig := hex.DecodeString(sigHex)
	if errPK != nil || errSig != nil || msg.Cmp(bigP) >= 0 {
		return false // §e step 6 for the message; undecodable bytes are no signature
	}
	pub, err := ParsePublicKey(pkBytes)
	if err != nil {
		return false
	}
	var m fr.Element
	m.SetBigInt(msg)
	viaBytes := Verify(pub, m, sigBytes)
	sig, err := ParseSignature(sigBytes)
	viaParsed := err == nil && VerifySignature(pub, m, sig)
	if viaBytes != viaParsed {
		t.Fatalf("Verify = %v but ParseSignature+VerifySignature = %v (parse error %v)", viaBytes, viaParsed, err)
	}
	return viaBytes
}

// checkSignatureVector asserts every value the vector gives.
func checkSignatureVector(t *testing.T, v *signatureVector) {
	t.Helper()
	seed := vectors.Hex(t, v.SeedHex)
	k, err := NewPrivateKey(seed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k.Seed(), seed) {
		t.Error("Seed() differs from the seed")
	}
	if v.Blake3ExpandHex != nil {
		var h [64]byte
		blake3XOF(h[:], seed)
		if want := vectors.Hex(t, *v.Blake3ExpandHex); !bytes.Equal(h[:], want) {
			t.Errorf("blake3 expand = %x, want %x", h, want)
		}
	}
	checkScalar(t, "sk_scalar", &k.sk, v.SKScalar)
	checkScalar(t, "nonce_secret", &k.nonceSecret, v.NonceSecret)

	if len(v.PK) != 2 || len(v.R) != 2 {
		t.Fatalf("pk and R must have two coordinates")
	}
	pub := k.Public()
	if x, y := pub.Coordinates(); x != v.PK[0] || y != v.PK[1] {
		t.Errorf("pk = (%s, %s), want (%s, %s)", x, y, v.PK[0], v.PK[1])
	}
	pkBytes := vectors.Hex(t, v.PKCompressedHex)
	if !bytes.Equal(pub.Bytes(), pkBytes) {
		t.Errorf("pk compressed = %x, want %x", pub.Bytes(), pkBytes)
	}
	if parsed, err := ParsePublicKey(pkBytes); err != nil || !parsed.Equal(pub) {
		t.Errorf("ParsePublicKey: %v", err)
	}
	if parsed, err := ParsePublicKeyCoordinates(v.PK[0], v.PK[1]); err != nil || !parsed.Equal(pub) {
		t.Errorf("ParsePublicKeyCoordinates: %v", err)
	}

	msg := parseFE(t, v.Message)
	sigBytes := vectors.Hex(t, v.SignatureHex)
	if got := Sign(k, msg); !bytes.Equal(got, sigBytes) {
		t.Errorf("signature = %x, want %x", got, sigBytes)
	}
	sig, err := ParseSignature(sigBytes)
	if err != nil {
		t.Fatalf("ParseSignature: %v", err)
	}
	if x, y := elementString(&sig.r.x), elementString(&sig.r.y); x != v.R[0] || y != v.R[1] {
		t.Errorf("R = (%s, %s), want (%s, %s)", x, y, v.R[0], v.R[1])
	}
	if got := limbsToBig((*[4]uint64)(&sig.s)).String(); got != v.S {
		t.Errorf("s = %s, want %s", got, v.S)
	}

	if v.NonceR != nil {
		var in, h [64]byte
		ns := k.nonceSecret.bytes()
		copy(in[:], ns[:])
		fr.LittleEndian.PutElement((*[32]byte)(in[32:]), msg)
		blake3XOF(h[:], in[:])
		r := scalarFromWideBytes(h[:])
		checkScalar(t, "nonce_r", &r, v.NonceR)
		if rG := scalarMultAffine(limbsToBig((*[4]uint64)(&r))); !rG.equal(&sig.r) {
			t.Error("nonce_r·G ≠ R")
		}
	}
	if v.ChallengeFE != nil {
		cfe := poseidon.Hash(challengeTag, sig.r.x, sig.r.y, pub.a.x, pub.a.y, msg)
		if got := elementString(&cfe); got != *v.ChallengeFE {
			t.Errorf("challenge_fe = %s, want %s", got, *v.ChallengeFE)
		}
		c := challenge(&sig.r, &pub.a, &msg)
		if want := new(big.Int).Mod(parseBig(t, *v.ChallengeFE), bigL); limbsToBig((*[4]uint64)(&c)).Cmp(want) != 0 {
			t.Errorf("c = %v, want challenge_fe mod L = %v", limbsToBig((*[4]uint64)(&c)), want)
		}
	}
}

func checkScalar(t *testing.T, name string, got *scalar, want *string) {
	t.Helper()
	if want == nil {
		return
	}
	if g := limbsToBig((*[4]uint64)(got)).String(); g != *want {
		t.Errorf("%s = %s, want %s", name, g, *want)
	}
}

func TestParseErrorsNameTheRule(t *testing.T) {
	// The signature is only a well-formed base to break; it needs no vector.
	key, err := NewPrivateKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sig := Sign(key, fr.NewElement(42))
	identity := le32(big.NewInt(1))
	order2 := le32(new(big.Int).Sub(bigP, big.NewInt(1)))
	sPlusL := bytes.Clone(sig)
	copy(sPlusL[32:], le32(new(big.Int).Add(leBytesToBig(sig[32:]), bigL)))
	rOrder2 := bytes.Clone(sig)
	copy(rOrder2, order2)

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"pk identity", errOf(ParsePublicKey(identity)), errPublicIdentity},
		{"pk order 2", errOf(ParsePublicKey(order2)), errPointNotInGroup},
		{"pk 31 bytes", errOf(ParsePublicKey(identity[:31])), errPointLength},
		{"pk y = p", errOf(ParsePublicKey(le32(bigP))), errPointYNotCanon},
		{"pk coordinates identity", errOf(ParsePublicKeyCoordinates("0", "1")), errPublicIdentity},
		{"pk coordinates off curve", errOf(ParsePublicKeyCoordinates("1", "1")), errPublicNotOnCurve},
		{"pk coordinates order 2", errOf(ParsePublicKeyCoordinates("0", new(big.Int).Sub(bigP, big.NewInt(1)).String())), errPointNotInGroup},
		{"sig 63 bytes", errOf(ParseSignature(sig[:63])), errSignatureLength},
		{"sig 65 bytes", errOf(ParseSignature(append(bytes.Clone(sig), 0))), errSignatureLength},
		{"sig s + L", errOf(ParseSignature(sPlusL)), errScalarNotCanonical},
		{"sig R order 2", errOf(ParseSignature(rOrder2)), errPointNotInGroup},
		{"sig R y = 2", errOf(ParseSignature(append(le32(big.NewInt(2)), sig[32:]...))), errPointNotOnCurve},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	for _, bad := range [][2]string{
		{"01", "1"}, {"-1", "1"}, {"1", " 1"}, {"1", bigP.String()}, {"", "1"},
	} {
		if _, err := ParsePublicKeyCoordinates(bad[0], bad[1]); err == nil {
			t.Errorf("ParsePublicKeyCoordinates(%q, %q) accepted", bad[0], bad[1])
		}
	}
}

func errOf[T any](_ T, err error) error { return err }

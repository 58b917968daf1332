package refresh

import (
	stdecdsa "crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"
	secpfr "github.com/consensys/gnark-crypto/ecc/secp256k1/fr"

	"worldid/credential"
	"worldid/field"
	"worldid/internal/vectors"
)

// pcpFile mirrors pcp_v2_3.json (vectors/README.md).
type pcpFile struct {
	Keys map[string]struct {
		PrivateKeyHex            string `json:"private_key_hex"`
		PublicKeyUncompressedHex string `json:"public_key_uncompressed_hex"`
		PublicKeyPEM             string `json:"public_key_pem"`
	} `json:"keys"`
	OrbKeyRegistry map[string][]string `json:"orb_key_registry"`
	Vectors        []pcpVector         `json:"vectors"`
	Negative       []pcpVector         `json:"negative"`
}

type pcpVector struct {
	Name             string            `json:"name"`
	OrbID            string            `json:"orb_id"`
	SignedBy         string            `json:"signed_by"`
	Form             map[string]string `json:"form"`
	HashesJSON       string            `json:"hashes_json"`
	HashesSignHex    string            `json:"hashes_sign_hex"`
	HashesJSONSHA256 string            `json:"hashes_json_sha256"`
	HashesJSONLen    *int              `json:"hashes_json_len"`
	Expected         string            `json:"expected"`
	FailingCheck     *string           `json:"failing_check"`
	Claims0          *string           `json:"claims0"`
}

// failingChecks is the closed vocabulary of failing_check.
var failingChecks = []string{"json", "version", "missing_key", "hash_format", "salt_format", "salted_field",
	"timestamp_format", "iris_share_hash", "signup_reason", "signature_encoding", "signature"}

func loadPCP(t testing.TB) *pcpFile {
	t.Helper()
	var f pcpFile
	vectors.Load(t, "pcp_v2_3.json", &f)
	return &f
}

// pcpOf assembles the request parts of a vector.
func (v *pcpVector) pcpOf(t testing.TB) pcp {
	t.Helper()
	p := pcp{}
	for k, val := range v.Form {
		p[k] = []byte(val)
	}
	p[partHashesJSON] = []byte(v.HashesJSON)
	sig, err := hex.DecodeString(v.HashesSignHex)
	if err != nil {
		t.Fatal(err)
	}
	p[partHashesSign] = sig
	return p
}

// trustedKeys parses the registry's PEM keys for an orb.
func (f *pcpFile) trustedKeys(t testing.TB, orbID string) []*ecdsa.PublicKey {
	t.Helper()
	var keys []*ecdsa.PublicKey
	for _, name := range f.OrbKeyRegistry[orbID] {
		k, err := ParseOrbKeyPEM([]byte(f.Keys[name].PublicKeyPEM))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys = append(keys, k)
	}
	return keys
}

func TestPCPKeys(t *testing.T) {
	f := loadPCP(t)
	n := vectors.NewCounter(t, "pcp_v2_3.json")
	for name, k := range f.Keys {
		pub, err := ParseOrbKeyPEM([]byte(k.PublicKeyPEM))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw := pub.A.RawBytes()
		if got := "04" + hex.EncodeToString(raw[:]); got != k.PublicKeyUncompressedHex {
			t.Errorf("%s: point %s, want %s", name, got, k.PublicKeyUncompressedHex)
		}
		priv := orbPrivateKey(t, k.PrivateKeyHex)
		if !priv.PublicKey.A.Equal(&pub.A) {
			t.Errorf("%s: private key does not match the PEM key", name)
		}
		n.Inc()
	}
}

func TestPCPVectors(t *testing.T) {
	f := loadPCP(t)
	n := vectors.NewCounter(t, "pcp_v2_3.json")
	for _, v := range append(slices.Clone(f.Vectors), f.Negative...) {
		t.Run(v.Name, func(t *testing.T) {
			p := v.pcpOf(t)
			if p.orbID() != v.OrbID {
				t.Fatalf("form orb_id %q, vector orb_id %q", p.orbID(), v.OrbID)
			}
			d := p.digest()
			if hex.EncodeToString(d[:]) != v.HashesJSONSHA256 {
				t.Errorf("hashes_json_sha256 differs")
			}
			if v.HashesJSONLen != nil && *v.HashesJSONLen != len(v.HashesJSON) {
				t.Errorf("hashes_json_len = %d, have %d bytes", *v.HashesJSONLen, len(v.HashesJSON))
			}
			err := validatePCP(hashedShares(p), f.trustedKeys(t, p.orbID()))
			switch v.Expected {
			case "valid":
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				claim, cerr := credential.ClaimFromBytes(p[partHashesJSON])
				if cerr != nil || v.Claims0 == nil || field.Format(&claim) != *v.Claims0 {
					t.Errorf("claims0 = %s, want %v (%v)", field.Format(&claim), v.Claims0, cerr)
				}
			case "PCP_VALIDATION_FAILED":
				if v.FailingCheck == nil || !slices.Contains(failingChecks, *v.FailingCheck) {
					t.Fatalf("failing_check %v not in the vocabulary", v.FailingCheck)
				}
				if err == nil {
					t.Fatal("accepted")
				}
				if err.Code != CodePCPValidationFailed || err.Check != *v.FailingCheck {
					t.Errorf("failed %s/%s, want check %s", err.Code, err.Check, *v.FailingCheck)
				}
			default:
				t.Fatalf("expected = %q, not in the vocabulary", v.Expected)
			}
			n.Inc()
		})
	}
}

// orbPrivateKey builds a gnark-crypto key from a hex scalar.
func orbPrivateKey(t testing.TB, scalarHex string) *ecdsa.PrivateKey {
	t.Helper()
	d, err := hex.DecodeString(scalarHex)
	if err != nil || len(d) != secpfr.Bytes {
		t.Fatalf("private key hex: %v", err)
	}
	var priv ecdsa.PrivateKey
	priv.PublicKey.A.ScalarMultiplicationBase(new(big.Int).SetBytes(d))
	pub := priv.PublicKey.A.RawBytes()
	if _, err := priv.SetBytes(append(pub[:], d...)); err != nil {
		t.Fatal(err)
	}
	return &priv
}

// signDER signs SHA-256(msg) and DER-encodes (r, s); highS flips s to n − s.
func signDER(t testing.TB, priv *ecdsa.PrivateKey, msg []byte, highS bool) []byte {
	t.Helper()
	digest := sha256.Sum256(msg)
	rs, err := priv.Sign(digest[:], nil)
	if err != nil {
		t.Fatal(err)
	}
	sig := derSignature{R: new(big.Int).SetBytes(rs[:32]), S: new(big.Int).SetBytes(rs[32:])}
	if highS {
		sig.S.Sub(secpfr.Modulus(), sig.S)
	}
	der, err := asn1.Marshal(sig)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// validFixture returns a valid vector's PCP, its keys and its signer.
func validFixture(t *testing.T) (pcp, []*ecdsa.PublicKey, *ecdsa.PrivateKey) {
	f := loadPCP(t)
	if len(f.Vectors) == 0 {
		t.Skip("pcp_v2_3.json has no valid PCP in its vectors list")
	}
	v := f.Vectors[0]
	p := v.pcpOf(t)
	return p, f.trustedKeys(t, p.orbID()), orbPrivateKey(t, f.Keys[v.SignedBy].PrivateKeyHex)
}

// resign rewrites hashes.json with edit applied (sorted, compact, as the
// Orb writes it) and signs it again, so only the edited rule can fail.
func resign(t *testing.T, p pcp, priv *ecdsa.PrivateKey, edit func(map[string]string)) pcp {
	var hashes map[string]string
	if err := json.Unmarshal(p[partHashesJSON], &hashes); err != nil {
		t.Fatal(err)
	}
	edit(hashes)
	b, err := json.Marshal(hashes)
	if err != nil {
		t.Fatal(err)
	}
	q := maps.Clone(p)
	q[partHashesJSON] = b
	q[partHashesSign] = signDER(t, priv, b, false)
	return q
}

// TestPCPEachCheck tampers one thing at a time and expects the check named.
func TestPCPEachCheck(t *testing.T) {
	base, keys, priv := validFixture(t)
	if err := validatePCP(hashedShares(base), keys); err != nil {
		t.Fatal(err)
	}
	if err := validatePCP(hashedShares(resign(t, base, priv, func(map[string]string) {})), keys); err != nil {
		t.Fatalf("re-signed fixture rejected: %v", err)
	}
	cases := map[string]struct {
		p     pcp
		check string
	}{}
	add := func(name, check string, p pcp) {
		cases[name] = struct {
			p     pcp
			check string
		}{p, check}
	}
	set := func(name string, value []byte) pcp {
		q := maps.Clone(base)
		q[name] = value
		return q
	}
	for _, f := range saltedFields {
		add("value "+f, "salted_field", set(f, append(slices.Clone(base[f]), 'x')))
		salt := []byte(strings.Repeat("0", 32))
		add("salt "+f, "salted_field", set(f+saltSuffix, salt))
		add("uppercase salt "+f, "salt_format", set(f+saltSuffix, []byte(strings.ToUpper(string(base[f+saltSuffix])))))
		add("short salt "+f, "salt_format", set(f+saltSuffix, base[f+saltSuffix][:31]))
	}
	for _, s := range shareParts {
		add("share "+s, "iris_share_hash", set(s, append(slices.Clone(base[s]), ' ')))
	}
	hj := string(base[partHashesJSON])
	add("not json", "json", set(partHashesJSON, []byte(hj[:len(hj)-1])))
	add("duplicate key", "json", set(partHashesJSON, []byte(`{"version":"2.3",`+hj[1:])))
	add("number value", "json", set(partHashesJSON, []byte(`{"a":1,`+hj[1:])))
	add("trailing data", "json", set(partHashesJSON, []byte(hj+"{}")))
	add("invalid UTF-8 in a name", "json", set(partHashesJSON, []byte("{\"x\xff\":\"a\","+hj[1:])))
	add("unpaired surrogate in a value", "json", set(partHashesJSON, []byte(`{"x":"\udc00",`+hj[1:])))
	add("missing orb_country", "missing_key", resign(t, base, priv, func(h map[string]string) { delete(h, "orb_country") }))
	add("missing version", "missing_key", resign(t, base, priv, func(h map[string]string) { delete(h, "version") }))
	add("uppercase hash", "hash_format", resign(t, base, priv, func(h map[string]string) { h["left_ir.png"] = strings.ToUpper(h["left_ir.png"]) }))
	add("version 2.4", "version", resign(t, base, priv, func(h map[string]string) { h["version"] = "2.4" }))
	add("tampered hash", "signature", set(partHashesJSON, []byte(flipHexDigit(hj, `"left_ir.png":"`))))
	add("unknown orb key", "signature", func() pcp {
		q := maps.Clone(base)
		other := orbPrivateKey(t, strings.Repeat("11", 32))
		q[partHashesSign] = signDER(t, other, q[partHashesJSON], false)
		return q
	}())
	reason := func(r string) pcp {
		q := resign(t, base, priv, func(h map[string]string) { h["signup_reason"] = sha256Hex([]byte(r), base["signup_reason_salt"]) })
		q["signup_reason"] = []byte(r)
		return q
	}
	add("signup_reason RESCAN", "signup_reason", reason("RESCAN"))
	ts := func(v string) pcp {
		q := resign(t, base, priv, func(h map[string]string) { h["timestamp"] = sha256Hex([]byte(v), base["timestamp_salt"]) })
		q["timestamp"] = []byte(v)
		return q
	}
	add("timestamp leading zero", "timestamp_format", ts("0"+string(base["timestamp"])))
	add("timestamp sign", "timestamp_format", ts("+"+string(base["timestamp"])))
	add("timestamp fraction", "timestamp_format", ts(string(base["timestamp"])+".5"))
	add("timestamp empty", "timestamp_format", ts(""))
	sig := base[partHashesSign]
	add("sig truncated", "signature_encoding", set(partHashesSign, sig[:len(sig)-1]))
	add("sig trailing byte", "signature_encoding", set(partHashesSign, append(slices.Clone(sig), 0)))
	add("sig empty", "signature_encoding", set(partHashesSign, nil))
	add("sig raw r‖s", "signature_encoding", set(partHashesSign, rawRS(t, sig)))
	add("sig r non-minimal", "signature_encoding", set(partHashesSign, nonMinimalR(t, sig)))
	add("sig r zero", "signature_encoding", set(partHashesSign, derOf(t, big.NewInt(0), big.NewInt(1))))
	add("sig s = n", "signature_encoding", set(partHashesSign, derOf(t, big.NewInt(1), secpfr.Modulus())))
	add("sig s negative", "signature_encoding", set(partHashesSign, derOf(t, big.NewInt(1), big.NewInt(-1))))
	add("sig r flipped", "signature", set(partHashesSign, flipR(t, sig)))
	add("sig third INTEGER", "signature_encoding", set(partHashesSign, withThirdInteger(t, sig)))
	for name, c := range cases {
		err := validatePCP(hashedShares(c.p), keys)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if err.Check != c.check || err.Status != 422 || !strings.Contains(err.Message, c.check) {
			t.Errorf("%s: check %q (%s), want %q", name, err.Check, err.Message, c.check)
		}
	}
	if err := validatePCP(hashedShares(base), nil); err == nil || err.Check != "signature" {
		t.Errorf("no trusted key: %v", err)
	}
}

func TestPCPHighSAccepted(t *testing.T) {
	base, keys, priv := validFixture(t)
	q := maps.Clone(base)
	q[partHashesSign] = signDER(t, priv, q[partHashesJSON], true)
	if err := validatePCP(hashedShares(q), keys); err != nil {
		t.Fatalf("high-S rejected: %v", err)
	}
}

func parsedSig(t *testing.T, der []byte) derSignature {
	var s derSignature
	if _, err := asn1.Unmarshal(der, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func derOf(t *testing.T, r, s *big.Int) []byte {
	b, err := asn1.Marshal(derSignature{r, s})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rawRS(t *testing.T, der []byte) []byte {
	s := parsedSig(t, der)
	out := make([]byte, 64)
	s.R.FillBytes(out[:32])
	s.S.FillBytes(out[32:])
	return out
}

// withThirdInteger is SEQUENCE { r, s, INTEGER 1 }, which encoding/asn1
// decodes into derSignature without complaint.
func withThirdInteger(t *testing.T, der []byte) []byte {
	s := parsedSig(t, der)
	b, err := asn1.Marshal(struct{ R, S, X *big.Int }{s.R, s.S, big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asn1.Unmarshal(b, new(derSignature)); err != nil {
		t.Fatal("encoding/asn1 no longer accepts the extra element; the test should use another non-DER form")
	}
	return b
}

// nonMinimalR re-encodes r with a superfluous leading zero byte.
func nonMinimalR(t *testing.T, der []byte) []byte {
	s := parsedSig(t, der)
	r := append([]byte{0, 0}, s.R.Bytes()...)
	if r[2] < 0x80 {
		r = r[1:]
	}
	sb := s.S.Bytes()
	if sb[0] >= 0x80 {
		sb = append([]byte{0}, sb...)
	}
	body := append(append([]byte{2, byte(len(r))}, r...), append([]byte{2, byte(len(sb))}, sb...)...)
	return append([]byte{0x30, byte(len(body))}, body...)
}

func flipR(t *testing.T, der []byte) []byte {
	s := parsedSig(t, der)
	s.R.Xor(s.R, big.NewInt(1))
	return derOf(t, s.R, s.S)
}

func TestParseOrbKeyPEMRejects(t *testing.T) {
	f := loadPCP(t)
	var good string
	for name, key := range f.Keys {
		if _, err := ParseOrbKeyPEM([]byte(key.PublicKeyPEM)); err != nil {
			t.Fatalf("key %s: %v", name, err)
		}
		good = key.PublicKeyPEM
	}
	if good == "" {
		t.Skip("pcp_v2_3.json has no Orb keys")
	}
	// P-256 SPKI: same structure, another curve OID.
	p256, err := stdecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256DER, err := x509.MarshalPKIXPublicKey(&p256.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	p256PEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: p256DER}))
	cases := map[string]string{
		"empty":          "",
		"wrong type":     strings.ReplaceAll(good, "PUBLIC KEY", "EC PUBLIC KEY"),
		"trailing block": good + good,
		"trailing text":  good + "x",
		"P-256":          p256PEM,
		"not DER":        "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		"off curve":      offCurvePEM(t, good),
	}
	for name, s := range cases {
		if _, err := ParseOrbKeyPEM([]byte(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// offCurvePEM changes the last byte of y.
func offCurvePEM(t *testing.T, good string) string {
	block := good[strings.Index(good, "\n")+1 : strings.Index(good, "-----END")]
	der, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(block, "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	der[len(der)-1] ^= 1
	return "-----BEGIN PUBLIC KEY-----\n" + base64.StdEncoding.EncodeToString(der) + "\n-----END PUBLIC KEY-----\n"
}

// flipHexDigit changes the first hex digit after prefix to another one.
func flipHexDigit(s, prefix string) string {
	i := strings.Index(s, prefix) + len(prefix)
	d := byte('0')
	if s[i] == '0' {
		d = '1'
	}
	return s[:i] + string(d) + s[i+1:]
}

// hashedShares is p as parseForm keeps it: iris shares replaced by their
// SHA-256.
func hashedShares(p pcp) pcp {
	q := maps.Clone(p)
	for _, s := range shareParts {
		if v, ok := q[s]; ok {
			d := sha256.Sum256(v)
			q[s] = d[:]
		}
	}
	return q
}

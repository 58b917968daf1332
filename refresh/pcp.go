package refresh

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/secp256k1/ecdsa"

	"worldid/record"
)

// Multipart part names of a PCP refresh (doc/interfaces.md §4.2).
const (
	partHashesJSON = "hashes.json"
	partHashesSign = "hashes.sign"
	saltSuffix     = "_salt"
)

// saltedFields are the form fields committed in hashes.json as
// SHA-256(value ‖ salt) under the key of the same name (doc/crypto.md §h).
var saltedFields = [...]string{"signup_id", "orb_id", "operator_id", "signup_reason", "timestamp", "software_version", "orb_country"}

// shareParts are the iris share form fields; share i is committed under
// the hashes.json key iris_code_shares_<i>.json.
var shareParts = [...]string{"iris_code_shares_0", "iris_code_shares_1", "iris_code_shares_2"}

// pcpVersion is the accepted hashes.json version (doc/crypto.md §h step 2).
const pcpVersion = "2.3"

// pcpSignupReason is the only accepted signup_reason (doc/crypto.md §h step 7).
const pcpSignupReason = "NORMAL"

// pcpParts lists the parts of a complete PCP.
var pcpParts = func() []string {
	var names []string
	for _, f := range saltedFields {
		names = append(names, f, f+saltSuffix)
	}
	names = append(names, shareParts[:]...)
	return append(names, partHashesJSON, partHashesSign)
}()

// isPCPPart reports whether a form field belongs to the PCP.
func isPCPPart(name string) bool { return slices.Contains(pcpParts, name) }

// pcp is the PCP of a refresh request: every PCP part as uploaded, except
// the iris shares, which are held as their 32-byte SHA-256 (parseForm
// hashes them while streaming).
type pcp map[string][]byte

// orbID is the form's orb_id, whose trusted keys verify hashes.sign.
func (p pcp) orbID() string { return string(p["orb_id"]) }

// digest is SHA-256 of hashes.json, the message the Orb signs.
func (p pcp) digest() [sha256.Size]byte { return sha256.Sum256(p[partHashesJSON]) }

// missing lists the PCP parts p lacks.
func (p pcp) missing() string {
	var out []string
	for _, n := range pcpParts {
		if _, ok := p[n]; !ok {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// validatePCP runs doc/crypto.md §h steps 1–8 in order on a complete PCP.
// trusted are the Orb keys registered for p.orbID(). Steps needing server
// state (signup_id binding, reuse) are the handler's and the store's.
func validatePCP(p pcp, trusted []*ecdsa.PublicKey) *Error {
	hashes, err := parseHashesJSON(p[partHashesJSON])
	if err != nil {
		return err
	}
	if hashes["version"] != pcpVersion {
		return pcpFailed("version", "hashes.json version is not "+pcpVersion)
	}
	for _, f := range saltedFields {
		if !isLowerHex(string(p[f+saltSuffix]), 32) {
			return pcpFailed("salt_format", f+saltSuffix+" is not 32 lowercase hex digits")
		}
	}
	for _, f := range saltedFields {
		if sha256Hex(p[f], p[f+saltSuffix]) != hashes[f] {
			return pcpFailed("salted_field", "SHA-256("+f+" ‖ salt) does not match hashes.json")
		}
	}
	if !isCanonicalDecimal(string(p["timestamp"])) {
		return pcpFailed("timestamp_format", "timestamp is not canonical decimal unix seconds")
	}
	for _, s := range shareParts {
		if hex.EncodeToString(p[s]) != hashes[s+".json"] {
			return pcpFailed("iris_share_hash", "SHA-256("+s+") does not match hashes.json")
		}
	}
	if string(p["signup_reason"]) != pcpSignupReason {
		return pcpFailed("signup_reason", "signup_reason is not "+pcpSignupReason)
	}
	return verifyHashesSign(p, trusted)
}

// hashesRequired are the keys step 1 demands besides the salted fields.
var hashesRequired = [...]string{"version", "iris_code_shares_0.json", "iris_code_shares_1.json", "iris_code_shares_2.json"}

// parseHashesJSON is doc/crypto.md §h step 1 on the uploaded bytes, never
// re-serialized: a flat object of strings, the required keys, and every
// value but version a lowercase 64-digit hex SHA-256.
func parseHashesJSON(b []byte) (map[string]string, *Error) {
	obj, err := readFlatObject(b)
	if err != nil {
		return nil, pcpFailed("json", "hashes.json: "+err.Error())
	}
	hashes := make(map[string]string, len(obj))
	for k, v := range obj {
		s, ok := v.Unquote()
		if !ok {
			return nil, pcpFailed("json", "hashes.json member "+k+" is not a string")
		}
		hashes[k] = s
	}
	for _, k := range append(hashesRequired[:], saltedFields[:]...) {
		if _, ok := hashes[k]; !ok {
			return nil, pcpFailed("missing_key", "hashes.json lacks "+k)
		}
	}
	for k, v := range hashes {
		if k != "version" && !isLowerHex(v, 64) {
			return nil, pcpFailed("hash_format", "hashes.json member "+k+" is not 64 lowercase hex digits")
		}
	}
	return hashes, nil
}

// verifyHashesSign is doc/crypto.md §h step 8: strict DER, then ECDSA over
// SHA-256(hashes.json) under any trusted key of the orb.
func verifyHashesSign(p pcp, trusted []*ecdsa.PublicKey) *Error {
	rs, err := parseDERSignature(p[partHashesSign])
	if err != nil {
		return pcpFailed("signature_encoding", err.Error())
	}
	digest := p.digest()
	for _, pub := range trusted {
		if verifyDigest(pub, rs, digest[:]) {
			return nil
		}
	}
	return pcpFailed("signature", "hashes.sign does not verify under a trusted key of orb_id")
}

func sha256Hex(parts ...[]byte) string {
	h := sha256.New()
	for _, b := range parts {
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// isLowerHex reports whether s is exactly n lowercase hex digits.
func isLowerHex(s string, n int) bool { return len(s) == n && record.IsLowerHex(s) }

// isCanonicalDecimal reports whether s is a canonical decimal (no sign, no
// leading zero except "0") that fits unix seconds in an int64.
func isCanonicalDecimal(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) || s[0] == '+' || s[0] == '-' {
		return false
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

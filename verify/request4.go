package verify

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/internal/leaf/strictjson"
	"worldid/oprfproof"
	"worldid/record"
	"worldid/semaphore"
)

// protocolVersionV4 is World ID 4.0, IDKit 4's default (doc.go "Protocol 4.0").
const protocolVersionV4 = "4.0"

// requestV4 is a validated 4.0 request: uniqueness proofs for an action,
// or session proofs for a session (sessionID set).
type requestV4 struct {
	sessionID string // as sent; "" for uniqueness proofs
	items     []itemV4
}

// itemV4 is one 4.0 item. RPID and Environment are filled in once the
// route id resolves to its app.
// refused, when set, fails the item without a check: an item of the other
// protocol or a proof of another length. Values ≥ the field modulus reach
// the checker, which answers them in the contract's order.
type itemV4 struct {
	claim      record.ClaimV4
	refused    *record.ProofError
	sybilScore *int64 // echoed only (doc.go)
}

// rawItemV4 holds the 4.0-only members of an item as raw JSON (nil: absent
// or null), read only in a 4.0 request: a 3.0 request ignores them as it
// ignores every unknown member.
type rawItemV4 struct {
	proofWords                                                 []string // a proof given as an array
	issuerSchemaID, expiresAtMin, genesisMin, sessionNullifier json.RawMessage
	sybilScore                                                 *int64
}

// member keeps a 4.0-only member's raw JSON; null leaves it absent.
func (it *rawItemV4) member(name string, v strictjson.Value) {
	var dst *json.RawMessage
	switch name {
	case "issuer_schema_id":
		dst = &it.issuerSchemaID
	case "expires_at_min":
		dst = &it.expiresAtMin
	case "credential_genesis_issued_at_min":
		dst = &it.genesisMin
	case "session_nullifier":
		dst = &it.sessionNullifier
	default:
		return
	}
	if v.Kind() != strictjson.Null {
		*dst = json.RawMessage(v.Bytes())
	}
}

// readProof reads proof: a string (3.0) or an array of strings (4.0).
func (it *rawItem) readProof(v strictjson.Value, path string) *Error {
	switch v.Kind() {
	case strictjson.Null:
		return nil
	case strictjson.String:
		return str(v, path, &it.proof)
	case strictjson.Array:
		words := []string{}
		for w := range v.Elements() {
			s, ok := w.Unquote()
			if !ok {
				return invalid(path, "must be an array of strings")
			}
			words = append(words, s)
		}
		it.v4.proofWords = words
		return nil
	}
	return invalid(path, "must be a string (protocol 3.0) or an array of 5 strings (protocol 4.0)")
}

// stringArray reads a raw member as an array of strings.
func stringArray(raw json.RawMessage, attribute string) ([]string, *Error) {
	var v []string
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, invalid(attribute, "must be an array of strings")
	}
	return v, nil
}

// parseUint64 reads a uint64 given as a JSON integer or a string of
// decimal digits (the portal's schema casts strings to numbers), in
// canonical form.
func parseUint64(raw json.RawMessage, attribute string, required bool) (uint64, *Error) {
	if raw == nil {
		if required {
			return 0, invalid(attribute, "is required")
		}
		return 0, nil
	}
	text := string(raw)
	var str string
	if json.Unmarshal(raw, &str) == nil {
		text = str
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != text {
		return 0, invalid(attribute, "must be an integer from 0 to 18446744073709551615")
	}
	return n, nil
}

// validateV4 applies the 4.0 schema of World's portal
// (developer-portal web/api/v4/verify/request-schema.ts): a session
// request names session_id and no action; a uniqueness request names an
// action.
func (raw *rawRequest) validateV4() (*request, *Error) {
	nonceText, err := required(raw.nonce, "nonce")
	if err != nil {
		return nil, err
	}
	nonce, perr := oprfproof.ParseWord(nonceText)
	if perr != nil {
		return nil, invalid("nonce", "must be a uint256 in decimal or 0x-hex (protocol 4.0)")
	}
	req := &request{v4: &requestV4{}}
	session := raw.sessionID != nil && *raw.sessionID != ""
	var sessionCommitment [32]byte
	if session {
		if raw.action != nil && *raw.action != "" {
			return nil, invalid("action", "must not be present for session proofs")
		}
		c, err := oprfproof.SessionCommitment(*raw.sessionID)
		if err != nil {
			return nil, invalid("session_id", "must be IDKit's session_ followed by 128 hex digits: a non-zero commitment, then an OPRF seed starting 01")
		}
		req.v4.sessionID, sessionCommitment = *raw.sessionID, c.Bytes()
	} else if req.action, err = present(raw.action, "action"); err != nil {
		return nil, err
	}
	if req.environment, req.verifierEnv, err = environment(raw.environment); err != nil {
		return nil, err
	}
	req.envDefault = raw.environment == nil
	if !raw.haveResponses {
		return nil, invalid("responses", "is required")
	}
	if len(raw.responses) == 0 {
		return nil, invalid("responses", "must hold at least one item")
	}
	action := actionField(req.action)
	for i, it := range raw.responses {
		item, err := it.itemV4(fmt.Sprintf("responses[%d]", i), session)
		if err != nil {
			return nil, err
		}
		c := &item.claim
		c.Nonce, c.SessionID = nonce, sessionCommitment
		if !session {
			c.Action = action
		}
		req.v4.items = append(req.v4.items, item)
	}
	return req, nil
}

// actionField is the field element of a uniqueness action as IDKit 4
// puts it in the proof request the World App proves:
// FieldElement::from_arbitrary_raw_bytes(action.as_bytes()), hashToField
// of the UTF-8 bytes, whatever the string looks like (worldcoin/idkit
// rust/core/src/bridge.rs build_request_payload; idkit-core 4.3.0's
// signing agrees). World's portal hashes the action with hashSignal,
// which decodes a 0x-hex string to bytes first, and so refuses genuine
// proofs for hex-looking actions such as "0x1234" (doc.go).
func actionField(action string) [32]byte {
	e := semaphore.HashToField([]byte(action))
	return e.Bytes()
}

// credentialSchemaIDs are the issuer_schema_ids of IDKit 4's credential
// types as World uses them (idkit-core 4.3.0 ResponseItemV4 and
// SelfieCheckResponseItemV4: 1 proof_of_human, 11 selfie, 9303 passport,
// 9310 mnc). An item naming one of them must carry its schema id, or its
// result would name a credential the proof is not about; other
// identifiers are echoed as sent.
var credentialSchemaIDs = map[string]uint64{"proof_of_human": 1, "selfie": 11, "passport": 9303, "mnc": 9310}

// maxIdentifierV4 bounds a 4.0 item's identifier, which is only echoed
// back: World's portal accepts any string there (IDKit 4 sends its
// credential type names, proof_of_human, selfie, passport, mnc), and in
// 4.0 issuer_schema_id and the registry root, not the identifier, decide
// what is checked. The body parser has already refused invalid UTF-8.
const maxIdentifierV4 = 64

// itemV4 validates one 4.0 item: a 3.0 member set (merkle_root, a string
// proof) is a validation_error, as the portal's schema makes it.
func (it rawItem) itemV4(path string, session bool) (itemV4, *Error) {
	item := itemV4{sybilScore: it.v4.sybilScore}
	c := &item.claim
	id, err := required(it.identifier, path+".identifier")
	if err != nil {
		return item, err
	}
	if len(id) > maxIdentifierV4 {
		return item, invalid(path+".identifier", fmt.Sprintf("must be at most %d bytes", maxIdentifierV4))
	}
	c.Identifier = id
	// A protocol 3.0 item, or a proof of another length, fails on its own
	// (per item, like every other proof the checker cannot accept).
	if it.proof != nil {
		item.refused = &record.ProofError{Code: record.CodeInvalidProof, Detail: "a protocol 3.0 item (a string proof) in a protocol 4.0 request"}
		return item, nil
	}
	if it.v4.proofWords == nil {
		return item, invalid(path+".proof", "is required")
	}
	if len(it.v4.proofWords) != len(c.Proof) {
		item.refused = &record.ProofError{Code: record.CodeInvalidProof, Detail: fmt.Sprintf("a protocol 4.0 proof has %d values, not %d", len(c.Proof), len(it.v4.proofWords))}
		return item, nil
	}
	for i, w := range it.v4.proofWords {
		if c.Proof[i], err = uint256(w, fmt.Sprintf("%s.proof[%d]", path, i)); err != nil {
			return item, err
		}
	}
	if c.IssuerSchemaID, err = parseUint64(it.v4.issuerSchemaID, path+".issuer_schema_id", true); err != nil {
		return item, err
	}
	if want, ok := credentialSchemaIDs[id]; ok && want != c.IssuerSchemaID {
		item.refused = &record.ProofError{Code: record.CodeInvalidCredentialIssuer,
			Detail: fmt.Sprintf("identifier %s is issuer_schema_id %d, not %d", id, want, c.IssuerSchemaID)}
		return item, nil
	}
	if c.ExpiresAtMin, err = parseUint64(it.v4.expiresAtMin, path+".expires_at_min", true); err != nil {
		return item, err
	}
	genesis, err := parseUint64(it.v4.genesisMin, path+".credential_genesis_issued_at_min", false)
	if err != nil {
		return item, err
	}
	c.GenesisMin = new(fr.Element).SetUint64(genesis).Bytes()
	if c.SignalHash, err = signalHashV4(it.signalHash, path+".signal_hash"); err != nil {
		return item, err
	}
	if session {
		if it.nullifier != nil {
			return item, invalid(path+".nullifier", "must not be present for session proofs; use session_nullifier")
		}
		if it.v4.sessionNullifier == nil {
			return item, invalid(path+".session_nullifier", "is required for session proofs")
		}
		pair, err := stringArray(it.v4.sessionNullifier, path+".session_nullifier")
		if err != nil {
			return item, err
		}
		if len(pair) != 2 {
			return item, invalid(path+".session_nullifier", "must have exactly 2 elements [nullifier, action]")
		}
		if c.Nullifier, err = uint256(pair[0], path+".session_nullifier[0]"); err != nil {
			return item, err
		}
		if c.Action, err = uint256(pair[1], path+".session_nullifier[1]"); err != nil {
			return item, err
		}
	} else {
		n, err := required(it.nullifier, path+".nullifier")
		if err != nil {
			return item, err
		}
		if !nullifierSyntax.matches(n) {
			return item, invalid(path+".nullifier", nullifierSyntax.text)
		}
		if c.Nullifier, err = uint256(n, path+".nullifier"); err != nil {
			return item, err
		}
	}
	if it.merkleRoot != nil || it.maxAge != nil {
		return item, invalid(path, "merkle_root and max_age are protocol 3.0 members; a 4.0 proof names its root as proof[4]")
	}
	return item, nil
}

// uint256 reads a value as the portal's BigInt does: decimal digits or 0x
// and hex digits, below 2^256.
func uint256(s, attribute string) ([32]byte, *Error) {
	w, err := oprfproof.ParseWord(s)
	if err != nil {
		return w, invalid(attribute, "must be a uint256 in decimal or 0x-hex")
	}
	return w, nil
}

// signalHashV4 is signal_hash: ^0x[0-9a-f]+$, default 0x0 (the portal's 4.0
// default, unlike 3.0's hash of the empty signal).
func signalHashV4(s *string, attribute string) ([32]byte, *Error) {
	if s == nil {
		return [32]byte{}, nil
	}
	if !signalHashSyntax.matches(*s) || len(strings.TrimLeft((*s)[2:], "0")) > 64 {
		return [32]byte{}, invalid(attribute, signalHashSyntax.text+", at most 64 significant digits")
	}
	return uint256(*s, attribute)
}

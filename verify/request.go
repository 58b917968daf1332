package verify

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/internal/leaf/strictjson"
	"worldid/record"
)

// Request limits and defaults (doc/design.md §5, §8).
const (
	maxBody = 64 << 10
	// DefaultMaxResponses caps the responses array when Options.MaxResponses is 0.
	DefaultMaxResponses = 16
	protocolVersion     = "3.0"
	minMaxAge           = 3600   // seconds
	maxMaxAge           = 604800 // seconds, also the default
	// defaultSignalHash is hashToField of the empty signal (doc/crypto.md §g).
	defaultSignalHash = "0x00c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a4"
)

// request is a validated verify request. Its claims lack AppID and
// Environment, which come from the app the route id resolves to (a
// staging app's proofs are checked in staging).
type request struct {
	routeID     string // "rp_…", "app_…" or "app_staging_…", syntax already checked
	action      string
	environment string // as given, echoed in the answer: production, staging or sandbox
	verifierEnv string // whose trees and nullifiers are used: production or staging
	envDefault  bool   // environment was absent (production unless the app is a staging app)
	claims      []record.Claim
	// refused fails claims without a check: a protocol 4.0 item (a proof
	// of 5 values) in a 3.0 request. Indexed like claims; nil entries are
	// checked.
	refused []*record.ProofError
	v4      *requestV4 // protocol 4.0 (request4.go); claims is then nil
}

// parse is the only code that reads the HTTP request. Checks run in the
// order: method, route id, content type, body.
func parse(w http.ResponseWriter, r *http.Request, maxResponses int) (*request, *Error) {
	if !httpapi.AllowMethod(w, r, http.MethodPost) {
		return nil, &Error{Status: http.StatusMethodNotAllowed, Code: codeMethod, Detail: r.Method + " is not allowed; use POST"}
	}
	id := r.PathValue("rp_id")
	if !record.ValidRPID(id) && !record.ValidAppID(id) {
		return nil, notFound()
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: codeContentType, Detail: "Content-Type must be application/json"}
	}
	if r.ContentLength > maxBody {
		return nil, tooLarge() // declared too large: refused before reading a byte
	}
	raw, err := decodeBody(http.MaxBytesReader(w, r.Body, maxBody), maxResponses)
	if err != nil {
		return nil, err
	}
	req, err := raw.validate()
	if err != nil {
		return nil, err
	}
	req.routeID = id
	return req, nil
}

// protocol is the request's protocol_version as the endpoint read it.
func (req *request) protocol() string {
	if req.v4 != nil {
		return "4.0"
	}
	return protocolVersion
}

func notFound() *Error {
	return &Error{Status: http.StatusNotFound, Code: codeNotFound, Detail: "no relying party or app with this id"}
}

// isJSON accepts application/json with no charset or charset=utf-8
// (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
func isJSON(contentType string) bool {
	params, ok := httpapi.HasMediaType(contentType, "application/json")
	return ok && httpapi.CharsetUTF8(params)
}

// rawRequest holds the members of the body after type checks only; nil
// means absent or null.
type rawRequest struct {
	protocolVersion, nonce, action, environment *string
	responses                                   []rawItem
	haveResponses                               bool
	sessionID                                   *string // 4.0 session proofs
}

type rawItem struct {
	identifier, merkleRoot, nullifier, proof, signalHash *string
	maxAge                                               *int64
	v4                                                   rawItemV4 // request4.go
}

// decodeBody reads the body with internal/leaf/strictjson, which rejects
// invalid UTF-8, duplicate member names at any depth and anything after
// the object: each would let two parsers read one body differently
// (doc/design.md §8). Member names then match exactly (encoding/json folds
// case); unknown members are ignored because IDKit clients forward their
// result object verbatim and add members across versions.
func decodeBody(body io.Reader, maxResponses int) (*rawRequest, *Error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, readError(err)
	}
	root, err := strictjson.Parse(b)
	if err != nil {
		return nil, jsonError(err)
	}
	if root.Kind() != strictjson.Object {
		return nil, badRequest("body must be a JSON object")
	}
	var raw rawRequest
	for name, v := range root.Members() {
		if err := raw.member(name, v, maxResponses); err != nil {
			return nil, err
		}
	}
	return &raw, nil
}

func (raw *rawRequest) member(name string, v strictjson.Value, maxResponses int) *Error {
	var dst **string
	switch name {
	case "protocol_version":
		dst = &raw.protocolVersion
	case "nonce":
		dst = &raw.nonce
	case "action":
		dst = &raw.action
	case "action_description":
		dst = new(*string) // type-checked, not stored (doc.go)
	case "environment":
		dst = &raw.environment
	case "responses":
		return raw.items(v, name, maxResponses)
	case "session_id":
		dst = &raw.sessionID
	default:
		return nil
	}
	return str(v, name, dst)
}

// member reads one member of the item at path.
func (it *rawItem) member(name string, v strictjson.Value, path string) *Error {
	var dst **string
	switch name {
	case "identifier":
		dst = &it.identifier
	case "merkle_root":
		dst = &it.merkleRoot
	case "nullifier":
		dst = &it.nullifier
	case "proof":
		return it.readProof(v, path+".proof")
	case "signal_hash":
		dst = &it.signalHash
	case "max_age":
		return integer(v, path+".max_age", &it.maxAge)
	case "sybil_score":
		return integer(v, path+".sybil_score", &it.v4.sybilScore)
	default:
		it.v4.member(name, v)
		return nil
	}
	return str(v, path+"."+name, dst)
}

func (raw *rawRequest) items(v strictjson.Value, path string, limit int) *Error {
	switch v.Kind() {
	case strictjson.Null:
		return nil
	case strictjson.Array:
	default:
		return invalid(path, "must be an array")
	}
	raw.haveResponses = true
	i := 0
	for elem := range v.Elements() {
		if i == limit {
			return invalid(path, fmt.Sprintf("must hold at most %d items", limit))
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		if elem.Kind() != strictjson.Object {
			return invalid(p, "must be an object")
		}
		var it rawItem
		for name, m := range elem.Members() {
			if err := it.member(name, m, p); err != nil {
				return err
			}
		}
		raw.responses = append(raw.responses, it)
		i++
	}
	return nil
}

// str reads a string member; null leaves *dst nil (absent).
func str(v strictjson.Value, path string, dst **string) *Error {
	if v.Kind() == strictjson.Null {
		return nil
	}
	s, ok := v.Unquote()
	if !ok {
		return invalid(path, "must be a string")
	}
	*dst = &s
	return nil
}

// integer reads an integer member written without fraction or exponent;
// null leaves *dst nil (absent).
func integer(v strictjson.Value, path string, dst **int64) *Error {
	if v.Kind() == strictjson.Null {
		return nil
	}
	if v.Kind() != strictjson.Number {
		return invalid(path, "must be an integer")
	}
	n, err := strconv.ParseInt(string(v.Bytes()), 10, 64)
	if err != nil {
		return invalid(path, "must be an integer")
	}
	*dst = &n
	return nil
}

// readError maps a failed read: an oversized body is 413.
func readError(err error) *Error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return tooLarge()
	}
	return badRequest("reading the body: " + err.Error())
}

func tooLarge() *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Detail: fmt.Sprintf("body exceeds %d bytes", maxBody)}
}

// jsonError maps a strictjson rejection: a repeated member name is a
// validation_error naming it (doc.go), anything else is not JSON we read.
func jsonError(err error) *Error {
	var e *strictjson.Error
	if errors.As(err, &e) && e.Err == strictjson.ErrDuplicate {
		return invalid(strings.TrimPrefix(strings.TrimPrefix(e.Path, "$"), "."), "appears more than once")
	}
	return badRequest("invalid JSON: " + err.Error())
}

// validate applies the value rules of doc/interfaces.md §2.6 and doc/design.md §5,
// reporting the first failure in member order.
func (raw *rawRequest) validate() (*request, *Error) {
	version, err := required(raw.protocolVersion, "protocol_version")
	if err != nil {
		return nil, err
	}
	if version == protocolVersionV4 {
		return raw.validateV4()
	}
	if version != protocolVersion {
		return nil, invalid("protocol_version", `must be "3.0" or "4.0"`)
	}
	if raw.sessionID != nil {
		return nil, invalid("session_id", `is only for protocol_version "4.0"`)
	}
	if _, err := required(raw.nonce, "nonce"); err != nil {
		return nil, err
	}
	action, err := present(raw.action, "action")
	if err != nil {
		return nil, err
	}
	env, verifierEnv, err := environment(raw.environment)
	if err != nil {
		return nil, err
	}
	if !raw.haveResponses {
		return nil, invalid("responses", "is required")
	}
	if len(raw.responses) == 0 {
		return nil, invalid("responses", "must hold at least one item")
	}
	req := &request{action: action, environment: env, verifierEnv: verifierEnv, envDefault: raw.environment == nil,
		claims: make([]record.Claim, len(raw.responses)), refused: make([]*record.ProofError, len(raw.responses))}
	for i, it := range raw.responses {
		c, err := it.claim(fmt.Sprintf("responses[%d]", i))
		if err == errV4Item {
			req.refused[i] = &record.ProofError{Code: record.CodeInvalidProof, Detail: "a protocol 4.0 item (a proof of 5 values) in a protocol 3.0 request"}
			err = nil
		}
		if err != nil {
			return nil, err
		}
		c.Action = action
		req.claims[i] = c
	}
	return req, nil
}

// required returns a present, non-empty string member.
func required(s *string, attribute string) (string, *Error) {
	if s == nil || *s == "" {
		return "", invalid(attribute, "is required")
	}
	return *s, nil
}

// present returns a string member that must be present and may be empty:
// the action, empty by design for sign-in and in the legacy (3.0) results
// IDKit 4 builds with action "".
func present(s *string, attribute string) (string, *Error) {
	if s == nil {
		return "", invalid(attribute, "is required")
	}
	return *s, nil
}

// environment returns the environment as given (default production) and
// the one whose trees and nullifiers it uses: sandbox is staging.
func environment(s *string) (given, verifier string, err *Error) {
	if s == nil {
		return "production", "production", nil
	}
	switch *s {
	case "production", "staging":
		return *s, *s, nil
	case "sandbox":
		return *s, "staging", nil
	}
	return "", "", invalid("environment", `must be "production", "staging" or "sandbox"`)
}

// errV4Item marks a protocol 4.0 item in a 3.0 request: it fails on its
// own, per item, rather than the whole request.
var errV4Item = &Error{Code: record.CodeInvalidProof}

func (it rawItem) claim(path string) (record.Claim, *Error) {
	var c record.Claim
	id, err := required(it.identifier, path+".identifier")
	if err != nil {
		return c, err
	}
	if !record.ValidIdentifier(id) {
		return c, invalid(path+".identifier", "must be one of "+strings.Join(record.Identifiers(), ", "))
	}
	c.Identifier = id
	if it.v4.proofWords != nil {
		return c, errV4Item
	}
	if c.MerkleRoot, err = fieldElement(it.merkleRoot, path+".merkle_root", anyHex); err != nil {
		return c, err
	}
	if c.NullifierHash, err = fieldElement(it.nullifier, path+".nullifier", nullifierSyntax); err != nil {
		return c, err
	}
	if c.Proof, err = required(it.proof, path+".proof"); err != nil {
		return c, err
	}
	signal := it.signalHash
	if signal == nil {
		s := defaultSignalHash
		signal = &s
	}
	if c.SignalHash, err = fieldElement(signal, path+".signal_hash", signalHashSyntax); err != nil {
		return c, err
	}
	c.MaxAge, err = maxAge(it.maxAge, path+".max_age")
	return c, err
}

// maxAge returns the root max age; absent means the maximum (doc/design.md §5).
func maxAge(n *int64, attribute string) (time.Duration, *Error) {
	if n == nil {
		return maxMaxAge * time.Second, nil
	}
	if *n < minMaxAge || *n > maxMaxAge {
		return 0, invalid(attribute, fmt.Sprintf("must be an integer from %d to %d (seconds)", minMaxAge, maxMaxAge))
	}
	return time.Duration(*n) * time.Second, nil
}

// hexRule is a request schema pattern checked before VerifyHex
// (doc/crypto.md §a note).
type hexRule struct {
	matches func(string) bool
	text    string // what the pattern requires, for the error detail
}

var (
	// anyHex leaves merkle_root to VerifyHex alone.
	anyHex = hexRule{func(string) bool { return true }, ""}
	// nullifierSyntax is ^(0x)?[0-9a-fA-F]+$.
	nullifierSyntax = hexRule{func(s string) bool {
		digits := strings.TrimPrefix(s, "0x")
		return digits != "" && strings.IndexFunc(digits, notHexDigit) < 0
	}, "must be hex digits with an optional 0x prefix"}
	// signalHashSyntax is ^0x[0-9a-f]+$.
	signalHashSyntax = hexRule{func(s string) bool {
		digits, ok := strings.CutPrefix(s, "0x")
		return ok && digits != "" && record.IsLowerHex(digits)
	}, "must be 0x followed by lowercase hex digits"}
)

func notHexDigit(c rune) bool {
	return !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
}

// fieldElement parses a required VerifyHex member and requires it < p:
// the verifier rejects larger public inputs (doc/crypto.md §g step 2), and
// this boundary reports them as the request error they are.
func fieldElement(s *string, attribute string, rule hexRule) ([32]byte, *Error) {
	v, err := required(s, attribute)
	if err != nil {
		return [32]byte{}, err
	}
	if !rule.matches(v) {
		return [32]byte{}, invalid(attribute, rule.text)
	}
	b, perr := field.ParseVerifyHex(v)
	if perr != nil {
		return [32]byte{}, invalid(attribute, "must be 1 to 64 hex digits with an optional 0x prefix")
	}
	var x fr.Element
	if x.SetBytesCanonical(b[:]) != nil {
		return [32]byte{}, invalid(attribute, "must be less than the BN254 scalar field modulus")
	}
	return b, nil
}

// canonicalHex is the FE output encoding of doc/crypto.md §a: 0x + 64 lowercase hex.
func canonicalHex(b [32]byte) string {
	return "0x" + hex.EncodeToString(b[:])
}

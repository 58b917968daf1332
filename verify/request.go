package verify

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
)

// Request limits and defaults (design.md §5, §8).
const (
	maxBody = 64 << 10
	// DefaultMaxResponses caps the responses array when Options.MaxResponses is 0.
	DefaultMaxResponses = 16
	protocolVersion     = "3.0"
	minMaxAge           = 3600   // seconds
	maxMaxAge           = 604800 // seconds, also the default
	// defaultSignalHash is hashToField of the empty signal (crypto.md §g).
	defaultSignalHash = "0x00c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a4"
)

// request is a validated verify request. Its claims lack AppID, which
// comes from the app the route id resolves to.
type request struct {
	routeID     string // "rp_…", "app_…" or "app_staging_…", syntax already checked
	action      string
	environment string // as given, echoed in the answer: production, staging or sandbox
	verifierEnv string // whose trees and nullifiers are used: production or staging
	envDefault  bool   // environment was absent (production unless the app is a staging app)
	claims      []record.Claim
}

// parse is the only code that reads the HTTP request. Checks run in the
// order: method, route id, content type, body.
func parse(w http.ResponseWriter, r *http.Request, maxResponses int) (*request, *Error) {
	if r.Method != http.MethodPost {
		return nil, &Error{Status: http.StatusMethodNotAllowed, Code: codeMethod, Detail: r.Method + " is not allowed; use POST"}
	}
	id := r.PathValue("rp_id")
	if !isRPID(id) && !isAppID(id) {
		return nil, notFound()
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: codeContentType, Detail: "Content-Type must be application/json"}
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

func notFound() *Error {
	return &Error{Status: http.StatusNotFound, Code: codeNotFound, Detail: "no relying party or app with this id"}
}

// isRPID reports whether s is "rp_" followed by 16 lowercase hex digits
// (the ids this service issues, record.App).
func isRPID(s string) bool {
	digits, ok := strings.CutPrefix(s, "rp_")
	return ok && len(digits) == 16 && isLowerHex(digits)
}

// isAppID reports whether s is "app_" or "app_staging_" followed by 32
// lowercase hex digits.
func isAppID(s string) bool { return record.ValidAppID(s) }

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// isJSON accepts application/json with no charset or charset=utf-8
// (RFC 8259 §8.1: JSON exchanged between systems is UTF-8).
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// rawRequest holds the members of the body after type checks only; nil
// means absent or null.
type rawRequest struct {
	protocolVersion, nonce, action, environment *string
	responses                                   []rawItem
	haveResponses                               bool
}

type rawItem struct {
	identifier, merkleRoot, nullifier, proof, signalHash *string
	maxAge                                               *int64
}

// decoder walks the body token by token. Unlike decoding into a struct, it
// matches member names exactly (encoding/json folds case) and rejects
// duplicate names instead of letting the last one win: both would let two
// parsers read one body differently (design.md §8). Unknown members are
// skipped: IDKit clients forward their result object verbatim and add
// members across versions.
type decoder struct{ dec *json.Decoder }

func decodeBody(body io.Reader, maxResponses int) (*rawRequest, *Error) {
	d := decoder{json.NewDecoder(body)}
	d.dec.UseNumber()
	tok, err := d.token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, badRequest("body must be a JSON object")
	}
	var raw rawRequest
	if err := d.members("", func(name, path string) *Error { return d.requestMember(&raw, name, path, maxResponses) }); err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, syntaxError(err, "body must hold exactly one JSON object")
	}
	return &raw, nil
}

func (d decoder) requestMember(raw *rawRequest, name, path string, maxResponses int) *Error {
	switch name {
	case "protocol_version":
		return d.str(path, &raw.protocolVersion)
	case "nonce":
		return d.str(path, &raw.nonce)
	case "action":
		return d.str(path, &raw.action)
	case "action_description":
		return d.str(path, new(*string)) // type-checked, not stored (doc.go)
	case "environment":
		return d.str(path, &raw.environment)
	case "responses":
		return d.items(path, raw, maxResponses)
	}
	return d.skip()
}

func (d decoder) itemMember(it *rawItem, name, path string) *Error {
	switch name {
	case "identifier":
		return d.str(path, &it.identifier)
	case "merkle_root":
		return d.str(path, &it.merkleRoot)
	case "nullifier":
		return d.str(path, &it.nullifier)
	case "proof":
		return d.str(path, &it.proof)
	case "signal_hash":
		return d.str(path, &it.signalHash)
	case "max_age":
		return d.integer(path, &it.maxAge)
	}
	return d.skip()
}

// members reads the members of an object whose '{' was just read, calling
// f for each with the decoder positioned at the member's value.
func (d decoder) members(path string, f func(name, path string) *Error) *Error {
	seen := make(map[string]bool)
	for d.dec.More() {
		tok, err := d.token()
		if err != nil {
			return err
		}
		name, _ := tok.(string) // encoding/json only yields string keys here
		p := name
		if path != "" {
			p = path + "." + name
		}
		if seen[name] {
			return invalid(p, "appears more than once")
		}
		seen[name] = true
		if err := f(name, p); err != nil {
			return err
		}
	}
	_, err := d.token() // the closing '}'
	return err
}

func (d decoder) items(path string, raw *rawRequest, limit int) *Error {
	tok, err := d.token()
	if err != nil || tok == nil {
		return err
	}
	if tok != json.Delim('[') {
		return invalid(path, "must be an array")
	}
	raw.haveResponses = true
	for i := 0; d.dec.More(); i++ {
		if i == limit {
			return invalid(path, fmt.Sprintf("must hold at most %d items", limit))
		}
		p := fmt.Sprintf("%s[%d]", path, i)
		tok, err := d.token()
		if err != nil {
			return err
		}
		if tok != json.Delim('{') {
			return invalid(p, "must be an object")
		}
		var it rawItem
		if err := d.members(p, func(name, path string) *Error { return d.itemMember(&it, name, path) }); err != nil {
			return err
		}
		raw.responses = append(raw.responses, it)
	}
	_, err = d.token() // the closing ']'
	return err
}

// str reads a string member; null leaves *dst nil (absent).
func (d decoder) str(path string, dst **string) *Error {
	tok, err := d.token()
	if err != nil || tok == nil {
		return err
	}
	s, ok := tok.(string)
	if !ok {
		return invalid(path, "must be a string")
	}
	*dst = &s
	return nil
}

// integer reads an integer member written without fraction or exponent;
// null leaves *dst nil (absent).
func (d decoder) integer(path string, dst **int64) *Error {
	tok, err := d.token()
	if err != nil || tok == nil {
		return err
	}
	num, ok := tok.(json.Number)
	if !ok {
		return invalid(path, "must be an integer")
	}
	n, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil {
		return invalid(path, "must be an integer")
	}
	*dst = &n
	return nil
}

// skip reads and discards the value of an unknown member.
func (d decoder) skip() *Error {
	var v json.RawMessage
	if err := d.dec.Decode(&v); err != nil {
		return syntaxError(err, "")
	}
	return nil
}

func (d decoder) token() (json.Token, *Error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxError(err, "")
	}
	return tok, nil
}

// syntaxError maps a decoding failure: an oversized body is 413, anything
// else is malformed JSON.
func syntaxError(err error, detail string) *Error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Detail: fmt.Sprintf("body exceeds %d bytes", maxBody)}
	}
	switch {
	case detail != "":
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		detail = "invalid JSON: unexpected end of body"
	default:
		detail = "invalid JSON: " + err.Error()
	}
	return badRequest(detail)
}

// validate applies the value rules of interfaces.md §2.6 and design.md §5,
// reporting the first failure in member order.
func (raw *rawRequest) validate() (*request, *Error) {
	version, err := required(raw.protocolVersion, "protocol_version")
	if err != nil {
		return nil, err
	}
	if version != protocolVersion {
		return nil, invalid("protocol_version", `must be "3.0"`)
	}
	if _, err := required(raw.nonce, "nonce"); err != nil {
		return nil, err
	}
	action, err := required(raw.action, "action")
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
		claims: make([]record.Claim, len(raw.responses))}
	for i, it := range raw.responses {
		c, err := it.claim(fmt.Sprintf("responses[%d]", i))
		if err != nil {
			return nil, err
		}
		c.Action, c.Environment = action, verifierEnv
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

func (it rawItem) claim(path string) (record.Claim, *Error) {
	var c record.Claim
	id, err := required(it.identifier, path+".identifier")
	if err != nil {
		return c, err
	}
	if !knownIdentifier(id) {
		return c, invalid(path+".identifier", "must be one of orb, device, document, secure_document, face, selfie")
	}
	c.Identifier = id
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

func knownIdentifier(s string) bool {
	switch s {
	case "orb", "device", "document", "secure_document", "face", "selfie":
		return true
	}
	return false
}

// maxAge returns the root max age; absent means the maximum (design.md §5).
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
// (crypto.md §a note).
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
		return ok && digits != "" && isLowerHex(digits)
	}, "must be 0x followed by lowercase hex digits"}
)

func notHexDigit(c rune) bool {
	return !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F')
}

// fieldElement parses a required VerifyHex member and requires it < p:
// the verifier rejects larger public inputs (crypto.md §g step 2), and
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

// canonicalHex is the FE output encoding of crypto.md §a: 0x + 64 lowercase hex.
func canonicalHex(b [32]byte) string {
	return "0x" + hex.EncodeToString(b[:])
}

package semaphore

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strings"
)

// word is a uint256 in big-endian order: one slot of the packed proof.
type word = [32]byte

// maxDecimalDigits is the length of 2^256−1 in decimal.
const maxDecimalDigits = 78

// ParseProof decodes the `proof` string of a verify request in any encoding
// of doc/crypto.md §g "Proof encodings": the `\"`-escaped string form, the nested
// JSON array form, or the ABI hex form, each of which may carry a padded
// compressed proof. Every point is fully checked before a Proof is returned.
func ParseProof(s string) (*Proof, error) {
	w, err := parsePackedWords(s)
	if err != nil {
		return nil, err
	}
	return ProofFromPacked(w)
}

// parsePackedWords applies doc/crypto.md §g "Proof encodings" steps 1–4.
func parsePackedWords(s string) ([8]word, error) {
	if strings.Contains(s, `\"`) {
		u, err := unescapeProof(s)
		if err != nil {
			return [8]word{}, err
		}
		s = u
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		return parseNestedWords(s)
	}
	return parseABIWords(s)
}

// unescapeProof is step 1: the string is itself a JSON string literal, so
// one pair of surrounding quotes is required and removed, and the JSON
// escapes inside are resolved.
func unescapeProof(s string) (string, error) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", formatError(`escaped proof must be wrapped in one pair of quotes`)
	}
	var out string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return "", formatError("escaped proof is not a valid JSON string")
	}
	return out, nil
}

// parseABIWords is step 3: "0x" and exactly 512 hex digits (8 words).
func parseABIWords(s string) ([8]word, error) {
	var w [8]word
	if len(s) != 2+8*64 || !strings.HasPrefix(s, "0x") {
		return w, formatError(`ABI proof must be "0x" followed by exactly 512 hex digits`)
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return w, formatError("ABI proof contains a non-hex digit")
	}
	for i := range w {
		copy(w[i][:], b[32*i:])
	}
	return w, nil
}

// parseNestedWords is step 2: exactly [[a0,a1],[[b0,b1],[b2,b3]],[c0,c1]].
func parseNestedWords(s string) ([8]word, error) {
	var w [8]word
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return w, formatError("nested proof is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return w, formatError("nested proof has data after the JSON value")
	}
	shapeErr := formatError("nested proof must have the shape [[a0,a1],[[b0,b1],[b2,b3]],[c0,c1]]")
	top, ok := pair(v, 3)
	if !ok {
		return w, shapeErr
	}
	a, okA := pair(top[0], 2)
	b, okB := pair(top[1], 2)
	c, okC := pair(top[2], 2)
	if !okA || !okB || !okC {
		return w, shapeErr
	}
	b0, okB0 := pair(b[0], 2)
	b1, okB1 := pair(b[1], 2)
	if !okB0 || !okB1 {
		return w, shapeErr
	}
	items := [8]any{a[0], a[1], b0[0], b0[1], b1[0], b1[1], c[0], c[1]}
	for i, item := range items {
		x, err := jsonWord(item)
		if err != nil {
			return w, err
		}
		w[i] = x
	}
	return w, nil
}

// pair returns v as a JSON array when it has exactly n elements.
func pair(v any, n int) ([]any, bool) {
	a, ok := v.([]any)
	return a, ok && len(a) == n
}

// jsonWord decodes one nested-form item: a string holding "0x"-hex or
// decimal digits, or a JSON integer.
func jsonWord(v any) (word, error) {
	switch x := v.(type) {
	case string:
		if rest, ok := strings.CutPrefix(x, "0x"); ok {
			return hexWord(rest)
		}
		return decimalWord(x)
	case json.Number:
		return decimalWord(string(x))
	default:
		return word{}, formatError("nested proof items must be strings or integers")
	}
}

// hexWord decodes 1–64 hex digits (either case) into a left-padded word.
func hexWord(digits string) (word, error) {
	var w word
	if len(digits) == 0 || len(digits) > 64 {
		return w, formatError("hex proof item must have 1 to 64 digits")
	}
	padded := strings.Repeat("0", 64-len(digits)) + digits
	if _, err := hex.Decode(w[:], []byte(padded)); err != nil {
		return w, formatError("hex proof item contains a non-hex digit")
	}
	return w, nil
}

// decimalWord decodes 1–78 ASCII digits whose value is below 2^256. Proof
// words are public, so math/big is fine here.
func decimalWord(digits string) (word, error) {
	var w word
	if len(digits) == 0 || len(digits) > maxDecimalDigits || strings.Trim(digits, "0123456789") != "" {
		return w, formatError("decimal proof item must be 1 to 78 digits")
	}
	n, _ := new(big.Int).SetString(digits, 10)
	if n.BitLen() > 256 {
		return w, formatError("decimal proof item is not below 2^256")
	}
	n.FillBytes(w[:])
	return w, nil
}

package semaphore

// Codes returned by (*Error).Code. They split rejections the way the verify
// API needs them: input that cannot be decoded at all, and input that decodes
// but is not a valid proof (or key, or public input).
const (
	// CodeInvalidFormat: bad hex, wrong JSON shape, wrong length.
	CodeInvalidFormat = "invalid_format"
	// CodeInvalidProof: decoded, but a coordinate is ≥ q, a point is off the
	// curve, outside the subgroup or at infinity, decompression fails, a
	// public input is ≥ r, or the pairing check fails.
	CodeInvalidProof = "invalid_proof"
)

// Error reports which rule an input broke.
type Error struct {
	code string
	rule string
}

func formatError(rule string) error { return &Error{code: CodeInvalidFormat, rule: rule} }

func proofError(rule string) error { return &Error{code: CodeInvalidProof, rule: rule} }

// Error implements the error interface.
func (e *Error) Error() string { return "semaphore: " + e.code + ": " + e.rule }

// Code is CodeInvalidFormat or CodeInvalidProof.
func (e *Error) Code() string { return e.code }

// Rule names the rule that failed, in words.
func (e *Error) Rule() string { return e.rule }

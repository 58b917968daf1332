package refresh

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/internal/leaf/ratelimit"
)

// Size limits (doc/design.md §8): the whole body, and each part by kind.
const (
	maxBody       = 32 << 20
	maxTextPart   = 64 << 10
	maxShare      = 8 << 20
	maxHashesJSON = 1 << 20
	maxHashesSign = 1 << 10
	// maxFraming bounds the bytes of a body that are not part contents:
	// preamble, boundaries and part headers. mime/multipart alone would
	// hold up to 10 MiB of one part's headers in memory.
	maxFraming = 64 << 10
)

// partLimit returns the size cap of a known form field, and false for a
// field the endpoint does not accept.
func partLimit(name string) (int64, bool) {
	switch {
	case name == partHashesJSON:
		return maxHashesJSON, true
	case name == partHashesSign:
		return maxHashesSign, true
	case slices.Contains(shareParts[:], name):
		return maxShare, true
	case name == "sub" || name == "encrypted_user_id" || isPCPPart(name):
		return maxTextPart, true
	}
	return 0, false
}

// envelope is what the handler learns from a request before reading its
// body: enough to refuse it cheaply (size, rate limits).
type envelope struct {
	client   string // rate-limit key: the client IP (IPv6: its /64)
	idComm   fr.Element
	idCommID string // canonical 0x + 64 lowercase hex
	proof    string // the x-zkp-proof header, still encoded
	boundary string
}

// parseEnvelope checks method, declared length, content type and the
// idComm query parameter.
func parseEnvelope(w http.ResponseWriter, r *http.Request) (*envelope, *Error) {
	if !httpapi.AllowMethod(w, r, http.MethodPost) {
		return nil, newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "use POST")
	}
	if r.ContentLength > maxBody {
		return nil, tooLarge()
	}
	params, ok := httpapi.HasMediaType(r.Header.Get("Content-Type"), "multipart/form-data")
	if !ok || params["boundary"] == "" {
		return nil, invalidRequest("Content-Type must be multipart/form-data with a boundary")
	}
	q := r.URL.Query()["idComm"]
	if len(q) != 1 {
		return nil, invalidRequest("exactly one idComm query parameter is required")
	}
	idComm, err := field.ParseIDCommitment(q[0])
	if err != nil {
		return nil, invalidRequest("idComm: " + err.Error())
	}
	// A repeated x-zkp-proof header is ambiguous: it counts as no valid
	// proof (401 INVALID_PROOF at its turn in the check order).
	var proof string
	if v := r.Header.Values("x-zkp-proof"); len(v) == 1 {
		proof = v[0]
	}
	return &envelope{
		client:   ratelimit.ClientKey(r.RemoteAddr),
		idComm:   idComm,
		idCommID: field.Format(&idComm),
		proof:    proof,
		boundary: params["boundary"],
	}, nil
}

// form is the parsed multipart body.
type form struct {
	sub   fr.Element
	subID string // canonical 0x + 64 lowercase hex
	pcp   pcp    // the PCP parts present; empty for a credential-only refresh
}

// parseForm streams the multipart body: every part a known field at most
// once, within its size cap, in identity transfer encoding, with at most
// maxFraming bytes of framing. Only the SHA-256 of each iris share is
// kept, so a request holds at most about 2 MiB (hashes.json and the text
// fields) whatever its body size. The sub field is then checked
// (doc/interfaces.md §7.2 INVALID_SUB, doc/crypto.md §a PrefixedHex).
// encrypted_user_id is read and discarded.
func parseForm(w http.ResponseWriter, r *http.Request, boundary string) (*form, *Error) {
	body := &framingLimit{r: http.MaxBytesReader(w, r.Body, maxBody)}
	mr := multipart.NewReader(body, boundary)
	fields := map[string][]byte{}
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readError(err)
		}
		name, value, perr := readPart(part, body)
		if perr != nil {
			return nil, perr
		}
		if _, dup := fields[name]; dup {
			return nil, invalidRequest("form field " + name + " appears more than once")
		}
		fields[name] = value
	}
	return newForm(fields)
}

// errFraming is framingLimit's refusal.
var errFraming = errors.New("multipart framing exceeds its limit")

// framingLimit reads a multipart body and refuses it once more than
// maxFraming of the bytes read were not handed out as part contents. The
// slack of mime/multipart's read-ahead buffer (4 KiB) is within the limit.
type framingLimit struct {
	r       io.Reader
	read    int64 // bytes read from r
	inParts int64 // bytes of them handed out as part contents
}

func (f *framingLimit) Read(p []byte) (int, error) {
	if f.read-f.inParts > maxFraming {
		return 0, errFraming
	}
	n, err := f.r.Read(p)
	f.read += int64(n)
	return n, err
}

// contents reads a part of the body, counting what it hands out.
func (f *framingLimit) contents(part io.Reader) io.Reader { return &partContents{part, f} }

type partContents struct {
	part io.Reader
	body *framingLimit
}

func (c *partContents) Read(p []byte) (int, error) {
	n, err := c.part.Read(p)
	c.body.inParts += int64(n)
	return n, err
}

func readPart(part *multipart.Part, body *framingLimit) (string, []byte, *Error) {
	name := part.FormName()
	limit, known := partLimit(name)
	if !known {
		return "", nil, invalidRequest(fmt.Sprintf("unknown form field %q", name))
	}
	switch strings.ToLower(part.Header.Get("Content-Transfer-Encoding")) {
	case "", "binary", "8bit", "7bit":
	default:
		return "", nil, invalidRequest("form field " + name + ": Content-Transfer-Encoding must be identity")
	}
	var (
		value []byte
		n     int64
		err   error
	)
	if slices.Contains(shareParts[:], name) {
		// Iris shares (8 MiB each) are only ever compared by their SHA-256
		// (doc/crypto.md §h step 6): hash them as they stream, never hold them.
		h := sha256.New()
		n, err = io.Copy(h, io.LimitReader(body.contents(part), limit+1))
		value = h.Sum(nil)
	} else {
		value, err = io.ReadAll(io.LimitReader(body.contents(part), limit+1))
		n = int64(len(value))
	}
	if err != nil {
		return "", nil, readError(err)
	}
	if n > limit {
		return "", nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodePayloadTooLarge,
			Message: fmt.Sprintf("form field %s exceeds %d bytes", name, limit)}
	}
	return name, value, nil
}

func newForm(fields map[string][]byte) (*form, *Error) {
	raw, ok := fields["sub"]
	if !ok {
		return nil, newError(http.StatusBadRequest, CodeInvalidSub, "sub is required")
	}
	sub, err := field.ParsePrefixedHex(string(raw))
	if err != nil {
		return nil, newError(http.StatusBadRequest, CodeInvalidSub, "sub: "+err.Error())
	}
	f := &form{sub: sub, subID: field.Format(&sub), pcp: pcp{}}
	for name, value := range fields {
		if isPCPPart(name) {
			f.pcp[name] = value
		}
	}
	return f, nil
}

// readError classifies a failure while streaming the body.
func readError(err error) *Error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge()
	}
	if errors.Is(err, errFraming) {
		return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge,
			fmt.Sprintf("multipart preamble, boundaries and part headers exceed %d bytes", maxFraming))
	}
	return invalidRequest("malformed multipart body")
}

func tooLarge() *Error {
	return newError(http.StatusRequestEntityTooLarge, CodePayloadTooLarge, fmt.Sprintf("body exceeds %d bytes", maxBody))
}

func invalidRequest(msg string) *Error {
	return newError(http.StatusBadRequest, CodeInvalidRequest, msg)
}

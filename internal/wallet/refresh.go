package wallet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/babyjub"
	"worldid/credential"
	"worldid/field"
	"worldid/record"
	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// refreshTreeDepth is the depth of the one-leaf tree of the refresh proof
// (doc/crypto.md §g "One-leaf root").
const refreshTreeDepth = 30

// maxRefreshResponse bounds the issuer's answer.
const maxRefreshResponse = 1 << 20

// RefreshRequest is one credential refresh (POST /api/v1/refresh).
type RefreshRequest struct {
	IssuerURL  string // base URL of the issuer, e.g. http://127.0.0.1:8080
	Identity   semaphore.Identity
	ProvingKey *prover.ProvingKey // the server's local key, depth 30
	Sub        string             // account id, "0x" + hex (PrefixedHex)
	PCP        *TestPCP           // nil for a credential-only refresh
	Now        time.Time          // the x-zkp-proof timestamp
}

// RefreshError is an error answer of the issuer.
type RefreshError struct {
	Status  int
	Code    string // e.g. SUB_MISMATCH; "" when the answer had none
	Message string
}

func (e *RefreshError) Error() string {
	return fmt.Sprintf("refresh: %d %s: %s", e.Status, e.Code, e.Message)
}

// Refresh sends req and returns the issued credential after checking it:
// canonical v0.3.0 JSON, signed by issuer, for the requested sub.
func Refresh(ctx context.Context, client *http.Client, req *RefreshRequest, issuer *babyjub.PublicKey) (*credential.Credential, error) {
	hr, err := NewRefreshHTTPRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRefreshResponse))
	if err != nil {
		return nil, err
	}
	sub, err := field.ParsePrefixedHex(req.Sub)
	if err != nil {
		return nil, err
	}
	return ParseRefreshResponse(resp.StatusCode, body, issuer, sub)
}

// NewRefreshHTTPRequest builds the multipart request with its x-zkp-proof
// (doc/design.md §7). Proving takes about a second.
func NewRefreshHTTPRequest(ctx context.Context, req *RefreshRequest) (*http.Request, error) {
	sub, err := field.ParsePrefixedHex(req.Sub)
	if err != nil {
		return nil, fmt.Errorf("wallet: sub: %w", err)
	}
	var hashesJSON []byte
	if req.PCP != nil {
		hashesJSON = req.PCP.HashesJSON
	}
	proof, err := RefreshProof(req.ProvingKey, req.Identity, sub, req.Now.Unix(), hashesJSON)
	if err != nil {
		return nil, err
	}
	body, contentType, err := refreshBody(req.Sub, req.PCP)
	if err != nil {
		return nil, err
	}
	commitment := req.Identity.Commitment()
	target := strings.TrimSuffix(req.IssuerURL, "/") + "/api/v1/refresh?idComm=" + url.QueryEscape(field.Format(&commitment))
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", contentType)
	hr.Header.Set("x-zkp-proof", proof)
	return hr, nil
}

// RefreshProof makes the x-zkp-proof header value: standard base64 of the
// record.RefreshProof JSON with a Semaphore proof that id is the only leaf
// of a depth-30 tree, for the signal record.RefreshSignal(sub, ts, SHA-256
// of hashesJSON when not nil, also sent as pcp_digest so that the server
// verifies the proof before reading the body) and the refresh external
// nullifier.
func RefreshProof(pk *prover.ProvingKey, id semaphore.Identity, sub fr.Element, ts int64, hashesJSON []byte) (string, error) {
	if pk == nil || pk.Depth() != refreshTreeDepth {
		return "", fmt.Errorf("wallet: the refresh proof needs a depth-%d proving key", refreshTreeDepth)
	}
	tree, err := semaphore.BuildTree(refreshTreeDepth, []fr.Element{id.Commitment()})
	if err != nil {
		return "", err
	}
	path, err := tree.Path(0)
	if err != nil {
		return "", err
	}
	digest := ""
	if hashesJSON != nil {
		d := sha256.Sum256(hashesJSON)
		digest = hex.EncodeToString(d[:])
	}
	subHex := field.Format(&sub)
	signal := semaphore.HashToField([]byte(record.RefreshSignal(subHex, ts, digest)))
	ext := semaphore.ExternalNullifier(record.RefreshProofAppID, record.RefreshProofAction)
	proof, in, err := prover.Prove(pk, id, path, signal, ext)
	if err != nil {
		return "", err
	}
	commitment := id.Commitment()
	b, err := json.Marshal(record.RefreshProof{
		IDCommitment:  field.Format(&commitment),
		Sub:           subHex,
		Timestamp:     ts,
		MerkleRoot:    field.Format(&in.Root),
		NullifierHash: field.Format(&in.NullifierHash),
		Proof:         proof.ABIHex(),
		PCPDigest:     digest,
	})
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// refreshBody writes the multipart form: sub, and the PCP fields and files.
func refreshBody(sub string, pcp *TestPCP) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.WriteField("sub", sub); err != nil {
		return nil, "", err
	}
	if pcp != nil {
		names := make([]string, 0, len(pcp.Fields))
		for name := range pcp.Fields {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if err := mw.WriteField(name, pcp.Fields[name]); err != nil {
				return nil, "", err
			}
		}
		for _, f := range []struct {
			name string
			data []byte
		}{{"hashes.json", pcp.HashesJSON}, {"hashes.sign", pcp.HashesSign}} {
			if err := writeFile(mw, f.name, f.data); err != nil {
				return nil, "", err
			}
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

func writeFile(mw *multipart.Writer, name string, data []byte) error {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, name))
	h.Set("Content-Type", "application/octet-stream")
	w, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// ParseRefreshResponse reads the issuer's answer: on 200 the credential
// must be padded standard base64 of canonical v0.3.0 JSON, signed by
// issuer, for sub; any other status is a *RefreshError.
func ParseRefreshResponse(status int, body []byte, issuer *babyjub.PublicKey, sub fr.Element) (*credential.Credential, error) {
	var r struct {
		Success    bool   `json:"success"`
		Credential string `json:"credential"`
		Error      string `json:"error"`
		Message    string `json:"message"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &RefreshError{Status: status, Message: "answer is not JSON: " + err.Error()}
	}
	if status != http.StatusOK || !r.Success {
		return nil, &RefreshError{Status: status, Code: r.Error, Message: r.Message}
	}
	data, err := base64.StdEncoding.Strict().DecodeString(r.Credential)
	if err != nil {
		return nil, errors.New("wallet: credential is not padded standard base64")
	}
	c, err := credential.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("wallet: %w", err)
	}
	if canon, err := c.MarshalJSON(); err != nil || !bytes.Equal(canon, data) {
		return nil, errors.New("wallet: credential JSON is not canonical v0.3.0")
	}
	if !c.Verify(issuer) {
		return nil, errors.New("wallet: credential is not signed by the expected issuer")
	}
	if c.Sub != sub {
		return nil, errors.New("wallet: credential is for another sub")
	}
	return c, nil
}

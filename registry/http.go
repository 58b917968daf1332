package registry

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/leaf/strictjson"
	"worldid/record"
)

// maxInclusionBody bounds the inclusion-proof request (doc/design.md §8).
const maxInclusionBody = 4 << 10

// InclusionProofRequest is the body of POST /api/v1/inclusion-proof.
type InclusionProofRequest struct {
	IdentityCommitment string `json:"identity_commitment"`
	Identifier         string `json:"identifier"`  // default orb
	Environment        string `json:"environment"` // default production
}

// InclusionProof is its answer: the leaf's Merkle path, bottom-up, and the
// tree's current root. PathIndices[i] is bit i of Index (doc/crypto.md §g).
type InclusionProof struct {
	Root        string   `json:"root"`
	Index       int      `json:"index"`
	Siblings    []string `json:"siblings"`
	PathIndices []int    `json:"path_indices"`
}

// Register adds the wallet-facing endpoints to mux; provingKeyFile is the
// local proving key the wallet downloads.
func (r *Registry) Register(mux *http.ServeMux, provingKeyFile string) {
	mux.HandleFunc("POST /api/v1/inclusion-proof", r.serveInclusionProof)
	mux.HandleFunc("GET /api/v1/semaphore/proving-key", func(w http.ResponseWriter, req *http.Request) {
		f, err := os.Open(provingKeyFile)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "proving key not available")
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "unavailable", "proving key not available")
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		http.ServeContent(w, req, "", st.ModTime(), f)
	})
}

func (r *Registry) serveInclusionProof(w http.ResponseWriter, req *http.Request) {
	identifier, env, commitment, err := parseInclusionRequest(w, req)
	if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "body exceeds 4 KiB")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	path, err := r.InclusionProof(identifier, env, commitment)
	switch {
	case errors.Is(err, ErrUnknownTree):
		writeError(w, http.StatusBadRequest, "invalid_request", "unknown identifier or environment")
		return
	case errors.Is(err, record.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "the identity commitment is not in this tree")
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal", "internal error")
		return
	}
	root := path.Root()
	out := InclusionProof{Root: field.Format(&root), Index: path.Index}
	for i := range path.Siblings {
		out.Siblings = append(out.Siblings, field.Format(&path.Siblings[i]))
		out.PathIndices = append(out.PathIndices, (path.Index>>i)&1)
	}
	writeJSON(w, http.StatusOK, out)
}

// parseInclusionRequest is the only code reading the request.
func parseInclusionRequest(w http.ResponseWriter, req *http.Request) (identifier, env string, c fr.Element, err error) {
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt != "application/json" {
		return "", "", c, errors.New("Content-Type must be application/json")
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxInclusionBody))
	if err != nil {
		return "", "", c, err
	}
	// Exact member names, no duplicates, nothing after the value.
	var body InclusionProofRequest
	if err := strictjson.Decode(raw, &body); err != nil {
		return "", "", c, errors.New("invalid JSON body: " + err.Error())
	}
	if c, err = field.ParseIDCommitment(body.IdentityCommitment); err != nil {
		return "", "", c, errors.New("identity_commitment: " + err.Error())
	}
	return orDefault(body.Identifier, "orb"), orDefault(body.Environment, "production"), c, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, detail string) {
	writeJSON(w, status, map[string]string{"code": code, "detail": detail})
}

package registry

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/httpapi"
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

// HandlerOptions configures the wallet-facing endpoints. Registry and
// ProvingKeyFile are required.
type HandlerOptions struct {
	Registry *Registry
	// ProvingKeyFile is the local proving key the wallet downloads.
	ProvingKeyFile string
	Log            *slog.Logger // default: discard
}

// Handler serves the wallet-facing endpoints: POST
// /api/v1/inclusion-proof and GET /api/v1/semaphore/proving-key.
type Handler struct {
	reg            *Registry
	provingKeyFile string
	log            *slog.Logger
}

// NewHandler checks o and returns the wallet-facing endpoints.
func NewHandler(o HandlerOptions) (*Handler, error) {
	switch {
	case o.Registry == nil:
		return nil, errors.New("registry: HandlerOptions.Registry is nil")
	case o.ProvingKeyFile == "":
		return nil, errors.New("registry: HandlerOptions.ProvingKeyFile is empty")
	}
	return &Handler{reg: o.Registry, provingKeyFile: o.ProvingKeyFile, log: cmp.Or(o.Log, slog.New(slog.DiscardHandler))}, nil
}

// Register adds the wallet-facing endpoints to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/inclusion-proof", h.serveInclusionProof)
	mux.HandleFunc("GET /api/v1/semaphore/proving-key", h.serveProvingKey)
}

func (h *Handler) serveProvingKey(w http.ResponseWriter, req *http.Request) {
	f, err := os.Open(h.provingKeyFile)
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
}

func (h *Handler) serveInclusionProof(w http.ResponseWriter, req *http.Request) {
	identifier, env, commitment, err := parseInclusionRequest(w, req)
	if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "body exceeds 4 KiB")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	path, err := h.reg.InclusionProof(identifier, env, commitment)
	switch {
	case errors.Is(err, ErrUnknownTree):
		writeError(w, http.StatusBadRequest, "invalid_request", "unknown identifier or environment")
		return
	case errors.Is(err, record.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "the identity commitment is not in this tree")
		return
	case err != nil:
		writeFailure(w, httpapi.FailureStatus(req.Context(), h.log, "registry", err))
		return
	}
	root := path.Root()
	out := InclusionProof{Root: field.Format(&root), Index: path.Index}
	for i := range path.Siblings {
		out.Siblings = append(out.Siblings, field.Format(&path.Siblings[i]))
		out.PathIndices = append(out.PathIndices, (path.Index>>i)&1)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

// parseInclusionRequest is the only code reading the request.
func parseInclusionRequest(w http.ResponseWriter, req *http.Request) (identifier, env string, c fr.Element, err error) {
	if _, ok := httpapi.HasMediaType(req.Header.Get("Content-Type"), "application/json"); !ok {
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
	return cmp.Or(body.Identifier, "orb"), cmp.Or(body.Environment, "production"), c, nil
}

func writeError(w http.ResponseWriter, status int, code, detail string) {
	httpapi.WriteJSON(w, status, map[string]string{"code": code, "detail": detail})
}

// writeFailure answers a triaged failure status in this interface's body.
func writeFailure(w http.ResponseWriter, status int) {
	switch status {
	case httpapi.StatusClientClosed:
		writeError(w, status, "client_closed", "the client closed the request")
	case http.StatusServiceUnavailable:
		writeError(w, status, "unavailable", "storage cannot accept writes")
	default:
		writeError(w, status, "internal", "internal error")
	}
}

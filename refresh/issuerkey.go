package refresh

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// IssuerPath publishes the issuer's EdDSA public key, so holders and
// verifiers can check a credential's issuer (doc/crypto.md §f: "the caller
// also checks that issuer is the expected issuer key").
const IssuerPath = "/api/v1/refresh/issuer"

// issuerInfo is the body of GET IssuerPath.
type issuerInfo struct {
	Issuer struct {
		PK [2]string `json:"pk"` // BabyJubJub affine [x, y], canonical decimals
	} `json:"issuer"`
	Compressed     string `json:"compressed"` // 32-byte compressed key, hex
	IssuerSchemaID uint64 `json:"issuer_schema_id"`
}

// issuerDocument is encoded once: the key does not change while serving.
func (h *Handler) issuerDocument() []byte {
	var info issuerInfo
	x, y := h.issuer.Coordinates()
	info.Issuer.PK = [2]string{x, y}
	info.Compressed = hex.EncodeToString(h.issuer.Bytes())
	info.IssuerSchemaID = h.o.SchemaID
	b, _ := json.Marshal(info) // plain strings and integers: cannot fail
	return b
}

func (h *Handler) serveIssuer(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Write(doc)
	}
}

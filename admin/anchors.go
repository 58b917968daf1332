package admin

import (
	"errors"
	"net/http"

	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/oprfproof"
	"worldid/record"
)

// AnchorRequest is the body of POST /admin/anchors: a World ID 4.0 trust
// anchor — the credential issuer's public key of an issuer_schema_id
// (kind "issuer_key", id the schema id in decimal) or the OPRF public key
// of a relying party (kind "oprf_key", id its rp_id). x and y are
// BabyJubJub coordinates, decimal or 0x-hex. Adding an anchor of the same
// kind and id replaces it.
type AnchorRequest struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	X    string `json:"x"`
	Y    string `json:"y"`
}

// AnchorList answers GET /admin/anchors: the stored anchors (a default,
// such as this server's own PoH issuer key for schema 1, is not listed).
type AnchorList struct {
	Anchors []record.TrustAnchor `json:"anchors"`
}

func (a *api) addAnchor(w http.ResponseWriter, r *http.Request) {
	var req AnchorRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	anchor := record.TrustAnchor{Kind: req.Kind, ID: req.ID, X: req.X, Y: req.Y, At: a.Now()}
	if err := a.Registry.AddTrustAnchor(r.Context(), anchor); err != nil {
		// The registry validates the anchor; only the store's failures are not the request's.
		if !errors.Is(err, record.ErrUnavailable) {
			err = badRequest("%v", err)
		}
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("trust anchor set", req.Kind+"/"+req.ID)
	httpapi.WriteJSON(w, http.StatusCreated, req)
}

func (a *api) listAnchors(w http.ResponseWriter, r *http.Request) {
	anchors, err := a.Registry.TrustAnchors(r.Context())
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if anchors == nil {
		anchors = []record.TrustAnchor{}
	}
	httpapi.WriteJSON(w, http.StatusOK, AnchorList{Anchors: anchors})
}

// addRootV4 is POST /admin/roots with protocol_version "4.0".
func (a *api) addRootV4(w http.ResponseWriter, r *http.Request, req AddRootRequest) {
	if req.Environment == "" {
		req.Environment = "production"
	}
	if !record.ValidEnvironment(req.Environment) {
		writeError(w, r, a.Log, badRequest("environment must be production or staging"))
		return
	}
	// The spellings of an anchor coordinate (decimal or 0x-hex, below r).
	root, err := oprfproof.ParseFieldElement(req.Root)
	if err != nil {
		writeError(w, r, a.Log, badRequest("root must be a field element in decimal or 0x-hex"))
		return
	}
	req.Root = field.Format(&root)
	if req.At, err = a.rootTime(req.At); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.Registry.AddRootV4(r.Context(), req.Environment, root, req.At); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	req.Identifier, req.Depth = "", 0
	a.audit("external root added", record.V4RootTree(req.Environment), "root", req.Root)
	httpapi.WriteJSON(w, http.StatusCreated, req)
}

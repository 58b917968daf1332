package admin

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
)

// Registry is the identity registry the admin API feeds.
type Registry interface {
	AddIdentity(ctx context.Context, identifier, environment string, commitment fr.Element) (int, fr.Element, error)
	AddExternalRoot(ctx context.Context, identifier, environment string, root fr.Element, depth int, at time.Time) error
}

// AddIdentityRequest is the body of POST /admin/identities.
type AddIdentityRequest struct {
	Identifier         string `json:"identifier"`  // default orb
	Environment        string `json:"environment"` // default production
	IdentityCommitment string `json:"identity_commitment"`
}

// AddedIdentity answers POST /admin/identities.
type AddedIdentity struct {
	Index int    `json:"index"`
	Root  string `json:"root"`
}

// AddRootRequest is the body of POST /admin/roots: a root of a tree kept
// elsewhere, checked with the published Semaphore v3 key of Depth.
type AddRootRequest struct {
	Identifier  string    `json:"identifier"`  // default orb
	Environment string    `json:"environment"` // default production
	Root        string    `json:"root"`
	Depth       int       `json:"depth"` // default 30 (World ID)
	At          time.Time `json:"at"`    // when mined or finalized; default now
}

func (a *api) addIdentity(w http.ResponseWriter, r *http.Request) {
	var req AddIdentityRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, a.Log, err)
		return
	}
	tree, err := parseTree(&req.Identifier, &req.Environment)
	if err != nil {
		writeError(w, a.Log, err)
		return
	}
	c, err := field.ParseIDCommitment(req.IdentityCommitment)
	if err != nil {
		writeError(w, a.Log, badRequest("identity_commitment: %v", err))
		return
	}
	index, root, err := a.Registry.AddIdentity(r.Context(), req.Identifier, req.Environment, c)
	if errors.Is(err, record.ErrExists) {
		err = &Error{http.StatusConflict, "conflict", "the identity commitment is already in " + tree}
	}
	if err != nil {
		writeError(w, a.Log, err)
		return
	}
	a.Log.Info("admin: identity added", "tree", tree, "index", index)
	writeJSON(w, http.StatusCreated, AddedIdentity{Index: index, Root: field.Format(&root)})
}

func (a *api) addRoot(w http.ResponseWriter, r *http.Request) {
	var req AddRootRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, a.Log, err)
		return
	}
	tree, err := parseTree(&req.Identifier, &req.Environment)
	if err != nil {
		writeError(w, a.Log, err)
		return
	}
	root, err := field.ParseStrict(req.Root)
	if err != nil {
		writeError(w, a.Log, badRequest("root: %v", err))
		return
	}
	if req.Depth == 0 {
		req.Depth = 30
	}
	if req.Depth < 16 || req.Depth > 32 {
		writeError(w, a.Log, badRequest("depth must be 16 to 32 (the published Semaphore v3 keys)"))
		return
	}
	if req.At.IsZero() {
		req.At = a.Now()
	}
	if err := a.Registry.AddExternalRoot(r.Context(), req.Identifier, req.Environment, root, req.Depth, req.At); err != nil {
		writeError(w, a.Log, err)
		return
	}
	a.Log.Info("admin: external root added", "tree", tree, "depth", req.Depth)
	writeJSON(w, http.StatusCreated, req)
}

// parseTree applies the defaults and validates the tree name parts.
func parseTree(identifier, environment *string) (string, error) {
	if *identifier == "" {
		*identifier = "orb"
	}
	if *environment == "" {
		*environment = "production"
	}
	if !record.ValidIdentifier(*identifier) {
		return "", badRequest("identifier must be one of %v", record.Identifiers())
	}
	if !record.ValidEnvironment(*environment) {
		return "", badRequest("environment must be production or staging")
	}
	return *identifier + "/" + *environment, nil
}

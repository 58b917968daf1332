package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/httpapi"
	"worldid/record"
)

// Registry is the identity registry the admin API feeds.
type Registry interface {
	AddIdentities(ctx context.Context, identifier, environment string, commitments []fr.Element) (first int, root fr.Element, err error)
	AddExternalRoot(ctx context.Context, identifier, environment string, root fr.Element, depth int, at time.Time) error
	// AddRootV4 records a World ID 4.0 registry root of the environment.
	AddRootV4(ctx context.Context, environment string, root fr.Element, at time.Time) error
	// AddTrustAnchor validates and stores a World ID 4.0 trust anchor.
	AddTrustAnchor(ctx context.Context, a record.TrustAnchor) error
	TrustAnchors(ctx context.Context) ([]record.TrustAnchor, error)
}

// MaxIdentitiesPerRequest is the largest batch. Every batch of canonical
// commitments then fits the 64 KiB body limit: the longest, 77 decimal
// digits, takes 80 bytes quoted and separated, and 800 of them 64,000.
const MaxIdentitiesPerRequest = 800

// AddIdentityRequest is the body of POST /admin/identities: one
// commitment, or a batch of 1 to 800 inserted atomically, never both.
type AddIdentityRequest struct {
	Identifier          string   `json:"identifier"`  // default orb
	Environment         string   `json:"environment"` // default production
	IdentityCommitment  string   `json:"identity_commitment,omitempty"`
	IdentityCommitments []string `json:"identity_commitments,omitempty"`
}

// AddedIdentity answers POST /admin/identities: the first new leaf's
// index, how many were added at consecutive indexes, and the new root.
type AddedIdentity struct {
	Index int    `json:"index"`
	Count int    `json:"count"`
	Root  string `json:"root"`
}

// maxRootClockSkew is how far in the future an external root's "at" may
// be: clock differences between the operator's source and this server.
const maxRootClockSkew = 5 * time.Minute

// AddRootRequest is the body of POST /admin/roots: a root of a tree kept
// elsewhere, checked with the published Semaphore v3 key of Depth; or,
// with protocol_version "4.0", a root of World's 4.0 registry for the
// environment (identifier and depth then do not apply).
type AddRootRequest struct {
	ProtocolVersion string    `json:"protocol_version,omitempty"` // "3.0" (default) or "4.0"
	Identifier      string    `json:"identifier"`                 // default orb
	Environment     string    `json:"environment"`                // default production
	Root            string    `json:"root"`
	Depth           int       `json:"depth"` // default 30 (World ID)
	At              time.Time `json:"at"`    // when mined or finalized; default now
}

func (a *api) addIdentity(w http.ResponseWriter, r *http.Request) {
	var req AddIdentityRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	tree, err := parseTree(&req.Identifier, &req.Environment)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	commitments, err := parseCommitments(&req)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	index, root, err := a.Registry.AddIdentities(r.Context(), req.Identifier, req.Environment, commitments)
	if errors.Is(err, record.ErrExists) {
		err = &Error{http.StatusConflict, "conflict", "an identity commitment is already in " + tree + "; none was added"}
	}
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("identities added", tree, "index", index, "count", len(commitments))
	httpapi.WriteJSON(w, http.StatusCreated, AddedIdentity{Index: index, Count: len(commitments), Root: field.Format(&root)})
}

// parseCommitments returns identity_commitment, or the identity_commitments
// batch: 1 to MaxIdentitiesPerRequest, pairwise distinct as field elements.
func parseCommitments(req *AddIdentityRequest) ([]fr.Element, error) {
	if req.IdentityCommitments == nil {
		c, err := parseCommitment("identity_commitment", req.IdentityCommitment)
		if err != nil {
			return nil, err
		}
		return []fr.Element{c}, nil
	}
	switch n := len(req.IdentityCommitments); {
	case req.IdentityCommitment != "":
		return nil, badRequest("identity_commitment and identity_commitments are mutually exclusive")
	case n == 0 || n > MaxIdentitiesPerRequest:
		return nil, badRequest("identity_commitments must hold 1 to %d commitments, not %d", MaxIdentitiesPerRequest, n)
	}
	out := make([]fr.Element, len(req.IdentityCommitments))
	seen := make(map[fr.Element]int, len(out))
	for i, s := range req.IdentityCommitments {
		name := fmt.Sprintf("identity_commitments[%d]", i)
		c, err := parseCommitment(name, s)
		if err != nil {
			return nil, err
		}
		// Distinct encodings of one element ("42", "0x2a") are one commitment.
		if j, ok := seen[c]; ok {
			return nil, badRequest("%s repeats identity_commitments[%d]", name, j)
		}
		seen[c], out[i] = i, c
	}
	return out, nil
}

// parseCommitment parses one commitment (doc/crypto.md §a IDCommitment); 0 is
// the empty leaf, which a tree cannot hold.
func parseCommitment(name, s string) (fr.Element, error) {
	c, err := field.ParseIDCommitment(s)
	switch {
	case err != nil:
		return fr.Element{}, badRequest("%s: %v", name, err)
	case c.IsZero():
		return fr.Element{}, badRequest("%s: 0 is the empty leaf, not an identity commitment", name)
	}
	return c, nil
}

func (a *api) addRoot(w http.ResponseWriter, r *http.Request) {
	var req AddRootRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if req.ProtocolVersion == "4.0" {
		a.addRootV4(w, r, req)
		return
	}
	if req.ProtocolVersion != "" && req.ProtocolVersion != "3.0" {
		writeError(w, r, a.Log, badRequest(`protocol_version must be "3.0" or "4.0"`))
		return
	}
	tree, err := parseTree(&req.Identifier, &req.Environment)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	root, err := field.ParseStrict(req.Root)
	if err != nil {
		writeError(w, r, a.Log, badRequest("root: %v", err))
		return
	}
	if req.Depth == 0 {
		req.Depth = 30
	}
	if req.Depth < 16 || req.Depth > 32 {
		writeError(w, r, a.Log, badRequest("depth must be 16 to 32 (the published Semaphore v3 keys)"))
		return
	}
	if req.At, err = a.rootTime(req.At); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.Registry.AddExternalRoot(r.Context(), req.Identifier, req.Environment, root, req.Depth, req.At); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("external root added", tree, "root", req.Root, "depth", req.Depth)
	httpapi.WriteJSON(w, http.StatusCreated, req)
}

// rootTime returns when a root was mined or finalized: at, or now if at is
// zero. A root's age decides when verify stops accepting it, so a time in
// the future, which would keep it valid for that much longer, is refused
// beyond maxRootClockSkew.
func (a *api) rootTime(at time.Time) (time.Time, error) {
	now := a.Now()
	if at.IsZero() {
		return now, nil
	}
	if at.After(now.Add(maxRootClockSkew)) {
		return at, badRequest("at must not be more than %v in the future (server time %s)", maxRootClockSkew, now.UTC().Format(time.RFC3339))
	}
	return at, nil
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

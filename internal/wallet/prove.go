package wallet

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/semaphore"
	"worldid/semaphore/prover"
)

// Wallet holds an identity and talks to one worldid server.
type Wallet struct {
	Identity semaphore.Identity
	Server   string       // base URL of the server's public listener
	HTTP     *http.Client // must not follow redirects for SignIn; see NewHTTPClient
	// KeyCache, if set, is where the downloaded proving key is cached.
	KeyCache string
	// Paths, if set, gives the identity's Merkle path for a tree instead
	// of the server's inclusion-proof endpoint: the developer simulator's
	// test identities are in a tree the server keeps in memory only.
	Paths func(identifier, environment string) (semaphore.MerklePath, error)

	pk *prover.ProvingKey
}

// NewHTTPClient returns a client that does not follow redirects, so the
// wallet can report where a sign-in would send the browser.
func NewHTTPClient() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ResponseItem is a proof in the shape IDKit (ResponseItemV3) sends it to
// a relying party, which forwards it to /api/v4/verify.
type ResponseItem struct {
	Identifier string `json:"identifier"`
	MerkleRoot string `json:"merkle_root"`
	Nullifier  string `json:"nullifier"`
	Proof      string `json:"proof"`
	SignalHash string `json:"signal_hash"`
	MaxAge     int    `json:"max_age,omitempty"`
}

// ProofRequest says what to prove.
type ProofRequest struct {
	AppID, Action, Signal string
	Identifier            string // tree: orb (default), device, …
	Environment           string // production (default) or staging
}

// SignalHash hashes a signal the way IDKit 4 does (semaphore.HashSignal).
func SignalHash(signal string) fr.Element { return semaphore.HashSignal(signal) }

// Prove makes a proof for req with the signal hashed by SignalHash.
func (w *Wallet) Prove(ctx context.Context, req ProofRequest) (ResponseItem, error) {
	return w.ProveHash(ctx, req, SignalHash(req.Signal))
}

// ProveHash makes a proof for req binding the given signal hash; it fetches
// the inclusion proof and (once) the proving key from the server.
func (w *Wallet) ProveHash(ctx context.Context, req ProofRequest, signalHash fr.Element) (ResponseItem, error) {
	identifier := cmp.Or(req.Identifier, "orb")
	pk, err := w.ProvingKey(ctx)
	if err != nil {
		return ResponseItem{}, err
	}
	path, err := w.path(ctx, identifier, cmp.Or(req.Environment, "production"))
	if err != nil {
		return ResponseItem{}, err
	}
	ext := semaphore.ExternalNullifier(req.AppID, req.Action)
	proof, _, err := prover.Prove(pk, w.Identity, path, signalHash, ext)
	if err != nil {
		return ResponseItem{}, fmt.Errorf("wallet: proving: %w", err)
	}
	root, nh := path.Root(), w.Identity.NullifierHash(ext)
	return ResponseItem{Identifier: identifier, MerkleRoot: field.Format(&root), Nullifier: field.Format(&nh),
		Proof: proof.ABIHex(), SignalHash: field.Format(&signalHash)}, nil
}

// path is the identity's Merkle path in a tree: from Paths if set, else
// from the server.
func (w *Wallet) path(ctx context.Context, identifier, environment string) (semaphore.MerklePath, error) {
	if w.Paths != nil {
		return w.Paths(identifier, environment)
	}
	return w.InclusionProof(ctx, identifier, environment)
}

// inclusionProof mirrors the server's POST /api/v1/inclusion-proof answer.
type inclusionProof struct {
	Root        string   `json:"root"`
	Index       int      `json:"index"`
	Siblings    []string `json:"siblings"`
	PathIndices []int    `json:"path_indices"`
}

// InclusionProof fetches the identity's Merkle path in a tree.
func (w *Wallet) InclusionProof(ctx context.Context, identifier, environment string) (semaphore.MerklePath, error) {
	c := w.Identity.Commitment()
	body, _ := json.Marshal(map[string]string{"identity_commitment": field.Format(&c), "identifier": identifier, "environment": environment})
	var ip inclusionProof
	if err := w.postJSON(ctx, "/api/v1/inclusion-proof", body, &ip); err != nil {
		return semaphore.MerklePath{}, fmt.Errorf("wallet: inclusion proof (is the identity added to %s/%s?): %w", identifier, environment, err)
	}
	path := semaphore.MerklePath{Index: ip.Index, Leaf: c}
	for _, s := range ip.Siblings {
		v, err := field.ParseStrict(s)
		if err != nil {
			return path, fmt.Errorf("wallet: inclusion proof sibling: %w", err)
		}
		path.Siblings = append(path.Siblings, v)
	}
	if root := path.Root(); field.Format(&root) != ip.Root {
		return path, fmt.Errorf("wallet: inclusion proof does not lead to the root the server named")
	}
	return path, nil
}

// UseProvingKey sets the proving key, so that ProvingKey neither reads
// KeyCache nor downloads it (a server proving for itself has it loaded).
func (w *Wallet) UseProvingKey(pk *prover.ProvingKey) { w.pk = pk }

// ProvingKey returns the server's local proving key, from KeyCache if it
// holds one, else downloaded (and cached).
func (w *Wallet) ProvingKey(ctx context.Context) (*prover.ProvingKey, error) {
	if w.pk != nil {
		return w.pk, nil
	}
	if w.KeyCache != "" {
		if f, err := os.Open(w.KeyCache); err == nil {
			defer f.Close()
			if pk, err := prover.ReadProvingKey(bufio.NewReaderSize(f, 1<<20)); err == nil {
				w.pk = pk
				return pk, nil
			}
		}
	}
	raw, err := w.get(ctx, "/api/v1/semaphore/proving-key")
	if err != nil {
		return nil, fmt.Errorf("wallet: proving key: %w", err)
	}
	pk, err := prover.ReadProvingKey(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("wallet: proving key: %w", err)
	}
	if w.KeyCache != "" {
		os.WriteFile(w.KeyCache, raw, 0o600) // a cache: failing to write only costs a download
	}
	w.pk = pk
	return pk, nil
}

func (w *Wallet) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.Server+path, nil)
	if err != nil {
		return nil, err
	}
	return w.do(req, nil)
}

func (w *Wallet) postJSON(ctx context.Context, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.Server+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	_, err = w.do(req, out)
	return err
}

// do sends req and reads the answer; non-2xx statuses become errors
// carrying the body.
func (w *Wallet) do(req *http.Request, out any) ([]byte, error) {
	resp, err := w.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, bytes.TrimSpace(raw))
	}
	if out != nil {
		return raw, json.Unmarshal(raw, out)
	}
	return raw, nil
}

package wallet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"worldid/babyjub"
)

// The files of a test PCP directory (`worldid wallet pcp`).
const (
	pcpFieldsFile = "fields.json"
	pcpHashesFile = "hashes.json"
	pcpSignFile   = "hashes.sign"
)

// SavePCP writes p into dir (created 0700) as fields.json, hashes.json and
// hashes.sign.
func SavePCP(dir string, p *TestPCP) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fields, err := json.MarshalIndent(p.Fields, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{pcpFieldsFile: fields, pcpHashesFile: p.HashesJSON, pcpSignFile: p.HashesSign} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// LoadPCP reads a directory written by SavePCP.
func LoadPCP(dir string) (*TestPCP, error) {
	var p TestPCP
	fields, err := os.ReadFile(filepath.Join(dir, pcpFieldsFile))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(fields, &p.Fields); err != nil {
		return nil, fmt.Errorf("wallet: %s: %w", pcpFieldsFile, err)
	}
	if p.HashesJSON, err = os.ReadFile(filepath.Join(dir, pcpHashesFile)); err != nil {
		return nil, err
	}
	if p.HashesSign, err = os.ReadFile(filepath.Join(dir, pcpSignFile)); err != nil {
		return nil, err
	}
	return &p, nil
}

// FetchIssuerKey reads the issuer's public key from GET
// {issuerURL}/api/v1/refresh/issuer.
func FetchIssuerKey(ctx context.Context, client *http.Client, issuerURL string) (*babyjub.PublicKey, error) {
	w := &Wallet{Server: issuerURL, HTTP: client}
	raw, err := w.get(ctx, "/api/v1/refresh/issuer")
	if err != nil {
		return nil, fmt.Errorf("wallet: issuer key: %w", err)
	}
	var doc struct {
		Issuer struct {
			PK [2]string `json:"pk"`
		} `json:"issuer"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("wallet: issuer key: %w", err)
	}
	return babyjub.ParsePublicKeyCoordinates(doc.Issuer.PK[0], doc.Issuer.PK[1])
}

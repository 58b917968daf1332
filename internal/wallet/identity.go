package wallet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"worldid/field"
	"worldid/semaphore"
)

// identityFile is the on-disk form of an identity.
type identityFile struct {
	Nullifier  string `json:"nullifier"`
	Trapdoor   string `json:"trapdoor"`
	Commitment string `json:"commitment"`
}

// NewIdentityFile draws a fresh identity and writes it to path, which must
// not exist yet.
func NewIdentityFile(path string, rand io.Reader) (semaphore.Identity, error) {
	id, err := semaphore.NewIdentity(rand)
	if err != nil {
		return id, err
	}
	c := id.Commitment()
	b, err := json.MarshalIndent(identityFile{field.Format(&id.Nullifier), field.Format(&id.Trapdoor), field.Format(&c)}, "", "  ")
	if err != nil {
		return id, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return id, fmt.Errorf("wallet: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return id, err
	}
	return id, f.Close()
}

// LoadIdentity reads an identity file and checks its commitment.
func LoadIdentity(path string) (semaphore.Identity, error) {
	var id semaphore.Identity
	b, err := os.ReadFile(path)
	if err != nil {
		return id, fmt.Errorf("wallet: %w (create one with 'worldid wallet new')", err)
	}
	var f identityFile
	if err := json.Unmarshal(b, &f); err != nil {
		return id, fmt.Errorf("wallet: %s: %w", path, err)
	}
	if id.Nullifier, err = field.ParseStrict(f.Nullifier); err != nil {
		return id, fmt.Errorf("wallet: %s: nullifier: %w", path, err)
	}
	if id.Trapdoor, err = field.ParseStrict(f.Trapdoor); err != nil {
		return id, fmt.Errorf("wallet: %s: trapdoor: %w", path, err)
	}
	if c := id.Commitment(); f.Commitment != field.Format(&c) {
		return id, errors.New("wallet: " + path + ": commitment does not match the secrets")
	}
	return id, nil
}

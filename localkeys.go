package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"worldid/babyjub"
	"worldid/registry"
	"worldid/semaphore/prover"
)

// sharedFiles is implemented by backends that several replicas share
// (PostgreSQL). The key files every replica must agree on live there
// rather than in each data dir.
type sharedFiles interface {
	SharedFile(ctx context.Context, name string) ([]byte, bool, error)
	StoreSharedFile(ctx context.Context, name string, content []byte, now time.Time) ([]byte, error)
}

// keyFile is a file of key material in the data dir.
type keyFile struct {
	name   string
	create func() ([]byte, error) // its content on first start
	// cached keeps the shared content in the data dir too, for files
	// served from there; secrets stay in the database only.
	cached bool
}

// load returns the file's content, creating it on first start. With a
// shared backend the database holds it: the first replica stores its own
// (the data dir's file if there is one, so an existing deployment keeps its
// keys), the others adopt it, and a data-dir file that differs from the
// database's stops the start rather than run with two keys.
func (k keyFile) load(ctx context.Context, dir string, shared sharedFiles, now func() time.Time) ([]byte, error) {
	path := filepath.Join(dir, k.name)
	local, err := os.ReadFile(path)
	haveLocal := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if shared == nil && haveLocal {
		return local, nil
	}
	var content []byte
	found := false
	if shared != nil {
		if content, found, err = shared.SharedFile(ctx, k.name); err != nil {
			return nil, fmt.Errorf("%s from the store: %w", k.name, err)
		}
	}
	if !found {
		if content = local; !haveLocal {
			if content, err = k.create(); err != nil {
				return nil, err
			}
		}
		if shared != nil {
			if content, err = shared.StoreSharedFile(ctx, k.name, content, now()); err != nil {
				return nil, fmt.Errorf("%s into the store: %w", k.name, err)
			}
		}
	}
	if haveLocal && !bytes.Equal(local, content) {
		return nil, fmt.Errorf("%s differs from the one in the store, which every replica shares; move the file away to use the store's", path)
	}
	if !haveLocal && (shared == nil || k.cached) {
		if err := writeFileAtomic(path, content, 0o600); err != nil {
			return nil, err
		}
	}
	return content, nil
}

// provingKeyFile holds the local Semaphore proving key (with its verifying
// key) in the data dir, where the wallet endpoint serves it from. It is
// public parameters, but the setup's toxic waste died with the process
// that made it (see SECURITY.md).
const provingKeyFile = "semaphore-local.pk"

// loadOrCreateProvingKey reads the local proving key, running the
// single-party Groth16 setup on first start.
func loadOrCreateProvingKey(ctx context.Context, dir string, shared sharedFiles, log *slog.Logger) (*prover.ProvingKey, string, error) {
	content, err := keyFile{name: provingKeyFile, cached: true, create: func() ([]byte, error) {
		log.Info("generating the local Semaphore proving key (first start; takes a few seconds)", "depth", registry.TreeDepth)
		start := time.Now()
		pk, _, err := prover.Setup(registry.TreeDepth)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if _, err := pk.WriteTo(&buf); err != nil {
			return nil, err
		}
		log.Info("local Semaphore proving key ready", "bytes", buf.Len(), "took", time.Since(start).Round(time.Millisecond))
		return buf.Bytes(), nil
	}}.load(ctx, dir, shared, time.Now)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, provingKeyFile)
	pk, err := prover.ReadProvingKey(bytes.NewReader(content))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return pk, path, nil
}

// issuerKeyFile holds the credential issuer's EdDSA seed (32 bytes, hex).
const issuerKeyFile = "issuer-eddsa.seed"

// loadOrCreateIssuerKey reads the issuer's BabyJubJub key, creating it on
// first start.
func loadOrCreateIssuerKey(ctx context.Context, dir string, shared sharedFiles, rand io.Reader) (*babyjub.PrivateKey, error) {
	content, err := keyFile{name: issuerKeyFile, create: func() ([]byte, error) {
		var seed [32]byte
		if _, err := io.ReadFull(rand, seed[:]); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(seed[:]) + "\n"), nil
	}}.load(ctx, dir, shared, time.Now)
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(content)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", issuerKeyFile, err)
	}
	return babyjub.NewPrivateKey(seed)
}

package main

import (
	"bufio"
	"bytes"
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
	"worldid/semaphore"
)

// provingKeyFile holds the local Semaphore proving key (with its verifying
// key) in the data dir. It is public parameters, but the setup's toxic
// waste died with the process that made it (see SECURITY.md).
const provingKeyFile = "semaphore-local.pk"

// loadOrCreateProvingKey reads the local proving key, running the
// single-party Groth16 setup on first start.
func loadOrCreateProvingKey(dir string, log *slog.Logger) (*semaphore.ProvingKey, string, error) {
	path := filepath.Join(dir, provingKeyFile)
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		pk, err := semaphore.ReadProvingKey(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		return pk, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	log.Info("generating the local Semaphore proving key (first start; takes a few seconds)", "depth", registry.TreeDepth)
	start := time.Now()
	pk, _, err := semaphore.Setup(registry.TreeDepth)
	if err != nil {
		return nil, "", err
	}
	var buf bytes.Buffer
	if _, err := pk.WriteTo(&buf); err != nil {
		return nil, "", err
	}
	if err := writeFileAtomic(path, buf.Bytes(), 0o600); err != nil {
		return nil, "", err
	}
	log.Info("local Semaphore proving key ready", "path", path, "bytes", buf.Len(), "took", time.Since(start).Round(time.Millisecond))
	return pk, path, nil
}

// issuerKeyFile holds the credential issuer's EdDSA seed (32 bytes, hex).
const issuerKeyFile = "issuer-eddsa.seed"

// loadOrCreateIssuerKey reads the issuer's BabyJubJub key, creating it on
// first start.
func loadOrCreateIssuerKey(dir string, rand io.Reader) (*babyjub.PrivateKey, error) {
	path := filepath.Join(dir, issuerKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		var seed [32]byte
		if _, err := io.ReadFull(rand, seed[:]); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(path, []byte(hex.EncodeToString(seed[:])+"\n"), 0o600); err != nil {
			return nil, err
		}
		return babyjub.NewPrivateKey(seed[:])
	}
	if err != nil {
		return nil, err
	}
	seed, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return babyjub.NewPrivateKey(seed)
}

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

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

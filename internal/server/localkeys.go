package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
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

// ProvingKeyFile holds the local Semaphore proving key (with its verifying
// key) in the data dir, where the wallet endpoint serves it from. It is
// public parameters, but the setup's toxic waste died with the process
// that made it (see SECURITY.md).
const ProvingKeyFile = "semaphore-local.pk"

// VerifyingKeyFile holds the local verifying key as snarkjs JSON, written
// with the proving key: a start reads these few kilobytes instead of the
// proving key, which takes compiling the circuit to read.
const VerifyingKeyFile = "semaphore-local.vk.json"

// loadOrCreateLocalKey returns the local verifying key and the path of the
// proving key file. The first start runs the single-party Groth16 setup
// and writes both files; a data dir from before the verifying-key file
// gets it derived once from the proving key. With the JSON store a later
// start reads only the verifying key; with a shared store the proving key
// is also fetched, to cache it and to check the data dir's copy.
func loadOrCreateLocalKey(ctx context.Context, dir string, shared sharedFiles, log *slog.Logger) (*semaphore.VerifyingKey, string, error) {
	pkPath, vkPath := filepath.Join(dir, ProvingKeyFile), filepath.Join(dir, VerifyingKeyFile)
	var made struct{ pk, vk []byte } // what this start's setup made, if it ran
	var pkContent []byte             // nil unless the proving key was loaded
	if _, err := os.Stat(pkPath); err != nil || shared != nil {
		pkContent, err = keyFile{name: ProvingKeyFile, cached: true, create: func() ([]byte, error) {
			if _, err := os.Stat(vkPath); err == nil {
				return nil, fmt.Errorf("%s is there but %s is not: restore the proving key, or move the verifying key away too to run a new setup (proofs for the old key then stop verifying)", vkPath, ProvingKeyFile)
			}
			var err error
			made.pk, made.vk, err = runLocalSetup(log)
			return made.pk, err
		}}.load(ctx, dir, shared, time.Now)
		if err != nil {
			return nil, "", err
		}
	}
	vkContent, err := keyFile{name: VerifyingKeyFile, cached: true, create: func() ([]byte, error) {
		// Another replica's setup may have won the store: use ours only
		// if the proving key in use is ours.
		if made.pk != nil && bytes.Equal(pkContent, made.pk) {
			return made.vk, nil
		}
		return deriveVerifyingKey(pkPath, pkContent, log)
	}}.load(ctx, dir, shared, time.Now)
	if err != nil {
		return nil, "", err
	}
	vk, err := semaphore.ParseVerifyingKey(vkContent)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", vkPath, err)
	}
	return vk, pkPath, nil
}

// runLocalSetup runs the single-party Groth16 setup and returns the
// proving key file and the verifying key's snarkjs JSON.
func runLocalSetup(log *slog.Logger) (pkFile, vkJSON []byte, err error) {
	log.Info("generating the local Semaphore proving key (first start; takes a few seconds)", "depth", registry.TreeDepth)
	start := time.Now()
	pk, vk, err := prover.Setup(registry.TreeDepth)
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	if _, err := pk.WriteTo(&buf); err != nil {
		return nil, nil, err
	}
	if vkJSON, err = json.Marshal(vk); err != nil {
		return nil, nil, err
	}
	log.Info("local Semaphore proving key ready", "bytes", buf.Len(), "took", time.Since(start).Round(time.Millisecond))
	return buf.Bytes(), vkJSON, nil
}

// deriveVerifyingKey reads the proving key (content, or the file at path
// when content is nil) and returns its verifying key's snarkjs JSON.
func deriveVerifyingKey(path string, content []byte, log *slog.Logger) ([]byte, error) {
	log.Info("deriving the local verifying key from the proving key (once, for a data dir made before " + VerifyingKeyFile + ")")
	if content == nil {
		var err error
		if content, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	pk, err := prover.ReadProvingKey(bytes.NewReader(content))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return json.Marshal(pk.VerifyingKey())
}

// IssuerKeyFile holds the credential issuer's EdDSA seed (32 bytes, hex).
const IssuerKeyFile = "issuer-eddsa.seed"

// loadOrCreateIssuerKey reads the issuer's BabyJubJub key, creating it on
// first start.
func loadOrCreateIssuerKey(ctx context.Context, dir string, shared sharedFiles, rand io.Reader) (*babyjub.PrivateKey, error) {
	content, err := keyFile{name: IssuerKeyFile, create: func() ([]byte, error) {
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
		return nil, fmt.Errorf("%s: %w", IssuerKeyFile, err)
	}
	return babyjub.NewPrivateKey(seed)
}

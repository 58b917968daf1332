package bench

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"worldid/record"
	"worldid/store"
)

// CodeBatch is a prepared batch of authorization codes for the token
// scenario: the client that may redeem them and the codes themselves. It
// is the file -mint-codes writes and -codes reads, so codes from another
// provider (a peer measured side by side) can be fed to the same load
// generator.
type CodeBatch struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	RedirectURI  string   `json:"redirect_uri"`
	Codes        []string `json:"codes"`
}

// mintedCodeLifetime is how long minted codes stay redeemable: longer than
// a production code's ten minutes, so that the batch survives the server's
// start and a long timed phase.
const mintedCodeLifetime = time.Hour

// mintWriters is how many concurrent SaveCode calls fill the store, so
// that the engine's group commit shares each fsync among them.
const mintWriters = 64

// MintCodes is a benchmark tool, not a server feature: it opens the JSON
// store in dataDir while no server runs (Open takes the store's lock, so a
// running server makes it fail), creates a confidential app and saves n
// authorization codes for it exactly as a finished sign-in would
// (oidc's AuthorizationResponse: the code's SHA-256 as its key, scope
// openid, orb level), and returns them. It replaces the one proof per code
// a real sign-in costs (about 3 codes/s), which is too slow to fill a long
// timed phase.
func MintCodes(ctx context.Context, dataDir string, n int, now time.Time) (CodeBatch, error) {
	db, err := store.Open(dataDir, store.Options{})
	if err != nil {
		return CodeBatch{}, fmt.Errorf("open the data directory offline (stop the server first): %w", err)
	}
	defer db.Close()
	app, secret := newBenchApp(now)
	if err := db.CreateApp(ctx, app); err != nil {
		return CodeBatch{}, err
	}
	batch := CodeBatch{ClientID: app.ID, ClientSecret: secret, RedirectURI: benchRedirect, Codes: make([]string, n)}
	for i := range batch.Codes {
		batch.Codes[i] = base64.RawURLEncoding.EncodeToString(randomBytes(32))
	}
	return batch, saveCodes(ctx, db, app.ID, batch.Codes, now)
}

// saveCodes stores codes from mintWriters goroutines.
func saveCodes(ctx context.Context, db *store.DB, clientID string, codes []string, now time.Time) error {
	var wg sync.WaitGroup
	errs := make([]error, mintWriters)
	for w := range mintWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(codes) && errs[w] == nil; i += mintWriters {
				errs[w] = db.SaveCode(ctx, mintedCode(clientID, codes[i], now))
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// mintedCode is the record a sign-in approved at now would store for code.
func mintedCode(clientID, code string, now time.Time) record.AuthCode {
	sum := sha256.Sum256([]byte(code))
	return record.AuthCode{
		ID: hex.EncodeToString(sum[:]), GrantID: hex.EncodeToString(randomBytes(16)), ClientID: clientID,
		RedirectURI: benchRedirect, Scope: "openid", Nonce: rand.Text(),
		Subject: "0x" + hex.EncodeToString(randomBytes(31)), VerificationLevel: "orb", AuthTime: now,
		ExpiresAt: now.Add(mintedCodeLifetime), RetainUntil: now.Add(2 * mintedCodeLifetime),
	}
}

// newBenchApp is a confidential app with a fresh secret, in the admin
// API's id formats (record.ValidAppID).
func newBenchApp(now time.Time) (record.App, string) {
	secret := base64.RawURLEncoding.EncodeToString(randomBytes(32))
	sum := sha256.Sum256([]byte(secret))
	return record.App{
		ID: "app_" + hex.EncodeToString(randomBytes(16)), RPID: "rp_" + hex.EncodeToString(randomBytes(8)),
		Name: "bench codes", SecretHash: hex.EncodeToString(sum[:]), RedirectURIs: []string{benchRedirect},
		CreatedAt: now,
	}, secret
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return b
}

// writeCodeBatch writes b as JSON to path (mode 0600: it holds a secret).
func writeCodeBatch(path string, b CodeBatch) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// readCodeBatch reads a -codes file.
func readCodeBatch(path string) (CodeBatch, error) {
	var b CodeBatch
	data, err := os.ReadFile(path)
	if err != nil {
		return b, err
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, fmt.Errorf("%s: %w", path, err)
	}
	if b.ClientID == "" || b.RedirectURI == "" || len(b.Codes) == 0 {
		return b, fmt.Errorf("%s: client_id, redirect_uri and codes are required", path)
	}
	return b, nil
}

// runMint is `worldid-bench -mint-codes FILE -data DIR -n N`.
func runMint(ctx context.Context, bf *benchFlags, stdout io.Writer) error {
	start := time.Now()
	b, err := MintCodes(ctx, bf.DataDir, bf.pool, start.UTC())
	if err != nil {
		return err
	}
	if err := writeCodeBatch(bf.mint, b); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bench: minted %d codes for %s in %s into %s\n", len(b.Codes), b.ClientID, time.Since(start).Round(time.Millisecond), bf.mint)
	return nil
}

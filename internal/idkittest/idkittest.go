package idkittest

import (
	"bufio"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"worldid/bridge/rpsig"
)

//go:embed idkit_requester.mjs
var requester []byte

// Versions and the variables naming their install directories.
var dirEnv = map[string]string{
	"2": "WORLDID_IDKIT2_DIR", // @worldcoin/idkit-core 1.x
	"4": "WORLDID_IDKIT4_DIR", // @worldcoin/idkit-core 4.x
}

// Versions are the IDKit versions Start runs.
var Versions = []string{"2", "4"}

// IDKit is a running requester.
type IDKit struct {
	ConnectURL string
	lines      *bufio.Scanner
}

// Require skips the test, saying why, unless node and IDKit version's
// npm package are there.
func Require(t *testing.T, version string) string {
	t.Helper()
	env := dirEnv[version]
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("%s is not set: install @worldcoin/idkit-core with npm as .ci/run does to run IDKit %s against the bridge", env, version)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: IDKit's requester runs under Node")
	}
	return dir
}

// Start runs IDKit version ("2" or "4") against the relay at bridgeURL for
// appID (a staging app: IDKit accepts a loopback http bridge only for
// those), action and signal, and returns once IDKit printed its connect URL.
func Start(t *testing.T, version, bridgeURL, appID, action, signal string) *IDKit {
	t.Helper()
	dir := Require(t, version)
	script := filepath.Join(t.TempDir(), "idkit_requester.mjs")
	if err := os.WriteFile(script, requester, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{script, version, dir, bridgeURL, appID, action, signal}
	if version == "4" {
		args = append(args, rpContext(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "node", args...)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	k := &IDKit{lines: bufio.NewScanner(out)}
	if !k.lines.Scan() || !strings.HasPrefix(k.lines.Text(), "https://") {
		t.Fatalf("IDKit %s printed no connect URL: %q\n%s", version, k.lines.Text(), stderr.String())
	}
	k.ConnectURL = k.lines.Text()
	return k
}

// Outcome waits for what IDKit returns: its result object, or its error
// code.
func (k *IDKit) Outcome(t *testing.T) (result json.RawMessage, errCode string) {
	t.Helper()
	if !k.lines.Scan() {
		t.Fatalf("IDKit ended without an outcome: %v", k.lines.Err())
	}
	var o struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(k.lines.Bytes(), &o); err != nil {
		t.Fatalf("IDKit outcome %q: %v", k.lines.Text(), err)
	}
	return o.Result, o.Error
}

// rpContext is an rp_context signed with a fresh key: IDKit 4 requires one
// even for World ID 3.0 (legacy) presets.
func rpContext(t *testing.T) string {
	t.Helper()
	var raw [32]byte
	rand.Read(raw[:])
	raw[0], raw[31] = 0, raw[31]|1 // below the group order, not zero
	key, err := rpsig.ParsePrivateKey(hex.EncodeToString(raw[:]))
	if err != nil {
		t.Fatal(err)
	}
	c, err := key.SignRequest(rand.Reader, time.Now(), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"rp_id": "rp_0123456789abcdef", "nonce": c.NonceHex(),
		"created_at": c.CreatedAt, "expires_at": c.ExpiresAt, "signature": c.SignatureHex()})
	return string(b)
}

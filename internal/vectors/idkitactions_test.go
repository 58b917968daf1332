package vectors

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestIDKitActionsRerun recomputes idkit_actions.json with
// @worldcoin/idkit-core itself when $WORLDID_IDKIT_DIR names a directory
// whose node_modules holds it (npm install @worldcoin/idkit-core@4.3.0)
// and node is installed: every action_field and hash_signal must match.
// Without both it is skipped; the committed outputs are the vectors.
func TestIDKitActionsRerun(t *testing.T) {
	dir := os.Getenv("WORLDID_IDKIT_DIR")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		t.Skip("set WORLDID_IDKIT_DIR to a directory with @worldcoin/idkit-core installed, and install node")
	}
	var f IDKitActions
	Load(t, "idkit_actions.json", &f)
	actions := make([]string, len(f.Actions))
	for i, a := range f.Actions {
		actions[i] = a.Action
	}
	in, _ := json.Marshal(actions)
	// The action field is what computeRpSignatureMessage appends (bytes
	// 49..81), as testdata/SOURCES.md describes.
	const script = `
const { computeRpSignatureMessage } = require("@worldcoin/idkit-core/signing");
const { hashSignal } = require("@worldcoin/idkit-core/hashing");
const hex = (b) => "0x" + Buffer.from(b).toString("hex");
const out = JSON.parse(process.argv[1]).map((a) => [hex(computeRpSignatureMessage(new Uint8Array(32), 0, 0, a).slice(49, 81)), hashSignal(a)]);
process.stdout.write(JSON.stringify(out));`
	cmd := exec.Command(node, "-e", script, string(in))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got [][2]string
	if err := json.Unmarshal(raw, &got); err != nil || len(got) != len(f.Actions) {
		t.Fatalf("node output %s: %v", raw, err)
	}
	for i, a := range f.Actions {
		if got[i] != [2]string{a.ActionField, a.HashSignal} {
			t.Errorf("action %q: idkit-core now gives %v, the vector holds %s %s", a.Action, got[i], a.ActionField, a.HashSignal)
		}
	}
}

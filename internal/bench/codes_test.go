package bench

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMintedCodesRedeemOnce: codes minted into a stopped server's data
// directory are each redeemed once by the token scenario (-codes), and a
// second pass over the same file redeems none of them.
func TestMintedCodesRedeemOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server twice")
	}
	ctx := t.Context()
	dir := t.TempDir()
	srv, err := startBenchServer(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := srv.DataDir()
	if _, err := MintCodes(ctx, dataDir, 1, time.Now().UTC()); err == nil {
		t.Fatal("minted into the data directory of a running server")
	}
	srv.Shutdown()
	file := filepath.Join(dir, "codes.json")
	var out bytes.Buffer
	if err := Main(ctx, []string{"-mint-codes", file, "-data", dataDir, "-n", "20"}, &out, &out); err != nil {
		t.Fatal(err, out.String())
	}
	srv, err = startBenchServer(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	for pass, want := range []string{"token  4  20  0", "token  4  20  20"} {
		out.Reset()
		args := []string{"-server", srv.BaseURL(), "-codes", file, "-clients", "4", "-duration", "20s", "token"}
		if err := Main(ctx, args, &out, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(firstRow(out.String())), "  "); !strings.HasPrefix(got, want) {
			t.Errorf("pass %d: %q, want it to start with %q", pass, got, want)
		}
	}
}

func firstRow(table string) string {
	lines := strings.Split(table, "\n")
	if len(lines) < 2 {
		return ""
	}
	return lines[1]
}

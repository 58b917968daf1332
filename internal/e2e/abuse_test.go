package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
	"worldid/internal/bench"
)

// TestBenchAbuse runs `worldid-bench abuse` briefly against a real server:
// legitimate verify, sign-in and refresh traffic under a flood
// of every unauthenticated surface. It checks what must hold on any
// machine — every legitimate request succeeds, no junk adds anything to
// the store (a pending sign-in is a sealed token, not a record), the server's RSS stays bounded — and logs
// the latency ratios, which depend on the machine's spare cores.
func TestBenchAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dataDir := hardenedDataDir(t)
	p := startProc(t, dataDir)
	keyedWallet(t, ctx, p) // the wallet's proving key cache: none; the bench downloads it
	cmd := exec.CommandContext(ctx, benchBinary(t), "-server", p.public, "-admin-url", p.adm, "-data", dataDir,
		"-server-pid", fmt.Sprint(p.cmd.Process.Pid), "-duration", "4s", "-clients", "10", "-legit-rate", "1", "-json", "abuse")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench abuse: %v\n%s", err, stderr.String())
	}
	var report bench.AbuseReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	var text strings.Builder
	bench.WriteAbuse(&text, &report)
	t.Logf("\n%s", text.String())
	if len(report.Legit) != 3 || len(report.Junk) != 5 || len(report.JunkOnly) != 5 {
		t.Fatalf("report shape: %d legitimate scenarios, %d and %d junk kinds", len(report.Legit), len(report.Junk), len(report.JunkOnly))
	}
	for _, l := range report.Legit {
		if l.Loaded.Requests == 0 || l.SuccessRate() != 100 {
			t.Errorf("%s under the flood: %d requests, %.2f%% succeeded (first error %q)", l.Name, l.Loaded.Requests, l.SuccessRate(), l.Loaded.FirstError)
		}
	}
	for _, j := range report.JunkOnly {
		if j.Requests == 0 || j.Store == nil {
			t.Errorf("%s: %d requests, store measured: %v", j.Name, j.Requests, j.Store != nil)
			continue
		}
		if j.Store.Writes != 0 || j.Store.Bytes != 0 {
			t.Errorf("%s added %d writes, %d bytes to the store", j.Name, j.Store.Writes, j.Store.Bytes)
		}
	}
	noServerErrors(t, "alone", report.JunkOnly)
	noServerErrors(t, "with legitimate clients", report.Junk)
	if report.RSSBefore == 0 || report.RSSGrowth() >= 64<<20 {
		t.Errorf("server RSS %d → peak %d bytes", report.RSSBefore, report.RSSPeak)
	}
}

// noServerErrors fails t for every 5xx a kind of junk got: junk is
// refused with its 4xx, it never breaks the server.
func noServerErrors(t *testing.T, phase string, junk []bench.FloodResult) {
	t.Helper()
	for _, j := range junk {
		for status, n := range j.Statuses {
			if status >= 500 {
				t.Errorf("%s (%s) got %d× %d", j.Name, phase, n, status)
			}
		}
	}
}

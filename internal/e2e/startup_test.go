package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"worldid/admin"
	"worldid/internal/server"
	"worldid/store"
)

// fillLeaves stores n identity commitments in the orb/production tree of
// the data dir's store, in batches of 10,000 an hour apart (the last
// within the week a root stays valid), as `identity add -file` would.
func fillLeaves(tb testing.TB, dir string, n int) {
	tb.Helper()
	db, err := store.Open(dir, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	const batch = 10_000
	at := time.Now().Add(-time.Duration(n/batch) * time.Hour)
	for first := 0; first < n; first += batch {
		commitments := make([]string, min(batch, n-first))
		for i := range commitments {
			commitments[i] = fmt.Sprintf("0x%064x", first+i+1)
		}
		if _, err := db.AppendLeaves(context.Background(), "orb/production", commitments, at); err != nil {
			tb.Fatal(err)
		}
		at = at.Add(time.Hour)
	}
}

// BenchmarkStartup measures how long `worldid serve` takes, from exec to
// both listeners accepting, on a data dir with n leaves: reading the tree
// checkpoint the previous stop wrote, or without one (removed before each
// start), rebuilding the tree from the stored leaves. It reports medians
// over the runs of the wall time, the process's CPU time at that moment
// and its resident memory once settled (settledRSS). Run it once:
//
//	go test -run '^$' -bench Startup -benchtime 5x ./internal/e2e
func BenchmarkStartup(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("leaves=%d", n), func(b *testing.B) { benchmarkStartup(b, n) })
	}
}

func benchmarkStartup(b *testing.B, n int) {
	dir := b.TempDir()
	linkSharedKey(b, dir)
	fillLeaves(b, dir, n)
	startProc(b, dir).stop(b) // the first start: demo app, checkpoint
	for _, checkpoint := range []bool{true, false} {
		b.Run(fmt.Sprintf("checkpoint=%t", checkpoint), func(b *testing.B) {
			var took, cpu []time.Duration
			var rss []int64
			for range b.N {
				if !checkpoint {
					if err := os.RemoveAll(filepath.Join(dir, server.TreeCheckpointDir)); err != nil {
						b.Fatal(err)
					}
				}
				started := time.Now()
				p := startProc(b, dir)
				took = append(took, time.Since(started))
				cpu = append(cpu, cpuTime(b, p.cmd.Process.Pid))
				rss = append(rss, settledRSS(b, p.cmd.Process.Pid))
				p.stop(b)
			}
			slices.Sort(took)
			slices.Sort(cpu)
			slices.Sort(rss)
			b.ReportMetric(took[len(took)/2].Seconds(), "median-start-s")
			b.ReportMetric(cpu[len(cpu)/2].Seconds(), "median-start-cpu-s")
			b.ReportMetric(float64(rss[len(rss)/2])/(1<<20), "median-RSS-MiB")
		})
	}
}

// cpuTime is the user and system CPU time a process has used so far
// (proc(5): fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s
// on Linux).
func cpuTime(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// TestTermWhileLoading: SIGTERM while the trees load (no checkpoint:
// 200,000 leaves to rebuild) stops the start before the tree is loaded,
// with status 0 and no error.
func TestTermWhileLoading(t *testing.T) {
	dir := hardenedDataDir(t)
	fillLeaves(t, dir, 200_000)
	log := termOnceLogged(t, dir, `msg="registry: loading tree" tree=orb/production`)
	if strings.Contains(log, `msg="registry: tree loaded" tree=orb/production`) || !strings.Contains(log, "stopped while starting") {
		t.Fatalf("the start was not stopped while the tree loaded; stderr:\n%s", log)
	}
}

// TestTermWhileOpeningStore: SIGTERM while the JSON store opens (a journal
// of 300,000 leaves to replay, as `identity add -file` leaves it) stops
// the start before the store is loaded, with status 0, and the next start
// finds every leaf.
func TestTermWhileOpeningStore(t *testing.T) {
	dir := hardenedDataDir(t)
	fillLeaves(t, dir, 300_000)
	log := termOnceLogged(t, dir, `msg="store: opening"`)
	// The cancellation is seen between chunks ("context canceled") or while
	// a packed table is read (`packed table "leaves": context canceled`).
	if strings.Contains(log, `msg="registry: loading tree"`) || !regexp.MustCompile(`msg="stopped while starting" err=".*context canceled"\n`).MatchString(log) {
		t.Fatalf("the start was not stopped while the store opened; stderr:\n%s", log)
	}
	if log := startProc(t, dir).log(); !strings.Contains(log, `tree=orb/production leaves=300000`) {
		t.Fatalf("the next start did not load every leaf; stderr:\n%s", log)
	}
}

// termOnceLogged starts the server on dir, sends it SIGTERM as soon as its
// log holds marker, and returns its log once it has exited with status 0.
func termOnceLogged(t *testing.T, dir, marker string) string {
	t.Helper()
	p, stdout := execProc(t, dir)
	go io.Copy(io.Discard, stdout)
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.log(), marker); <-poll.C {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute; stderr:\n%s", marker, p.log())
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, p.log())
		}
	case <-time.After(time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("no exit within a minute of SIGTERM; stderr:\n%s", p.log())
	}
	return p.log()
}

// TestCheckpointAfterKill: identities added after the last checkpoint by a
// server that is then killed (stored, never checkpointed) are replayed
// after it on the next start, and the tree's root is the one the last
// addition returned.
func TestCheckpointAfterKill(t *testing.T) {
	ctx := t.Context()
	dir := hardenedDataDir(t)
	p := startProc(t, dir)
	if _, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{IdentityCommitments: []string{"0x11", "0x12"}}); err != nil {
		t.Fatal(err)
	}
	p.stop(t) // writes the checkpoint of two leaves
	p = startProc(t, dir)
	added, err := p.adminClient.AddIdentity(ctx, admin.AddIdentityRequest{IdentityCommitment: "0x13"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	p = startProc(t, dir)
	if log := p.log(); !strings.Contains(log, `tree=orb/production leaves=3 how="read from its checkpoint" checkpoint_leaves=2 replayed=1`) {
		t.Fatalf("the start did not replay the leaf after the checkpoint; stderr:\n%s", log)
	}
	r := call(http.MethodPost, p.public+"/api/v1/inclusion-proof", "application/json", `{"identity_commitment":"0x13"}`)(t)
	var path struct {
		Root  string `json:"root"`
		Index int    `json:"index"`
	}
	if err := json.Unmarshal(r.body, &path); err != nil || r.status != http.StatusOK {
		t.Fatalf("inclusion proof: %d %s", r.status, r.body)
	}
	if path.Root != added.Root || path.Index != 2 {
		t.Fatalf("after the restart leaf 0x13 is at %d under root %s; it was added at 2 under %s", path.Index, path.Root, added.Root)
	}
}

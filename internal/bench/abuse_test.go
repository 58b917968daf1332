package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestFloodCountsPerKind(t *testing.T) {
	t.Parallel()
	// The flood ends when both kinds have been called often enough.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var calls [2]atomic.Int32
	kind := func(i int, status func(seq int) int) func(context.Context, int, int) (int, error) {
		return func(_ context.Context, _, seq int) (int, error) {
			calls[i].Add(1)
			if calls[0].Load() >= 20 && calls[1].Load() >= 20 {
				cancel()
			}
			return status(seq), nil
		}
	}
	kinds := []JunkKind{
		{Name: "a", Op: kind(0, func(int) int { return 401 })},
		{Name: "b", Op: kind(1, func(seq int) int { return []int{400, 0}[seq%2] })},
	}
	rs := Flood(ctx, 4, kinds)
	if len(rs) != 2 || rs[0].Name != "a" || rs[1].Name != "b" {
		t.Fatalf("results %+v", rs)
	}
	if rs[0].Requests == 0 || rs[0].Statuses[401] != rs[0].Requests || len(rs[0].Statuses) != 1 {
		t.Errorf("kind a: %+v", rs[0])
	}
	if rs[1].Requests == 0 || rs[1].Statuses[400]+rs[1].Statuses[0] != rs[1].Requests || rs[1].Statuses[0] == 0 {
		t.Errorf("kind b: %+v", rs[1])
	}
}

func TestReadStoreUsage(t *testing.T) {
	dir := t.TempDir()
	if u, err := ReadStoreUsage(dir); err != nil || u != (StoreUsage{}) {
		t.Fatalf("empty dir: %+v, %v", u, err)
	}
	snapshot := `{"lsn":5,"tables":{}}`
	journal := `{"lsn":6,"c":[]}` + "\n" + `{"lsn":7,"c":[]}` + "\n" + `{"lsn":8,"c"` // torn tail: not acknowledged
	os.WriteFile(filepath.Join(dir, "state.json"), []byte(snapshot), 0o600)
	os.WriteFile(filepath.Join(dir, "journal.jsonl"), []byte(journal), 0o600)
	u, err := ReadStoreUsage(dir)
	if err != nil || u.LSN != 7 || u.Bytes != int64(len(snapshot)+len(journal)) {
		t.Fatalf("usage %+v, %v", u, err)
	}
	if d := (StoreUsage{LSN: 5, Bytes: 10}).Delta(u); d.Writes != 2 || d.Bytes != u.Bytes-10 {
		t.Errorf("delta %+v", d)
	}
	os.WriteFile(filepath.Join(dir, "journal.jsonl"), []byte("not json\n"), 0o600)
	if _, err := ReadStoreUsage(dir); err == nil {
		t.Error("a corrupt journal line was accepted")
	}
}

func TestAbuseVerdicts(t *testing.T) {
	good := LegitResult{Name: "verify", Unloaded: Result{P99: 10 * time.Millisecond}, Loaded: Result{Requests: 10, P99: 30 * time.Millisecond}}
	r := &AbuseReport{Legit: []LegitResult{good}, JunkStore: &StoreDelta{}, RSSBefore: 100 << 20, RSSPeak: 163 << 20}
	if v := strings.Join(r.Verdicts(), "; "); strings.Contains(v, "MISSED") {
		t.Errorf("all targets met, got %s", v)
	}
	bad := good
	bad.Loaded.Errors, bad.Loaded.P99 = 1, 31*time.Millisecond
	r = &AbuseReport{Legit: []LegitResult{bad}, JunkStore: &StoreDelta{Writes: 1, Bytes: 90}, RSSBefore: 100 << 20, RSSPeak: 164 << 20}
	if v := strings.Join(r.Verdicts(), "; "); strings.Count(v, "MISSED") != 4 {
		t.Errorf("four targets missed, got %s", v)
	}
	if bad.SuccessRate() != 90 || good.P99Ratio() != 3 {
		t.Errorf("success %.1f, ratio %.2f", bad.SuccessRate(), good.P99Ratio())
	}
	var out strings.Builder
	if err := WriteAbuse(&out, r); err != nil || !strings.Contains(out.String(), "targets:") {
		t.Errorf("WriteAbuse: %v\n%s", err, out.String())
	}
}

func TestProcCPU(t *testing.T) {
	before, err := ProcCPU(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := ProcCPU(os.Getpid())
	if err != nil || after <= before {
		t.Errorf("CPU %v → %v after 100 ms of spinning, %v", before, after, err)
	}
	if _, err := ProcCPU(-1); err == nil {
		t.Error("pid -1 has CPU time")
	}
}

func TestProcMemory(t *testing.T) {
	rss, peak, err := ProcMemory(os.Getpid())
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	if rss <= 0 || peak < rss {
		t.Errorf("rss %d, peak %d", rss, peak)
	}
	if _, _, err := ProcMemory(-1); err == nil {
		t.Error("pid -1 has memory")
	}
}

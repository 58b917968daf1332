package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// JunkOp sends one hostile request and returns the HTTP status it got
// (0 when the connection failed, which a flood may cause and is counted).
type JunkOp func(ctx context.Context, worker, seq int) (status int, err error)

// JunkKind is one unauthenticated surface a flood hits.
type JunkKind struct {
	Name string
	Op   JunkOp
}

// FloodResult counts the answers one kind of junk got.
type FloodResult struct {
	Name      string      `json:"name"`
	Requests  int         `json:"requests"`
	PerSecond float64     `json:"per_second"`
	Statuses  map[int]int `json:"statuses"` // 0: no answer (connection error)
	// Store is what this kind alone added to the store, when measured.
	Store *StoreDelta `json:"store,omitempty"`
}

// Flood runs clients workers until ctx is done; worker w sends kind
// w mod len(kinds) back to back, as fast as the server answers.
func Flood(ctx context.Context, clients int, kinds []JunkKind) []FloodResult {
	results := make([]FloodResult, len(kinds))
	for i, k := range kinds {
		results[i] = FloodResult{Name: k.Name, Statuses: map[int]int{}}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := range max(clients, len(kinds)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := w % len(kinds)
			local := map[int]int{}
			n := 0
			for seq := 0; ctx.Err() == nil; seq++ {
				status, _ := kinds[k].Op(ctx, w, seq)
				if ctx.Err() != nil {
					break
				}
				local[status]++
				n++
			}
			mu.Lock()
			defer mu.Unlock()
			results[k].Requests += n
			for s, c := range local {
				results[k].Statuses[s] += c
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	for i := range results {
		results[i].PerSecond = float64(results[i].Requests) / elapsed
	}
	return results
}

// ProcMemory reads the resident set size and its peak (VmRSS, VmHWM) of a
// process from /proc, in bytes.
func ProcMemory(pid int) (rss, peak int64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("bench: no VmRSS for pid %d", pid)
	}
	return rss, peak, nil
}

// ProcCPU reads a process's user + system CPU time from /proc/<pid>/stat
// (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func ProcCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; it ends at the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("bench: malformed /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bench: malformed /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// ResetPeakMemory starts a process's VmHWM afresh at its current RSS
// (Linux: /proc/<pid>/clear_refs, value 5).
func ResetPeakMemory(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// StoreUsage is what the JSON store holds on disk: its newest
// acknowledged LSN and the bytes of its snapshot and journal.
type StoreUsage struct {
	LSN   uint64 `json:"lsn"`
	Bytes int64  `json:"bytes"`
}

// Store file names of the JSON store (package store).
const (
	snapshotFile = "state.json"
	journalFile  = "journal.jsonl"
)

// ReadStoreUsage reads a JSON store's data dir. Every acknowledged write
// appends one journal line with the next LSN, and a compaction carries the
// LSN into the snapshot (store doc.go), so the LSN changes if and only if
// something was written.
func ReadStoreUsage(dataDir string) (StoreUsage, error) {
	var u StoreUsage
	var entry struct {
		LSN uint64 `json:"lsn"`
	}
	// The journal first: a compaction in between only makes the snapshot newer.
	journal, err := os.ReadFile(filepath.Join(dataDir, journalFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, err
	}
	snapshot, err := os.ReadFile(filepath.Join(dataDir, snapshotFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return u, err
	}
	u.Bytes = int64(len(journal) + len(snapshot))
	if len(snapshot) > 0 {
		if err := json.Unmarshal(snapshot, &entry); err != nil {
			return u, fmt.Errorf("bench: %s: %w", snapshotFile, err)
		}
		u.LSN = entry.LSN
	}
	lines := bytes.Split(journal, []byte("\n"))
	for _, line := range lines[:len(lines)-1] { // after the last newline: no complete line
		if err := json.Unmarshal(line, &entry); err != nil {
			return u, fmt.Errorf("bench: %s: %w", journalFile, err)
		}
		u.LSN = max(u.LSN, entry.LSN)
	}
	return u, nil
}

// LegitResult compares one legitimate scenario without and with a flood.
type LegitResult struct {
	Name     string `json:"name"`
	Unloaded Result `json:"unloaded"`
	Loaded   Result `json:"loaded"`
}

// SuccessRate is the share of loaded requests that succeeded, in percent.
func (l LegitResult) SuccessRate() float64 {
	if l.Loaded.Requests == 0 {
		return 0
	}
	return 100 * float64(l.Loaded.Requests-l.Loaded.Errors) / float64(l.Loaded.Requests)
}

// P99Ratio is the loaded p99 over the unloaded p99.
func (l LegitResult) P99Ratio() float64 {
	if l.Unloaded.P99 == 0 {
		return 0
	}
	return float64(l.Loaded.P99) / float64(l.Unloaded.P99)
}

// AbuseReport is the outcome of the abuse scenario.
type AbuseReport struct {
	Duration time.Duration `json:"duration_ns"`
	Legit    []LegitResult `json:"legit"`
	Junk     []FloodResult `json:"junk"`      // during the loaded phase
	JunkOnly []FloodResult `json:"junk_only"` // the flood alone
	// Server memory over the loaded phase (0 when unknown).
	RSSBefore int64 `json:"rss_before"`
	RSSAfter  int64 `json:"rss_after"`
	RSSPeak   int64 `json:"rss_peak"`
	// CPU time the server and the load generator used during the loaded
	// phase (0 when unknown): who the cores went to.
	ServerCPU    time.Duration `json:"server_cpu_ns"`
	GeneratorCPU time.Duration `json:"generator_cpu_ns"`
	// Store growth during the flood alone, and during the loaded phase
	// (which includes the legitimate writes).
	JunkStore   *StoreDelta `json:"junk_store,omitempty"`
	LoadedStore *StoreDelta `json:"loaded_store,omitempty"`
	Notes       []string    `json:"notes,omitempty"`
}

// StoreDelta is how much a phase added to the store.
type StoreDelta struct {
	Writes uint64 `json:"writes"`
	Bytes  int64  `json:"bytes"`
}

// Delta is after − before.
func (u StoreUsage) Delta(after StoreUsage) *StoreDelta {
	return &StoreDelta{Writes: after.LSN - u.LSN, Bytes: after.Bytes - u.Bytes}
}

// RSSGrowth is the loaded phase's peak RSS over the RSS at its start.
func (r *AbuseReport) RSSGrowth() int64 { return max(r.RSSPeak, r.RSSAfter) - r.RSSBefore }

// The targets of the abuse scenario.
const (
	targetSuccess   = 100.0
	targetRSSGrowth = 64 << 20
	targetP99Ratio  = 3.0
)

// WriteAbuse prints the report as tables with the targets checked.
func WriteAbuse(w io.Writer, r *AbuseReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "legitimate\trequests\tsuccess\tp99 unloaded\tp99 flooded\tratio\t")
	for _, l := range r.Legit {
		fmt.Fprintf(tw, "%s\t%d\t%.2f%%\t%s\t%s\t%.2f×\t\n", l.Name, l.Loaded.Requests, l.SuccessRate(), ms(l.Unloaded.P99), ms(l.Loaded.P99), l.P99Ratio())
	}
	fmt.Fprintln(tw, "\t\t\t\t\t\t")
	fmt.Fprintln(tw, "junk (with legit)\trequests\treq/s\tanswers\t\t\t")
	for _, j := range r.Junk {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t\t\t\n", j.Name, j.Requests, j.PerSecond, statuses(j.Statuses))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.RSSBefore > 0 {
		fmt.Fprintf(w, "server RSS: %.1f MiB at the flood's start, peak %.1f MiB, growth %.1f MiB over %s (target < %d MiB)\n",
			mib(r.RSSBefore), mib(max(r.RSSPeak, r.RSSAfter)), mib(r.RSSGrowth()), r.Duration, targetRSSGrowth>>20)
	}
	if r.ServerCPU > 0 {
		fmt.Fprintf(w, "CPU over the flood: server %.1f s, load generator %.1f s (%.1f cores in all)\n",
			r.ServerCPU.Seconds(), r.GeneratorCPU.Seconds(), (r.ServerCPU+r.GeneratorCPU).Seconds()/r.Duration.Seconds())
	}
	if d := r.JunkStore; d != nil {
		n := 0
		for _, j := range r.JunkOnly {
			n += j.Requests
		}
		fmt.Fprintf(w, "store, flood alone: %d junk requests added %d writes, %d bytes (target 0)\n", n, d.Writes, d.Bytes)
		for _, j := range r.JunkOnly {
			fmt.Fprintf(w, "  %s: %d requests (%s): %d writes, %d bytes\n", j.Name, j.Requests, statuses(j.Statuses), j.Store.Writes, j.Store.Bytes)
		}
	}
	if d := r.LoadedStore; d != nil {
		fmt.Fprintf(w, "store, flood with legitimate clients: %d writes, %d bytes\n", d.Writes, d.Bytes)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, l := range r.Legit {
		if l.Loaded.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", l.Name, l.Loaded.FirstError)
		}
	}
	fmt.Fprintln(w, "targets:", strings.Join(r.Verdicts(), "; "))
	return nil
}

// Verdicts checks the targets: 100 % legitimate success, 0 bytes from
// junk, RSS growth under 64 MiB, loaded p99 at most 3× unloaded.
func (r *AbuseReport) Verdicts() []string {
	var out []string
	for _, l := range r.Legit {
		out = append(out, fmt.Sprintf("%s success %s, p99 ratio %s", l.Name,
			verdict(l.SuccessRate() >= targetSuccess), verdict(l.P99Ratio() <= targetP99Ratio)))
	}
	if r.JunkStore != nil {
		out = append(out, "junk store bytes "+verdict(r.JunkStore.Writes == 0 && r.JunkStore.Bytes == 0))
	}
	if r.RSSBefore > 0 {
		out = append(out, "RSS growth "+verdict(r.RSSGrowth() < targetRSSGrowth))
	}
	return out
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func statuses(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		name := strconv.Itoa(k)
		if k == 0 {
			name = "no answer"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, m[k]))
	}
	return strings.Join(parts, " ")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

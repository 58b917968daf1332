package metrics

import (
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RegisterBuildInfo adds worldid_build_info: always 1, labelled with the
// module version, VCS revision and Go version, so that dashboards can tell
// which build every replica runs.
func (r *Registry) RegisterBuildInfo() {
	version, revision := "(devel)", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		version = info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	r.NewGaugeFunc("worldid_build_info", "The running build: always 1.", func(report func(float64, ...string)) {
		report(1, version, revision, runtime.Version())
	}, "version", "revision", "goversion")
}

// RegisterRuntime adds the Go runtime's and the process's standard
// families, under the names Prometheus's own Go client uses (go_*,
// process_*), so that existing dashboards and alerts apply. The process
// families read /proc (Linux); elsewhere they report nothing.
func (r *Registry) RegisterRuntime(start time.Time) {
	samples := []rtmetrics.Sample{
		{Name: "/sched/goroutines:goroutines"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/sched/gomaxprocs:threads"},
	}
	read := func(i int) float64 {
		rtmetrics.Read(samples[i : i+1])
		switch v := samples[i].Value; v.Kind() {
		case rtmetrics.KindUint64:
			return float64(v.Uint64())
		case rtmetrics.KindFloat64:
			return v.Float64()
		}
		return 0
	}
	gauge := func(name, help string, i int) {
		r.NewGaugeFunc(name, help, func(report func(float64, ...string)) { report(read(i)) })
	}
	gauge("go_goroutines", "Goroutines that currently exist.", 0)
	gauge("go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", 1)
	gauge("go_memstats_sys_bytes", "Bytes of memory obtained from the OS.", 2)
	r.NewCounterFunc("go_gc_cycles_total", "Completed GC cycles.", func(report func(float64, ...string)) { report(read(3)) })
	gauge("go_gomaxprocs", "The current GOMAXPROCS.", 4)
	r.NewGaugeFunc("go_info", "The Go version: always 1.", func(report func(float64, ...string)) { report(1, runtime.Version()) }, "version")

	r.NewCounterFunc("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", func(report func(float64, ...string)) {
		if st, ok := procStat(); ok {
			report(st.cpuSeconds)
		}
	})
	r.NewGaugeFunc("process_resident_memory_bytes", "Resident memory size in bytes.", func(report func(float64, ...string)) {
		if st, ok := procStat(); ok {
			report(st.rssBytes)
		}
	})
	r.NewGaugeFunc("process_open_fds", "Open file descriptors.", func(report func(float64, ...string)) {
		if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
			report(float64(len(fds)))
		}
	})
	r.NewGaugeFunc("process_max_fds", "The limit on open file descriptors.", func(report func(float64, ...string)) {
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
			report(float64(lim.Cur))
		}
	})
	r.NewGaugeFunc("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", func(report func(float64, ...string)) {
		report(float64(start.UnixNano()) / 1e9)
	})
}

type stat struct{ cpuSeconds, rssBytes float64 }

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc on every
// architecture Go supports (proc(5): "sysconf(_SC_CLK_TCK)").
const clockTicks = 100

// procStat reads utime, stime and rss from /proc/self/stat (proc(5)).
func procStat() (stat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return stat{}, false
	}
	// The command name (field 2) may hold spaces; fields after it follow
	// its closing parenthesis.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime is field 14, stime 15, rss 24.
	if len(f) < 22 {
		return stat{}, false
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	rss, err3 := strconv.ParseFloat(f[21], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return stat{}, false
	}
	return stat{cpuSeconds: (utime + stime) / clockTicks, rssBytes: rss * float64(os.Getpagesize())}, true
}

package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families and renders them in the Prometheus text
// exposition format. The zero value is not usable; call NewRegistry.
type Registry struct {
	mu       sync.Mutex
	families []*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

type family struct {
	name, help, kind string
	labels           []string
	buckets          []float64 // histograms only
	// read, for a family whose values are read at scrape time, reports
	// each series' value with its label values.
	read func(report func(v float64, labelValues ...string))

	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	labelValues []string
	count       atomic.Uint64   // counter value, or histogram observation count
	sumBits     atomic.Uint64   // histogram sum or gauge value as float64 bits
	bucketHits  []atomic.Uint64 // non-cumulative per-bucket counts
}

func (r *Registry) register(name, help, kind string, buckets []float64, labels []string) *family {
	f := &family{name: name, help: help, kind: kind, labels: labels, buckets: buckets, series: map[string]*series{}}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, g := range r.families {
		if g.name == name {
			panic("metrics: duplicate metric " + name)
		}
	}
	r.families = append(r.families, f)
	return f
}

func (f *family) with(values []string) *series {
	if len(values) != len(f.labels) {
		panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
	}
	key := strings.Join(values, "\xff")
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.series[key]
	if !ok {
		s = &series{labelValues: append([]string(nil), values...), bucketHits: make([]atomic.Uint64, len(f.buckets))}
		f.series[key] = s
	}
	return s
}

// Counter is a monotonically increasing count, partitioned by labels.
type Counter struct{ f *family }

// NewCounter registers a counter family.
func (r *Registry) NewCounter(name, help string, labels ...string) *Counter {
	return &Counter{r.register(name, help, "counter", nil, labels)}
}

// Add increments the series with the given label values by n.
func (c *Counter) Add(n uint64, labelValues ...string) { c.f.with(labelValues).count.Add(n) }

// Inc increments the series with the given label values by one.
func (c *Counter) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Gauge is a value that goes up and down, partitioned by labels.
type Gauge struct{ f *family }

// NewGauge registers a gauge family.
func (r *Registry) NewGauge(name, help string, labels ...string) *Gauge {
	return &Gauge{r.register(name, help, "gauge", nil, labels)}
}

// Set sets the series with the given label values to v.
func (g *Gauge) Set(v float64, labelValues ...string) {
	g.f.with(labelValues).sumBits.Store(math.Float64bits(v))
}

// NewGaugeFunc registers a gauge family whose series are read at every
// scrape: read calls report once per series. For values the program keeps
// anyway (a tree's size, a key's age), so nothing has to keep them in sync.
func (r *Registry) NewGaugeFunc(name, help string, read func(report func(v float64, labelValues ...string)), labels ...string) {
	r.register(name, help, "gauge", nil, labels).read = read
}

// NewCounterFunc is NewGaugeFunc for a value that only grows (counted by
// someone else: the Go runtime, the kernel).
func (r *Registry) NewCounterFunc(name, help string, read func(report func(v float64, labelValues ...string)), labels ...string) {
	r.register(name, help, "counter", nil, labels).read = read
}

// Histogram counts observations into fixed buckets, partitioned by labels.
type Histogram struct{ f *family }

// DefaultLatencyBuckets spans 100 µs to 10 s, in seconds.
func DefaultLatencyBuckets() []float64 {
	return []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
}

// NewHistogram registers a histogram family with the given upper bounds,
// which must be sorted ascending.
func (r *Registry) NewHistogram(name, help string, buckets []float64, labels ...string) *Histogram {
	if !sort.Float64sAreSorted(buckets) {
		panic("metrics: unsorted buckets for " + name)
	}
	return &Histogram{r.register(name, help, "histogram", append([]float64(nil), buckets...), labels)}
}

// Observe records v in the series with the given label values.
func (h *Histogram) Observe(v float64, labelValues ...string) {
	s := h.f.with(labelValues)
	s.count.Add(1)
	for {
		old := s.sumBits.Load()
		if s.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			break
		}
	}
	if i := sort.SearchFloat64s(h.f.buckets, v); i < len(h.f.buckets) {
		s.bucketHits[i].Add(1)
	}
}

// WriteTo writes every family in the text exposition format, families in
// registration order and series sorted by label values for stable output.
func (r *Registry) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	families := append([]*family(nil), r.families...)
	r.mu.Unlock()
	var b strings.Builder
	for _, f := range families {
		f.write(&b)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func (f *family) write(b *strings.Builder) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
	if f.read != nil {
		f.writeRead(b)
		return
	}
	f.mu.Lock()
	all := make([]*series, 0, len(f.series))
	for _, s := range f.series {
		all = append(all, s)
	}
	f.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		return strings.Join(all[i].labelValues, "\xff") < strings.Join(all[j].labelValues, "\xff")
	})
	for _, s := range all {
		labels := f.labelPairs(s.labelValues)
		switch f.kind {
		case "counter":
			fmt.Fprintf(b, "%s%s %d\n", f.name, braces(labels), s.count.Load())
			continue
		case "gauge":
			fmt.Fprintf(b, "%s%s %s\n", f.name, braces(labels), formatFloat(math.Float64frombits(s.sumBits.Load())))
			continue
		}
		var cumulative uint64
		for i, le := range f.buckets {
			cumulative += s.bucketHits[i].Load()
			fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, braces(append(labels, `le="`+formatFloat(le)+`"`)), cumulative)
		}
		fmt.Fprintf(b, "%s_bucket%s %d\n", f.name, braces(append(labels, `le="+Inf"`)), s.count.Load())
		fmt.Fprintf(b, "%s_sum%s %s\n", f.name, braces(labels), formatFloat(math.Float64frombits(s.sumBits.Load())))
		fmt.Fprintf(b, "%s_count%s %d\n", f.name, braces(labels), s.count.Load())
	}
}

// writeRead writes the series a func-valued family reports now, sorted by
// label values like the others.
func (f *family) writeRead(b *strings.Builder) {
	type line struct{ key, text string }
	var lines []line
	f.read(func(v float64, values ...string) {
		if len(values) != len(f.labels) {
			panic(fmt.Sprintf("metrics: %s takes %d label values, got %d", f.name, len(f.labels), len(values)))
		}
		lines = append(lines, line{strings.Join(values, "\xff"), f.name + braces(f.labelPairs(values)) + " " + formatFloat(v) + "\n"})
	})
	sort.Slice(lines, func(i, j int) bool { return lines[i].key < lines[j].key })
	for _, l := range lines {
		b.WriteString(l.text)
	}
}

func (f *family) labelPairs(values []string) []string {
	pairs := make([]string, len(values))
	for i, v := range values {
		pairs[i] = f.labels[i] + `="` + escapeLabel(v) + `"`
	}
	return pairs
}

func braces(pairs []string) string {
	if len(pairs) == 0 {
		return ""
	}
	return "{" + strings.Join(pairs, ",") + "}"
}

// escapeLabel applies the text format's label-value escaping: backslash,
// double quote and line feed.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// Handler serves the registry at /metrics.
func (r *Registry) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		r.WriteTo(w)
	})
}

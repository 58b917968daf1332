package cryptotest

import (
	"slices"
	"testing"
	"time"

	"worldid/field"
)

// ForEachPath runs test (a test or a benchmark) once per crypto path, as
// subtests named "scalar" and "vector" with that path forced
// (field.ForcePath), and skips the vector path where this machine cannot
// run it. The subtests must not run in parallel with others that depend
// on the path.
func ForEachPath[T interface {
	testing.TB
	Run(string, func(T)) bool
}](t T, test func(T)) {
	for _, p := range []field.Path{field.Scalar, field.Vector} {
		t.Run(p.String(), func(t T) {
			if err := field.ForcePath(p); err != nil {
				t.Skipf("%v: only the scalar path can run on this machine", err)
			}
			t.Cleanup(func() { MustForce(t, field.Auto) })
			test(t)
		})
	}
}

// MustForce calls field.ForcePath and fails t on an error.
func MustForce(t testing.TB, p field.Path) {
	t.Helper()
	if err := field.ForcePath(p); err != nil {
		t.Fatal(err)
	}
}

// Speedup alternates ours and the peer's operation within each iteration,
// so that load changes on a shared machine hit both alike, and reports the
// median time of each ("ours-ns/op", "<peer>-ns/op") and the median of the
// per-iteration ratios ("speedup"): a preemption inflates one iteration,
// not the result.
func Speedup(b *testing.B, peer string, ours, theirs func()) {
	var oursT, theirsT, ratio []float64
	for b.Loop() {
		start := time.Now()
		ours()
		mid := time.Now()
		theirs()
		o, t := float64(mid.Sub(start)), float64(time.Since(mid))
		oursT, theirsT, ratio = append(oursT, o), append(theirsT, t), append(ratio, t/o)
	}
	b.ReportMetric(median(oursT), "ours-ns/op")
	b.ReportMetric(median(theirsT), peer+"-ns/op")
	b.ReportMetric(median(ratio), "speedup")
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

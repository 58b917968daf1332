package metrics

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTextFormat(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounter("x_total", "Things.", "kind")
	c.Inc("a\"b")
	c.Add(2, "a\"b")
	h := r.NewHistogram("lat_seconds", "Latency.", []float64{0.1, 1})
	h.Observe(0.05)
	h.Observe(0.5)
	h.Observe(5)
	g := r.NewGauge("up", "Up.")
	g.Set(1)
	g.Set(0.5)
	var b strings.Builder
	r.WriteTo(&b)
	want := `# HELP x_total Things.
# TYPE x_total counter
x_total{kind="a\"b"} 3
# HELP lat_seconds Latency.
# TYPE lat_seconds histogram
lat_seconds_bucket{le="0.1"} 1
lat_seconds_bucket{le="1"} 2
lat_seconds_bucket{le="+Inf"} 3
lat_seconds_sum 5.55
lat_seconds_count 3
# HELP up Up.
# TYPE up gauge
up 0.5
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHTTPRecordsRoutePatternNotPath(t *testing.T) {
	r := NewRegistry()
	m := NewHTTP(r, slog.New(slog.NewTextHandler(io.Discard, nil)))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := m.Wrap("public", mux)
	for _, p := range []string{"/items/secret-token", "/nowhere"} {
		srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	var b strings.Builder
	r.WriteTo(&b)
	out := b.String()
	for _, want := range []string{
		`worldid_http_requests_total{server="public",route="GET /items/{id}",code="418"} 1`,
		`worldid_http_requests_total{server="public",route="unmatched",code="404"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret-token") {
		t.Error("raw path leaked into metrics")
	}
}

func TestDuplicateRegistrationPanics(t *testing.T) {
	r := NewRegistry()
	r.NewCounter("a", "A.")
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate registration did not panic")
		}
	}()
	r.NewCounter("a", "A.")
}

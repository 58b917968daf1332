package metrics

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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
	m := NewHTTP(r, slog.New(slog.NewTextHandler(io.Discard, nil)), testIDs(t))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	mux.HandleFunc("/any/{id}", func(w http.ResponseWriter, _ *http.Request) {})
	srv := m.Wrap("public", mux)
	for _, p := range []string{"/items/secret-token", "/nowhere", "/any/x"} {
		srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	var b strings.Builder
	r.WriteTo(&b)
	out := b.String()
	for _, want := range []string{
		// One style, with or without a method in the pattern: the path.
		`worldid_http_requests_total{server="public",route="/items/{id}",code="418"} 1`,
		`worldid_http_requests_total{server="public",route="/any/{id}",code="200"} 1`,
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

func testIDs(t *testing.T) *RequestIDs {
	t.Helper()
	ids, err := NewRequestIDs(strings.NewReader("abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The request line names the request id (also sent as X-Request-Id) and
// the client address, and never the query string; a handler's own line
// logged with the request's context carries the same id.
func TestRequestLogLine(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&logs, nil)))
	m := NewHTTP(NewRegistry(), log, testIDs(t))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		log.ErrorContext(r.Context(), "store failed")
	})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/token?code=secret-code", nil)
	req.RemoteAddr = "192.0.2.7:51000"
	m.Wrap("public", mux).ServeHTTP(rec, req)
	id := rec.Header().Get(RequestIDHeader)
	if id != "616263646566-1" {
		t.Fatalf("X-Request-Id %q", id)
	}
	out := logs.String()
	for _, want := range []string{
		`msg="store failed" request_id=616263646566-1`,
		`msg=request request_id=616263646566-1 server=public client=192.0.2.7 method=POST route=/token status=200`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret-code") {
		t.Errorf("the query string was logged:\n%s", out)
	}
}

func TestFuncFamilies(t *testing.T) {
	r := NewRegistry()
	r.NewGaugeFunc("tree_leaves", "Leaves.", func(report func(float64, ...string)) {
		report(3, "orb")
		report(1.5, "device")
	}, "tree")
	r.NewCounterFunc("cpu_seconds_total", "CPU.", func(report func(float64, ...string)) { report(2.25) })
	var b strings.Builder
	r.WriteTo(&b)
	want := "# HELP tree_leaves Leaves.\n# TYPE tree_leaves gauge\ntree_leaves{tree=\"device\"} 1.5\ntree_leaves{tree=\"orb\"} 3\n" +
		"# HELP cpu_seconds_total CPU.\n# TYPE cpu_seconds_total counter\ncpu_seconds_total 2.25\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestRuntimeFamilies(t *testing.T) {
	r := NewRegistry()
	r.RegisterRuntime(time.Unix(1700000000, 0))
	r.RegisterBuildInfo()
	var b strings.Builder
	r.WriteTo(&b)
	for _, want := range []string{"\ngo_goroutines ", "\ngo_memstats_heap_alloc_bytes ", "\nprocess_start_time_seconds 1.7e+09\n",
		"\nprocess_resident_memory_bytes ", "\nprocess_cpu_seconds_total ", "\nprocess_open_fds ", "worldid_build_info{version="} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}

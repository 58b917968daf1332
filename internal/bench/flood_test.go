package bench

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestFloodProcess runs the flood process's entry point from a spec file
// against a server that records what reaches it: every junk kind is sent,
// to its own surface, and the results come back as JSON.
func TestFloodProcess(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/api/v1/refresh" && r.Header.Get("x-zkp-proof") == "" {
			t.Error("a junk refresh without x-zkp-proof")
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	spec := floodSpec{Base: srv.URL, AppID: "app_00", RPID: "rp_00", Victims: []string{"0x01"}, Roots: []string{"0x02"},
		Clients: 5, Duration: 300 * time.Millisecond}
	file := filepath.Join(t.TempDir(), "spec.json")
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runFlood(t.Context(), file, &out); err != nil {
		t.Fatal(err)
	}
	var results []FloodResult
	if err := json.Unmarshal(out.Bytes(), &results); err != nil || len(results) != len(junkKinds(&spec)) {
		t.Fatalf("%d results (%v): %s", len(results), err, out.String())
	}
	for _, r := range results {
		if r.Requests == 0 || r.Statuses[http.StatusTeapot] == 0 {
			t.Errorf("%s: %d requests, statuses %v", r.Name, r.Requests, r.Statuses)
		}
	}
	for _, p := range []string{"/api/v1/refresh", "/authorize", "/api/v4/verify/rp_00", "/api/v1/inclusion-proof"} {
		mu.Lock()
		n := paths[p]
		mu.Unlock()
		if n == 0 {
			t.Errorf("nothing reached %s", p)
		}
	}
	spec.Kinds = []int{len(results)}
	b, _ = json.Marshal(spec)
	os.WriteFile(file, b, 0o600)
	if err := runFlood(t.Context(), file, &out); err == nil {
		t.Error("a spec naming a junk kind that does not exist was run")
	}
}

package relay

import (
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkRequestCycle: one bridge request's whole life through the
// handler on Memory: POST /request, GET /request, PUT /response, GET
// /response (completed).
func BenchmarkRequestCycle(b *testing.B) {
	rl, err := New(Options{Store: NewMemory(1<<20, 1<<30), Now: time.Now, Rand: rand.Reader, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	rl.Register(mux, "")
	body := `{"iv":"aXYtaXYtaXYtaXYt","payload":"` + strings.Repeat("A", 1024) + `"}`
	call := func(method, path string, withBody bool, want int) []byte {
		var req *http.Request
		if withBody {
			req = httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
		} else {
			req = httptest.NewRequest(method, path, nil)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("%s %s: %d", method, path, w.Code)
		}
		return w.Body.Bytes()
	}
	b.ReportAllocs()
	for b.Loop() {
		var c struct {
			RequestID string `json:"request_id"`
		}
		json.Unmarshal(call("POST", "/request", true, 200), &c)
		call("GET", "/request/"+c.RequestID, false, 200)
		call("PUT", "/response/"+c.RequestID, true, 201)
		call("GET", "/response/"+c.RequestID, false, 200)
	}
}

package verify

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"worldid/record"
)

type noopChecker struct{}

func (noopChecker) CheckClaim(context.Context, record.Claim) error { return nil }

// benchBody is an IDKit-shaped request with one ABI-encoded proof.
func benchBody(b *testing.B) string {
	it := item("0x"+strings.Repeat("1f", 256), nullifierA)
	it.SignalHash, it.MaxAge = defaultSignalHash, 7200
	return newRequest(it).json(b)
}

// BenchmarkHandler is the endpoint's own cost per request: parse, app
// lookup, a no-op proof check, recording the nullifier and writing the answer.
func BenchmarkHandler(b *testing.B) {
	h, err := New(Options{Store: newTestStore(b), Checker: noopChecker{}})
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	body := benchBody(b)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, rpPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

// BenchmarkParseBody is the strict parser (internal/strictjson and the
// member policy) on its own.
func BenchmarkParseBody(b *testing.B) {
	body := benchBody(b)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := decodeBody(strings.NewReader(body), DefaultMaxResponses)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := raw.validate(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseBodyStdlibStruct is the peer: encoding/json decoding the
// same body into a struct, with no validation at all.
func BenchmarkParseBodyStdlibStruct(b *testing.B) {
	body := benchBody(b)
	b.ReportAllocs()
	for b.Loop() {
		var r idkitResult
		if err := json.NewDecoder(strings.NewReader(body)).Decode(&r); err != nil {
			b.Fatal(err)
		}
	}
}

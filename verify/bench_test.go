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

// BenchmarkParseBody is the strict parser (internal/leaf/strictjson and the
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

// BenchmarkV4Anchors is one 4.0 session verification through the endpoint
// (World's session vector) with its trust anchors read from the chain and
// cached (chain-cached) or set by hand (hand-set); the root comes from
// the cached chain in both. The target: chain-cached costs at most 1.1×
// hand-set.
func BenchmarkV4Anchors(b *testing.B) {
	for _, mode := range []string{"hand-set", "chain-cached"} {
		b.Run(mode, func(b *testing.B) {
			e := newChainEnv(b)
			a := e.f.WorldIDVerifier.Anchors
			if mode == "hand-set" {
				for _, an := range []record.TrustAnchor{
					{Kind: record.AnchorIssuerKey, ID: "1", X: a.IssuerPubkey[0], Y: a.IssuerPubkey[1]},
					{Kind: record.AnchorOPRFKey, ID: a.RPID, X: a.OPRFPubkey[0], Y: a.OPRFPubkey[1]},
				} {
					if err := e.reg.AddTrustAnchor(b.Context(), an); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if w := e.postSession(b, a.RPID, e.body); w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
			keyCalls := e.chain.Calls()["issuerSchemaIdToPubkey"]
			if want := map[string]int{"hand-set": 0, "chain-cached": 1}[mode]; keyCalls != want {
				b.Fatalf("%d issuer key reads from the chain, want %d", keyCalls, want)
			}
		})
	}
}

package qr

import (
	"strings"
	"testing"
)

// waitPageLink is the size of the sign-in wait page's QR text: a bridge
// connect URL of about 200 bytes (150–250 in practice), version 10-M.
var waitPageLink = []byte(("https://world.org/verify?t=wld&i=6f1c0d3e-2b8a-4c57-9e41-7a2f5d8b0c93" +
	"&k=Qm9iIGFuZCBBbGljZSBzaGFyZSBhIDMyLWJ5dGUga2V5IGZvciB0aGUgYnJpZGdl" +
	"&b=https%3A%2F%2Fbridge.worldid.example&r=" + strings.Repeat("x", 60))[:200])

// BenchmarkEncode is the wait page's QR code: the symbol with its mask
// chosen.
func BenchmarkEncode(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(waitPageLink); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSVG draws the wait page's QR code.
func BenchmarkSVG(b *testing.B) {
	q := must(Encode(waitPageLink))
	b.ReportAllocs()
	for b.Loop() {
		_ = q.SVG("qr", "QR code")
	}
}

package relay

import (
	"testing"
)

// FuzzDecodeEnvelope: the body parser never panics, and what it accepts
// is a JSON object with string iv and payload.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(env))
	f.Add([]byte(`{"iv":"a","payload":"b","request_id":"0123456789abcdef"}`))
	f.Add([]byte(`{"iv":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, id, err := decodeEnvelope(b)
		if err != nil {
			return
		}
		if e2, id2, err := decodeEnvelope(b); err != nil || e2 != e || (id == nil) != (id2 == nil) {
			t.Fatal("not deterministic")
		}
	})
}

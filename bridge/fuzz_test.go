package bridge

import (
	"encoding/json"
	"testing"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzParseConnect: whatever ParseConnect accepts, String writes back
// byte for byte.
func FuzzParseConnect(f *testing.F) {
	f.Add("https://world.org/verify?t=wld&i=0f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b&k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8%3D")
	f.Add("https://staging.world.org/verify?t=wld&i=0f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b&k=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8%3D&return_to=https%3A%2F%2Frp.example%2F&b=http%3A%2F%2F127.0.0.1%3A8080")
	f.Add("https://world.org/verify?t=wld&i=x&k=y&b=%")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConnect(s)
		if err == nil && c.String() != s {
			t.Fatalf("accepted %q but writes %q", s, c.String())
		}
	})
}

// FuzzNormalizeRequestID: an accepted id is lowercase and stable.
func FuzzNormalizeRequestID(f *testing.F) {
	f.Add("0F2A9C4E-1B2D-4E5F-8A9B-0C1D2E3F4A5B")
	f.Add("short")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := NormalizeRequestID(s)
		if err != nil {
			return
		}
		if again, err := NormalizeRequestID(id); err != nil || again != id {
			t.Fatalf("%q → %q is not stable", s, id)
		}
	})
}

// FuzzOpen: Open never panics, and what it opens re-seals to something it
// opens again.
func FuzzOpen(f *testing.F) {
	k, _ := NewKey(&counting{})
	e, _ := k.Seal(&counting{next: 7}, []byte("hello"))
	f.Add(e.IV, e.Payload)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, iv, payload string) {
		pt, err := k.Open(Envelope{IV: iv, Payload: payload})
		if err != nil {
			return
		}
		e2, err := k.Seal(&counting{}, pt)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Open(e2); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParsePayloads: the payload parsers never panic, and a parsed
// response has exactly one form.
func FuzzParsePayloads(f *testing.F) {
	f.Add([]byte(`{"app_id":"app_1","action":"","signal":"0x1","verification_level":"orb"}`))
	f.Add([]byte(`{"proof":"0x1","merkle_root":"0x2","nullifier_hash":"0x3"}`))
	f.Add([]byte(`{"error_code":"generic_error"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseRequest(b)
		r, k, err := ParseResponse(b)
		if err == nil && (k == KindError) != (r.ErrorCode != "") {
			t.Fatalf("kind %d for %s", k, b)
		}
	})
}

package bridge

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// counting is a deterministic io.Reader: 0, 1, 2, … from start.
type counting struct{ next byte }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.next
		c.next++
	}
	return len(p), nil
}

func testKey(t *testing.T) Key {
	t.Helper()
	k, err := NewKey(&counting{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealOpen(t *testing.T) {
	k := testKey(t)
	e, err := k.Seal(&counting{next: 100}, []byte(`{"app_id":"app_x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.IV != "ZGVmZ2hpamtsbW5v" { // bytes 100..111
		t.Fatalf("iv %q", e.IV)
	}
	pt, err := k.Open(e)
	if err != nil || string(pt) != `{"app_id":"app_x"}` {
		t.Fatalf("open: %q %v", pt, err)
	}
	other := k
	other[0] ^= 1
	tampered := e
	tampered.Payload = "A" + e.Payload[1:]
	for name, c := range map[string]struct {
		k Key
		e Envelope
	}{
		"wrong key":     {other, e},
		"tampered":      {k, tampered},
		"short iv":      {k, Envelope{IV: "AAAA", Payload: e.Payload}},
		"not base64":    {k, Envelope{IV: e.IV, Payload: "!!"}},
		"short payload": {k, Envelope{IV: e.IV, Payload: "AAAA"}},
	} {
		if _, err := c.k.Open(c.e); !errors.Is(err, ErrOpen) {
			t.Errorf("%s: %v, want ErrOpen", name, err)
		}
	}
}

func TestKeyBase64(t *testing.T) {
	k := testKey(t)
	if k.Base64() != "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" {
		t.Fatal(k.Base64())
	}
	back, err := ParseKey(k.Base64())
	if err != nil || back != k {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "AAEC", k.Base64()[:43], "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9="} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestNormalizeRequestID(t *testing.T) {
	for in, want := range map[string]string{
		"0F2A9C4E-1B2D-4E5F-8A9B-0C1D2E3F4A5B": "0f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b",
		"abcdefghijklmnop":                     "abcdefghijklmnop",
		"a.b_c-d.e_f-g.h_":                     "a.b_c-d.e_f-g.h_",
		strings.Repeat("x", 256):               strings.Repeat("x", 256),
	} {
		if got, err := NormalizeRequestID(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "abcdefghijklmno", strings.Repeat("x", 257), "abcdefghijklmno:", "abcdefghijklmn/p", "abcdefghijklmnöp", "abcdefghijklmn p"} {
		if _, err := NormalizeRequestID(bad); !errors.Is(err, ErrRequestID) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestConnectURL(t *testing.T) {
	k := testKey(t)
	const id = "0f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b"
	const key = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8%3D"
	for _, c := range []struct {
		in   Connect
		want string
	}{
		{Connect{Base: ProductionVerify, RequestID: id, Key: k}, "https://world.org/verify?t=wld&i=" + id + "&k=" + key},
		{Connect{Base: ProductionVerify, RequestID: id, Key: k, Bridge: DefaultURL}, "https://world.org/verify?t=wld&i=" + id + "&k=" + key},
		{Connect{Base: StagingVerify, RequestID: id, Key: k, Bridge: "http://127.0.0.1:8080", ReturnTo: "https://rp.example/wait?s=a b&x=1"},
			"https://staging.world.org/verify?t=wld&i=" + id + "&k=" + key + "&return_to=https%3A%2F%2Frp.example%2Fwait%3Fs%3Da%20b%26x%3D1&b=http%3A%2F%2F127.0.0.1%3A8080"},
	} {
		got := c.in.String()
		if got != c.want {
			t.Errorf("String:\n got %s\nwant %s", got, c.want)
			continue
		}
		back, err := ParseConnect(got)
		if err != nil {
			t.Errorf("ParseConnect(%s): %v", got, err)
			continue
		}
		if back.Bridge == "" && c.in.Bridge == DefaultURL {
			back.Bridge = DefaultURL
		}
		if back != c.in {
			t.Errorf("round trip: %+v, want %+v", back, c.in)
		}
	}
}

func TestParseConnectRejects(t *testing.T) {
	good := Connect{Base: ProductionVerify, RequestID: "0f2a9c4e-1b2d-4e5f-8a9b-0c1d2e3f4a5b", Key: testKey(t), Bridge: "https://bridge.example"}.String()
	if _, err := ParseConnect(good); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"other host":       strings.Replace(good, "world.org", "world.org.evil", 1),
		"http":             strings.Replace(good, "https://world.org", "http://world.org", 1),
		"t":                strings.Replace(good, "t=wld", "t=xyz", 1),
		"order":            strings.Replace(good, "t=wld&i=", "i=", 1) + "&t=wld",
		"repeated":         good + "&b=https%3A%2F%2Fbridge.example",
		"unknown":          good + "&partner=true",
		"raw key":          strings.Replace(good, "%3D", "=", 1),
		"lower escape":     strings.Replace(good, "%3A", "%3a", 1),
		"bridge path":      strings.Replace(good, "bridge.example", "bridge.example%2Fx", 1),
		"bridge scheme":    strings.Replace(good, "https%3A", "ftp%3A", 1),
		"default bridge b": strings.Replace(good, "https%3A%2F%2Fbridge.example", "https%3A%2F%2Fbridge.worldcoin.org", 1),
		"short id":         strings.Replace(good, "0f2a9c4e-", "", 1)[:60],
		"fragment":         good + "#x",
		"no query":         ProductionVerify,
	} {
		if _, err := ParseConnect(bad); !errors.Is(err, ErrConnectURL) {
			t.Errorf("%s: %s accepted", name, bad)
		}
	}
}

func TestParseResponse(t *testing.T) {
	for in, want := range map[string]Kind{
		`{"error_code":"verification_rejected"}`:                                                   KindError,
		`{"proof":"0x1","merkle_root":"0x2","nullifier_hash":"0x3","verification_level":"orb"}`:    KindV3,
		`{"proof":"0x1","merkle_root":"0x2","nullifier_hash":"0x3","credential_type":"orb","x":1}`: KindV3,
		`{"proof_response":{"id":"r","version":1,"responses":[]}}`:                                 KindV4,
	} {
		if _, k, err := ParseResponse([]byte(in)); err != nil || k != want {
			t.Errorf("%s: %v %v", in, k, err)
		}
	}
	for _, bad := range []string{`{}`, `[]`, `{"proof":"0x1"}`, `{"error_code":"x","proof":"0x1","merkle_root":"0x2","nullifier_hash":"0x3"}`, `{"error_code":"x","proof_response":{}}`} {
		if _, _, err := ParseResponse([]byte(bad)); !errors.Is(err, ErrPayload) {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestParseRequest(t *testing.T) {
	r, err := ParseRequest([]byte(`{"app_id":"app_1","action":"","signal":"0x00ab","verification_level":"orb","package_name":"idkit","proof_request":null}`))
	if err != nil || r.AppID != "app_1" || r.VerificationLevel != "orb" {
		t.Fatal(r, err)
	}
	if _, err := ParseRequest([]byte(`{"app_id":"app_1","signal":"0x1"}`)); !errors.Is(err, ErrPayload) {
		t.Fatal("request without a verification level accepted")
	}
	if !bytes.Contains(mustJSON(t, Request{AppID: "a", Signal: "s", VerificationLevel: "orb"}), []byte(`"action":""`)) {
		t.Fatal("the empty action must be sent")
	}
}

package refresh

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"

	"worldid/field"
)

func FuzzDecodeZKPProof(f *testing.F) {
	f.Add(encodeProof(f, map[string]any{"id_commitment": sub1, "sub": sub1, "timestamp": 1, "merkle_root": sub1, "nullifier_hash": sub1, "proof": "0x" + string(bytes.Repeat([]byte("0"), 512))}))
	f.Add("e30=")
	f.Add("")
	f.Fuzz(func(t *testing.T, h string) {
		z, err := decodeZKPProof(h)
		if (z == nil) == (err == nil) {
			t.Fatal("exactly one of proof and error must be set")
		}
		if err != nil && (err.Status != http.StatusUnauthorized || err.Code != CodeInvalidProof) {
			t.Fatalf("error %d %s", err.Status, err.Code)
		}
	})
}

func FuzzParseOrbKeyPEM(f *testing.F) {
	file := loadPCP(f)
	for _, k := range file.Keys {
		f.Add([]byte(k.PublicKeyPEM))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pub, err := ParseOrbKeyPEM(b)
		if err == nil && (pub.A.IsInfinity() || !pub.A.IsOnCurve()) {
			t.Fatal("accepted a point off the curve")
		}
	})
}

func FuzzParseDERSignature(f *testing.F) {
	file := loadPCP(f)
	for _, v := range append(file.Vectors, file.Negative...) {
		sig, _ := hex.DecodeString(v.HashesSignHex)
		f.Add(sig)
	}
	f.Fuzz(func(t *testing.T, der []byte) {
		rs, err := parseDERSignature(der)
		if err == nil && len(rs) != 64 {
			t.Fatalf("r‖s has %d bytes", len(rs))
		}
	})
}

func FuzzParseHashesJSON(f *testing.F) {
	file := loadPCP(f)
	for _, v := range append(file.Vectors, file.Negative...) {
		f.Add([]byte(v.HashesJSON))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		hashes, err := parseHashesJSON(b)
		if err != nil {
			if err.Check == "" {
				t.Fatal("PCP error without a check name")
			}
			return
		}
		for k, v := range hashes {
			if k != "version" && !isLowerHex(v, 64) {
				t.Fatalf("accepted %s = %q", k, v)
			}
		}
	})
}

func FuzzParseForm(f *testing.F) {
	body, _ := multipartBody(f, []part{{name: "sub", value: "0x1"}, {partHashesJSON, "{}", true}})
	f.Add(body)
	f.Add([]byte("--x\r\nContent-Disposition: form-data; name=\"sub\"\r\n\r\n0x1\r\n--x--\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		boundary := "x"
		if bytes.HasPrefix(body, []byte("--")) {
			if i := bytes.IndexByte(body, '\r'); i > 2 && i < 72 {
				boundary = string(body[2:i])
			}
		}
		form, err := parseForm(httptest.NewRecorder(), r, boundary)
		if err != nil {
			if err.Status != 400 && err.Status != 413 {
				t.Fatalf("status %d", err.Status)
			}
			return
		}
		if back, perr := field.ParseStrict(form.subID); perr != nil || back != form.sub {
			t.Fatal("sub not canonical")
		}
		for name := range form.pcp {
			if !isPCPPart(name) {
				t.Fatalf("non-PCP part %q kept", name)
			}
		}
	})
}

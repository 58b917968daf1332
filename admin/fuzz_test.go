package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/internal/vectors"
	"worldid/record"
	"worldid/store/jsontest"
)

// fuzzRoutes are the admin routes FuzzAdminAPI sends bodies to.
var fuzzRoutes = [...]struct{ method, path string }{
	{http.MethodPost, "/admin/apps"}, {http.MethodGet, "/admin/apps"}, {http.MethodPost, "/admin/identities"},
	{http.MethodPost, "/admin/roots"}, {http.MethodPost, "/admin/keys/rotate"}, {http.MethodPost, "/admin/signups"},
	{http.MethodPost, "/admin/orbkeys"}, {http.MethodPost, "/admin/refresh"}, {http.MethodPost, "/admin/actions"},
}

type noopKeys struct{}

func (noopKeys) RotateKeys(context.Context) error { return nil }
func (noopKeys) RevokeKey(context.Context, string) error {
	return record.ErrNotFound
}
func (noopKeys) KeyList(context.Context) ([]record.KeyInfo, error) { return nil, nil }

// FuzzAdminAPI: no request makes the admin API panic or answer anything
// but its documented statuses (doc.go) with the error body shape; an app
// it creates has only valid redirect URIs. Seeds: the id_commitment
// vectors of field_element.json and the Orb keys of pcp_v2_3.json.
func FuzzAdminAPI(f *testing.F) {
	var fields struct {
		IDCommitment []struct {
			Input string `json:"input"`
		} `json:"id_commitment"`
	}
	vectors.Load(f, "field_element.json", &fields)
	var pcp struct {
		Keys map[string]struct {
			PublicKeyPEM string `json:"public_key_pem"`
		} `json:"keys"`
	}
	vectors.Load(f, "pcp_v2_3.json", &pcp)
	count := vectors.NewCounter(f, "field_element.json and pcp_v2_3.json")
	const ct, auth = "application/json", "Bearer " + testToken
	add := func(route int, body any) {
		b, _ := json.Marshal(body)
		f.Add(uint8(route), ct, auth, b)
		count.Inc()
	}
	for _, v := range fields.IDCommitment {
		add(2, AddIdentityRequest{IdentityCommitment: v.Input})
		add(5, map[string]any{"signups": []map[string]string{{"id_commitment": v.Input, "signup_id": "s", "verified_at": "2024-01-01T00:00:00Z"}}})
	}
	for _, k := range pcp.Keys {
		add(6, OrbKeyRequest{OrbID: "orb", PublicKeyPEM: k.PublicKeyPEM})
	}
	f.Add(uint8(0), ct, auth, []byte(`{"name":"app","redirect_uris":["https://rp.example/cb","com.example.app:/cb","http://127.0.0.1:3000/cb"]}`))
	f.Add(uint8(8), ct, auth, []byte(`{"rp_id":"rp_0123456789abcdef","action":"vote","max_verifications":2}`))
	f.Add(uint8(3), ct, "Bearer x", []byte(`{"root":"0x01"}`))
	f.Fuzz(func(t *testing.T, route uint8, contentType, authorization string, body []byte) {
		st := jsontest.Open(t)
		h := newHandler(t, Options{Token: testToken, Store: st, Registry: &fakeRegistry{}, Keys: noopKeys{},
			ParseOrbKey: func(b []byte) error {
				if block, _ := pem.Decode(b); block == nil {
					return errors.New("not PEM")
				}
				return nil
			},
			Rand: rand.Reader, Now: func() time.Time { return time.Unix(1_700_000_000, 0) }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("Authorization", authorization)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !slices.Contains([]int{200, 201, 400, 401, 404, 405, 409, 413, 415}, w.Code) {
			t.Fatalf("%s %s %q: status %d %s", r.method, r.path, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			var e struct{ Error, Message string }
			if json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error == "" {
				t.Fatalf("error body %s", w.Body)
			}
		}
		for _, app := range apps(t, st) {
			if validateName(app.Name) != nil || len(app.RedirectURIs) == 0 {
				t.Fatalf("created app %+v", app)
			}
			for _, u := range app.RedirectURIs {
				if ValidateRedirectURI(u) != nil {
					t.Fatalf("created app with redirect URI %q", u)
				}
			}
		}
	})
}

// FuzzParseImportLines: every app an accepted batch holds is valid, and
// its line holds it.
func FuzzParseImportLines(f *testing.F) {
	f.Add(`{"app_id":"` + importID + `","rp_id":"` + importRP + `","name":"n","redirect_uris":[],"client_secret":"sk_0123456789abcdef01234567"}`)
	f.Add(`{"app_id":"app_0123","rp_id":"rp_1"}` + "\n{}")
	f.Fuzz(func(t *testing.T, input string) {
		reqs, lines, err := parseImportLines([]byte(input))
		if err != nil {
			return
		}
		text := strings.Split(input, "\n")
		for i, r := range reqs {
			if err := validateImport(&r); err != nil {
				t.Fatalf("accepted an invalid line: %v", err)
			}
			if !strings.Contains(text[lines[i]-1], r.AppID) {
				t.Fatalf("app %s is not on line %d", r.AppID, lines[i])
			}
		}
	})
}

// FuzzParseCommitments: whatever the request, parseCommitments either
// refuses it or returns 1 to MaxIdentitiesPerRequest non-zero, pairwise
// distinct elements, each the IDCommitment parse of its input (doc/crypto.md
// §a), from exactly one of the two fields. Seeds: the id_commitment
// vectors of field_element.json, alone, in pairs and in both fields.
func FuzzParseCommitments(f *testing.F) {
	var file struct {
		IDCommitment []struct {
			Input string `json:"input"`
		} `json:"id_commitment"`
	}
	vectors.Load(f, "field_element.json", &file)
	count := vectors.NewCounter(f, "field_element.json")
	prev := "0x01"
	for _, v := range file.IDCommitment {
		for _, req := range []AddIdentityRequest{
			{IdentityCommitment: v.Input},
			{IdentityCommitments: []string{v.Input}},
			{IdentityCommitments: []string{prev, v.Input}},
			{IdentityCommitment: prev, IdentityCommitments: []string{v.Input}},
		} {
			body, _ := json.Marshal(req)
			f.Add(body)
		}
		prev = v.Input
		count.Inc()
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req AddIdentityRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		got, err := parseCommitments(&req)
		if err != nil {
			if !errors.As(err, new(*Error)) {
				t.Fatalf("refusal is not an admin error: %v", err)
			}
			return
		}
		inputs := req.IdentityCommitments
		if inputs == nil {
			inputs = []string{req.IdentityCommitment}
		} else if req.IdentityCommitment != "" {
			t.Fatalf("both fields accepted: %q", body)
		}
		if len(got) != len(inputs) || len(got) > MaxIdentitiesPerRequest {
			t.Fatalf("%d commitments from %d inputs", len(got), len(inputs))
		}
		seen := map[fr.Element]bool{}
		for i, c := range got {
			want, err := field.ParseIDCommitment(inputs[i])
			if err != nil || c != want || c.IsZero() || seen[c] {
				t.Fatalf("commitment %d: %v from %q (%v), zero or repeated", i, c.String(), inputs[i], err)
			}
			seen[c] = true
		}
	})
}

package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/field"
	"worldid/record"
	"worldid/store/jsontest"
)

type fakeRegistry struct {
	added   []string
	roots   []string
	anchors []record.TrustAnchor
}

func (f *fakeRegistry) AddRootV4(_ context.Context, env string, _ fr.Element, _ time.Time) error {
	f.roots = append(f.roots, "world_id_4/"+env)
	return nil
}

// AddTrustAnchor accepts the kinds of record and refuses anything else, as
// the registry's validation would.
func (f *fakeRegistry) AddTrustAnchor(_ context.Context, a record.TrustAnchor) error {
	if a.Kind != record.AnchorIssuerKey && a.Kind != record.AnchorOPRFKey || a.ID == "" {
		return errors.New("bad anchor")
	}
	f.anchors = append(f.anchors, a)
	return nil
}

func (f *fakeRegistry) TrustAnchors(context.Context) ([]record.TrustAnchor, error) {
	return f.anchors, nil
}

// AddIdentities adds all of cs or, if one is already added, none; its
// "root" is the last commitment.
func (f *fakeRegistry) AddIdentities(_ context.Context, identifier, env string, cs []fr.Element) (int, fr.Element, error) {
	keys := make([]string, len(cs))
	for i, c := range cs {
		keys[i] = identifier + "/" + env + "/" + c.String()
		if slices.Contains(f.added, keys[i]) {
			return 0, fr.Element{}, record.ErrExists
		}
	}
	f.added = append(f.added, keys...)
	return len(f.added) - len(cs), cs[len(cs)-1], nil
}

func (f *fakeRegistry) AddExternalRoot(_ context.Context, identifier, env string, root fr.Element, depth int, _ time.Time) error {
	f.roots = append(f.roots, identifier+"/"+env)
	return nil
}

func TestIdentitiesRootsAndActions(t *testing.T) {
	st := jsontest.Open(t)
	if err := st.CreateApp(t.Context(), record.App{ID: "app_1", RPID: "rp_0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	reg := &fakeRegistry{}
	parseOrbKey := func(pem []byte) error {
		if string(pem) != "GOOD PEM" {
			return errors.New("not a key")
		}
		return nil
	}
	srv := httptest.NewServer(newHandler(t, Options{Token: testToken, Store: st, Registry: reg, ParseOrbKey: parseOrbKey, Rand: rand.Reader,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer srv.Close()
	const json = "application/json"
	cases := []struct {
		name, path, body string
		status           int
	}{
		{"identity", "/admin/identities", `{"identity_commitment":"0x01"}`, 201},
		{"identity decimal", "/admin/identities", `{"identifier":"device","environment":"staging","identity_commitment":"12345"}`, 201},
		{"identity duplicate", "/admin/identities", `{"identity_commitment":"0x1"}`, 409},
		{"identity ≥ p", "/admin/identities", `{"identity_commitment":"0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"}`, 400},
		{"identity bad identifier", "/admin/identities", `{"identifier":"passport","identity_commitment":"0x01"}`, 400},
		{"identity bad environment", "/admin/identities", `{"environment":"dev","identity_commitment":"0x01"}`, 400},
		{"root", "/admin/roots", `{"root":"0x` + strings.Repeat("0", 63) + `5"}`, 201},
		{"root short", "/admin/roots", `{"root":"0x5"}`, 400},
		{"root depth", "/admin/roots", `{"root":"0x` + strings.Repeat("0", 63) + `5","depth":40}`, 400},
		{"root at ten years ahead", "/admin/roots", `{"root":"0x` + strings.Repeat("0", 63) + `6","at":"` + time.Now().AddDate(10, 0, 0).Format(time.RFC3339) + `"}`, 400},
		{"root at within the skew", "/admin/roots", `{"root":"0x` + strings.Repeat("0", 63) + `7","at":"` + time.Now().Add(time.Minute).Format(time.RFC3339) + `"}`, 201},
		{"root at beyond the skew", "/admin/roots", `{"root":"0x` + strings.Repeat("0", 63) + `6","at":"` + time.Now().Add(6*time.Minute).Format(time.RFC3339) + `"}`, 400},
		{"root 4.0", "/admin/roots", `{"protocol_version":"4.0","environment":"staging","root":"0x` + strings.Repeat("0", 63) + `5"}`, 201},
		{"root 4.0 at ten years ahead", "/admin/roots", `{"protocol_version":"4.0","root":"0x` + strings.Repeat("0", 63) + `6","at":"` + time.Now().AddDate(10, 0, 0).Format(time.RFC3339) + `"}`, 400},
		{"root 4.0 at beyond the skew", "/admin/roots", `{"protocol_version":"4.0","root":"0x` + strings.Repeat("0", 63) + `6","at":"` + time.Now().Add(6*time.Minute).Format(time.RFC3339) + `"}`, 400},
		{"root 4.0 at within the skew", "/admin/roots", `{"protocol_version":"4.0","root":"0x` + strings.Repeat("0", 63) + `7","at":"` + time.Now().Add(time.Minute).Format(time.RFC3339) + `"}`, 201},
		// The spellings of an anchor coordinate: decimal or 0x/0X-hex below r.
		{"root 4.0 short hex", "/admin/roots", `{"protocol_version":"4.0","root":"0x8"}`, 201},
		{"root 4.0 decimal", "/admin/roots", `{"protocol_version":"4.0","root":"9"}`, 201},
		{"root 4.0 upper 0X", "/admin/roots", `{"protocol_version":"4.0","root":"0X0A"}`, 201},
		{"root 4.0 = r", "/admin/roots", `{"protocol_version":"4.0","root":"0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"}`, 400},
		{"root 4.0 not a number", "/admin/roots", `{"protocol_version":"4.0","root":"0xzz"}`, 400},
		{"root 4.0 bad environment", "/admin/roots", `{"protocol_version":"4.0","environment":"dev","root":"0x` + strings.Repeat("0", 63) + `5"}`, 400},
		{"root protocol 5.0", "/admin/roots", `{"protocol_version":"5.0","root":"0x` + strings.Repeat("0", 63) + `5"}`, 400},
		{"anchor", "/admin/anchors", `{"kind":"issuer_key","id":"1","x":"0x01","y":"2"}`, 201},
		{"anchor bad kind", "/admin/anchors", `{"kind":"root","id":"1","x":"0x01","y":"2"}`, 400},
		{"anchor unknown member", "/admin/anchors", `{"kind":"issuer_key","id":"1","x":"0x01","y":"2","z":"3"}`, 400},
		{"limit", "/admin/actions", `{"rp_id":"rp_0123456789abcdef","action":"vote","max_verifications":1}`, 200},
		{"limit unknown rp", "/admin/actions", `{"rp_id":"rp_0123456789abcdee","action":"vote","max_verifications":1}`, 404},
		{"limit negative", "/admin/actions", `{"rp_id":"rp_0123456789abcdef","action":"vote","max_verifications":-1}`, 400},
		{"limit no action", "/admin/actions", `{"rp_id":"rp_0123456789abcdef","max_verifications":1}`, 400},
		{"signups", "/admin/signups", `{"signups":[{"id_commitment":"12","signup_id":"s1","verified_at":"2026-01-02T03:04:05Z"}]}`, 200},
		{"signups empty", "/admin/signups", `{"signups":[]}`, 400},
		{"signups bad commitment", "/admin/signups", `{"signups":[{"id_commitment":"0xzz","signup_id":"s1","verified_at":"2026-01-02T03:04:05Z"}]}`, 400},
		{"signups no id", "/admin/signups", `{"signups":[{"id_commitment":"12","signup_id":"","verified_at":"2026-01-02T03:04:05Z"}]}`, 400},
		{"orb key", "/admin/orbkeys", `{"orb_id":"orb1","public_key_pem":"GOOD PEM"}`, 201},
		{"orb key invalid", "/admin/orbkeys", `{"orb_id":"orb1","public_key_pem":"BAD"}`, 400},
		{"orb key no orb", "/admin/orbkeys", `{"orb_id":"","public_key_pem":"GOOD PEM"}`, 400},
		{"refresh off", "/admin/refresh", `{"enabled":false}`, 200},
		{"refresh wrong type", "/admin/refresh", `{"enabled":"no"}`, 400},
	}
	for _, tc := range cases {
		if resp := do(t, srv, "POST", tc.path, testToken, json, tc.body); resp.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, resp.status, resp.body, tc.status)
		}
	}
	signup, errSignup := st.Signup(t.Context(), "0x"+strings.Repeat("0", 62)+"0c")
	orbKeys, errOrb := st.OrbKeys(t.Context(), "orb1")
	on, errOn := st.RefreshEnabled(t.Context())
	if errSignup != nil || signup.SignupID != "s1" || errOrb != nil || len(orbKeys) != 1 || errOn != nil || on {
		t.Fatalf("signup %+v (%v), orb keys %v (%v), refresh %v (%v)", signup, errSignup, orbKeys, errOrb, on, errOn)
	}
	if len(reg.anchors) != 1 || reg.anchors[0].At.IsZero() {
		t.Fatalf("anchors %+v", reg.anchors)
	}
	if resp := do(t, srv, "GET", "/admin/anchors", testToken, "", ""); resp.status != 200 || !strings.Contains(resp.body, `"kind":"issuer_key"`) {
		t.Fatalf("list anchors: %d %s", resp.status, resp.body)
	}
	action, err := st.Action(t.Context(), "rp_0123456789abcdef", "vote", "production")
	if len(reg.added) != 2 || !slices.Equal(reg.roots, []string{"orb/production", "orb/production", "world_id_4/staging", "world_id_4/production",
		"world_id_4/production", "world_id_4/production", "world_id_4/production"}) || err != nil || action.MaxVerifications != 1 {
		t.Fatalf("added %v roots %v action %+v (%v)", reg.added, reg.roots, action, err)
	}
}

// commitmentList is a JSON array of the given encodings.
func commitmentList(cs ...string) string {
	quoted := make([]string, len(cs))
	for i, c := range cs {
		quoted[i] = strconv.Quote(c)
	}
	return "[" + strings.Join(quoted, ",") + "]"
}

// longest returns n distinct commitments in their longest canonical
// encoding, 77 decimal digits: p−1, p−2, ….
func longest(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = new(big.Int).Sub(fr.Modulus(), big.NewInt(int64(i+1))).String()
	}
	return out
}

func TestAddIdentitiesBatch(t *testing.T) {
	reg := &fakeRegistry{}
	srv := httptest.NewServer(newHandler(t, Options{Token: testToken, Store: jsontest.Open(t), Registry: reg, Rand: rand.Reader,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	defer srv.Close()
	post := func(body string) response {
		return do(t, srv, "POST", "/admin/identities", testToken, "application/json", body)
	}
	resp := post(`{"identity_commitment":"0x01"}`)
	var got AddedIdentity
	if err := json.Unmarshal([]byte(resp.body), &got); resp.status != 201 || err != nil || got != (AddedIdentity{0, 1, field.Format(new(fr.Element).SetUint64(1))}) {
		t.Fatalf("single: %d %s", resp.status, resp.body)
	}
	resp = post(`{"environment":"staging","identity_commitments":` + commitmentList("0x02", "3", "0x04") + `}`)
	if err := json.Unmarshal([]byte(resp.body), &got); resp.status != 201 || err != nil || got != (AddedIdentity{1, 3, field.Format(new(fr.Element).SetUint64(4))}) {
		t.Fatalf("batch: %d %s", resp.status, resp.body)
	}
	if want := []string{"orb/production/1", "orb/staging/2", "orb/staging/3", "orb/staging/4"}; !slices.Equal(reg.added, want) {
		t.Fatalf("added %v, want %v", reg.added, want)
	}
	most := make([]string, MaxIdentitiesPerRequest)
	for i := range most {
		most[i] = field.Format(new(fr.Element).SetUint64(uint64(100 + i)))
	}
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"one already added", `{"identity_commitments":` + commitmentList("0x05", "1") + `}`, 409},
		{"repeated as decimal and hex", `{"identity_commitments":` + commitmentList("0x06", "42", "0x2a") + `}`, 400},
		{"both fields", `{"identity_commitment":"0x07","identity_commitments":["0x08"]}`, 400},
		{"empty list", `{"identity_commitments":[]}`, 400},
		{"null list and no commitment", `{"identity_commitments":null}`, 400},
		{"one invalid", `{"identity_commitments":` + commitmentList("0x09", "0x0g") + `}`, 400},
		{"zero", `{"identity_commitment":"0"}`, 400},
		{"zero in a batch", `{"identity_commitments":` + commitmentList("0x0a", "0x00") + `}`, 400},
		{"one too many", `{"identity_commitments":` + commitmentList(append(most, "0x0b")...) + `}`, 400},
		{"the most, in hex", `{"identity_commitments":` + commitmentList(most...) + `}`, 201},
		// The longest encodings still fit the body limit.
		{"the most, longest", `{"identifier":"secure_document","environment":"production","identity_commitments":` + commitmentList(longest(MaxIdentitiesPerRequest)...) + `}`, 201},
	} {
		if resp := post(tc.body); resp.status != tc.status {
			t.Errorf("%s: %d %.200s, want %d", tc.name, resp.status, resp.body, tc.status)
		}
	}
	if n := len(reg.added); n != 4+2*MaxIdentitiesPerRequest {
		t.Errorf("%d commitments added, want the 4 above and 2 full batches", n)
	}
}

// Trust anchors and 4.0 roots are admin changes like the others: one audit
// line each, naming the token, the change and the id.
func TestAnchorAndRootV4Audited(t *testing.T) {
	var mu sync.Mutex
	var log bytes.Buffer
	srv := httptest.NewServer(newHandler(t, Options{Token: testToken, Store: jsontest.Open(t), Registry: &fakeRegistry{}, Rand: rand.Reader,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(&lockedBuffer{mu: &mu, b: &log}, nil))}))
	defer srv.Close()
	for path, body := range map[string]string{
		"/admin/anchors": `{"kind":"oprf_key","id":"rp_0123456789abcdef","x":"0x01","y":"2"}`,
		"/admin/roots":   `{"protocol_version":"4.0","environment":"staging","root":"0x` + strings.Repeat("0", 63) + `5"}`,
	} {
		if resp := do(t, srv, "POST", path, testToken, "application/json", body); resp.status != 201 {
			t.Fatalf("%s: %d %s", path, resp.status, resp.body)
		}
	}
	prefix := `msg="admin change" who=` + TokenID(testToken)
	for _, want := range []string{prefix + ` what="trust anchor set" id=oprf_key/rp_0123456789abcdef`,
		prefix + ` what="external root added" id=world_id_4/staging root=0x` + strings.Repeat("0", 63) + `5`} {
		mu.Lock()
		text := log.String()
		mu.Unlock()
		if !strings.Contains(text, want) {
			t.Errorf("no audit line %q in\n%s", want, text)
		}
	}
}

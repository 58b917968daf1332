package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"worldid/record"
)

type fakeRegistry struct {
	added []string
	roots []string
}

func (f *fakeRegistry) AddIdentity(_ context.Context, identifier, env string, c fr.Element) (int, fr.Element, error) {
	key := identifier + "/" + env + "/" + c.String()
	for _, a := range f.added {
		if a == key {
			return 0, fr.Element{}, record.ErrExists
		}
	}
	f.added = append(f.added, key)
	return len(f.added) - 1, c, nil
}

func (f *fakeRegistry) AddExternalRoot(_ context.Context, identifier, env string, root fr.Element, depth int, _ time.Time) error {
	f.roots = append(f.roots, identifier+"/"+env)
	return nil
}

func TestIdentitiesRootsAndActions(t *testing.T) {
	st := &memStore{apps: []record.App{{ID: "app_1", RPID: "rp_0123456789abcdef"}}}
	reg := &fakeRegistry{}
	parseOrbKey := func(pem []byte) error {
		if string(pem) != "GOOD PEM" {
			return errors.New("not a key")
		}
		return nil
	}
	srv := httptest.NewServer(New(Options{Token: testToken, Store: st, Registry: reg, ParseOrbKey: parseOrbKey, Rand: rand.Reader,
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
	if len(st.signups) != 1 || st.signups[0].IDCommitment != "0x"+strings.Repeat("0", 62)+"0c" || len(st.orbKeys) != 1 || st.refreshOn == nil || *st.refreshOn {
		t.Fatalf("signups %v orb keys %v refresh %v", st.signups, st.orbKeys, st.refreshOn)
	}
	if len(reg.added) != 2 || len(reg.roots) != 1 || len(st.limits) != 1 || st.limits[0] != "rp_0123456789abcdef/production/vote=1" {
		t.Fatalf("added %v roots %v limits %v", reg.added, reg.roots, st.limits)
	}
}

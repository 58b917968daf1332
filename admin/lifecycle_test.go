package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	importID = "app_staging_0123456789abcdef0123456789abcdef"
	importRP = "rp_0123456789abcdef"
)

// newAuditedServer is newTestServer with the log kept for inspection.
func newAuditedServer(t *testing.T) (*httptest.Server, *memStore, func() string) {
	st := &memStore{}
	var mu sync.Mutex
	var log bytes.Buffer
	h := New(Options{Token: testToken, Store: st, Rand: rand.Reader,
		Now: func() time.Time { return time.Unix(1700000000, 0) },
		Log: slog.New(slog.NewTextHandler(&lockedBuffer{mu: &mu, b: &log}, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, st, func() string { mu.Lock(); defer mu.Unlock(); return log.String() }
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestImportValidation(t *testing.T) {
	good := func() ImportAppRequest {
		return ImportAppRequest{AppID: importID, RPID: importRP, Name: "n", RedirectURIs: []string{"https://a.example/cb"}}
	}
	r := good()
	if err := ValidateImport(&r); err != nil || r.Environment != "staging" {
		t.Fatalf("staging id: %v, environment %q", err, r.Environment)
	}
	r = good()
	r.AppID = "app_0123456789abcdef0123456789abcdef"
	if err := ValidateImport(&r); err != nil || r.Environment != "production" {
		t.Fatalf("app_ id: %v, environment %q", err, r.Environment)
	}
	for name, edit := range map[string]func(*ImportAppRequest){
		"short app_id":          func(r *ImportAppRequest) { r.AppID = importID[:len(importID)-1] },
		"upper-case app_id":     func(r *ImportAppRequest) { r.AppID = strings.ToUpper(importID) },
		"staging_ without app_": func(r *ImportAppRequest) { r.AppID = "staging_0123456789abcdef0123456789abcdef" },
		"suffix":                func(r *ImportAppRequest) { r.AppID = importID + "_app_review" },
		"rp_id 15 digits":       func(r *ImportAppRequest) { r.RPID = importRP[:len(importRP)-1] },
		"rp_id upper case":      func(r *ImportAppRequest) { r.RPID = "rp_0123456789ABCDEF" },
		"staging in production": func(r *ImportAppRequest) { r.Environment = "production" },
		"environment sandbox":   func(r *ImportAppRequest) { r.Environment = "sandbox" },
		"short secret":          func(r *ImportAppRequest) { r.ClientSecret = "sk_123" },
		"secret with a space":   func(r *ImportAppRequest) { r.ClientSecret = "sk_0123456789 0123456789abcdef" },
		"bad redirect":          func(r *ImportAppRequest) { r.RedirectURIs = []string{"http://evil.example/cb"} },
		"empty name":            func(r *ImportAppRequest) { r.Name = "" },
	} {
		r := good()
		edit(&r)
		if err := ValidateImport(&r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseImportLines(t *testing.T) {
	line := `{"app_id":"` + importID + `","rp_id":"` + importRP + `","name":"n","redirect_uris":[]}`
	other := strings.NewReplacer(importID, "app_ffffffffffffffffffffffffffffffff", importRP, "rp_ffffffffffffffff").Replace(line)
	if reqs, err := ParseImportLines(strings.NewReader(line+"\n\n"+other+"\n"), "f"); err != nil || len(reqs) != 2 {
		t.Fatalf("two apps: %v, %v", reqs, err)
	}
	for name, c := range map[string]struct{ input, want string }{
		"duplicate app_id":   {line + "\n" + strings.Replace(line, importRP, "rp_ffffffffffffffff", 1), "f:2: " + importID + " repeats line 1"},
		"duplicate rp_id":    {line + "\n" + strings.Replace(line, importID, "app_ffffffffffffffffffffffffffffffff", 1), "f:2: " + importRP + " repeats line 1"},
		"unknown member":     {strings.Replace(line, `"name"`, `"secret":"x","name"`, 1), "f:1:"},
		"duplicate member":   {strings.Replace(line, `"name":"n"`, `"name":"n","name":"m"`, 1), "f:1:"},
		"case-folded member": {strings.Replace(line, `"name"`, `"Name"`, 1), "f:1:"},
		"malformed id":       {other + "\n" + strings.Replace(line, importID, "app_123", 1), "f:2: app_id"},
		"two values":         {line + line, "f:1:"},
		"empty":              {"\n\n", "no apps"},
	} {
		if _, err := ParseImportLines(strings.NewReader(c.input), "f"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// The lifecycle routes change the app atomically, answer its new state and
// log one audit line each.
func TestLifecycleRoutes(t *testing.T) {
	srv, st, log := newAuditedServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	ctx := t.Context()
	imported, err := c.ImportApp(ctx, ImportAppRequest{AppID: importID, RPID: importRP, Name: "n"})
	if err != nil || !strings.HasPrefix(imported.ClientSecret, "sk_") || imported.Environment != "staging" || imported.State != "enabled" {
		t.Fatalf("import: %+v, %v", imported, err)
	}
	if _, err := c.ImportApp(ctx, ImportAppRequest{AppID: importID, RPID: importRP, Name: "again"}); err == nil || err.(*Error).Status != 409 {
		t.Fatalf("import of a taken id: %v", err)
	}
	const secret = "sk_given_0123456789abcdef0123"
	replaced, err := c.ImportApp(ctx, ImportAppRequest{AppID: importID, RPID: importRP, Name: "again", ClientSecret: secret, Replace: true})
	if err != nil || replaced.ClientSecret != "" || st.apps[0].SecretHash != hashSecret(secret) {
		t.Fatalf("replace with a given secret: %+v, %v", replaced, err)
	}
	name := "renamed"
	if a, err := c.UpdateApp(ctx, importID, UpdateAppRequest{Name: &name}); err != nil || a.Name != name || a.UpdatedAt.IsZero() {
		t.Fatalf("update: %+v, %v", a, err)
	}
	if _, err := c.UpdateApp(ctx, importID, UpdateAppRequest{}); err == nil {
		t.Error("an empty update was accepted")
	}
	rotated, err := c.RotateSecret(ctx, importID)
	if err != nil || st.apps[0].SecretHash != hashSecret(rotated.ClientSecret) {
		t.Fatalf("rotate: %v", err)
	}
	if a, err := c.SetAppEnabled(ctx, importID, false); err != nil || a.State != "disabled" || !st.apps[0].Disabled {
		t.Fatalf("disable: %+v, %v", a, err)
	}
	if a, err := c.SetAppEnabled(ctx, importID, true); err != nil || a.State != "enabled" {
		t.Fatalf("enable: %+v, %v", a, err)
	}
	for _, id := range []string{"app_ffffffffffffffffffffffffffffffff", "not-an-id"} {
		if _, err := c.SetAppEnabled(ctx, id, false); err == nil || err.(*Error).Status != 404 {
			t.Errorf("disable %s: %v", id, err)
		}
	}
	if err := c.DeleteApp(ctx, importID); err != nil || len(st.apps) != 0 {
		t.Fatalf("delete: %v", err)
	}
	if err := c.DeleteApp(ctx, importID); err == nil || err.(*Error).Status != 404 {
		t.Fatalf("delete twice: %v", err)
	}
	want := []string{"app imported", "app imported (replace)", "app updated", "client secret rotated", "app disabled", "app enabled", "app deleted"}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(log()), "\n") {
		if !strings.Contains(line, `msg="admin change" who=`+TokenID(testToken)+` what=`) {
			continue
		}
		if !strings.Contains(line, "id="+importID) {
			t.Errorf("audit line without the app id: %s", line)
		}
		what := line[strings.Index(line, "what=")+len("what="):]
		what, _, _ = strings.Cut(strings.TrimPrefix(what, `"`), `"`)
		got = append(got, what)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit lines %q, want %q", got, want)
	}
	if strings.Contains(log(), secret) || strings.Contains(log(), rotated.ClientSecret) || strings.Contains(log(), testToken+" ") {
		t.Error("the log holds a secret")
	}
	b, _ := json.Marshal(replaced)
	if strings.Contains(string(b), "secret_hash") {
		t.Error("an answer carries the secret hash")
	}
}

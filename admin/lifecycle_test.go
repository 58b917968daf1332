package admin

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"worldid/record"
	"worldid/store"
	"worldid/store/jsontest"
)

const (
	importID = "app_staging_0123456789abcdef0123456789abcdef"
	importRP = "rp_0123456789abcdef"
)

// newAuditedServer is newTestServer with the log kept for inspection.
func newAuditedServer(t *testing.T) (*httptest.Server, *store.DB, func() string) {
	st := jsontest.Open(t)
	var mu sync.Mutex
	var log bytes.Buffer
	h := newHandler(t, Options{Token: testToken, Store: st, Rand: rand.Reader,
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
	if err := validateImport(&r); err != nil || r.Environment != "staging" {
		t.Fatalf("staging id: %v, environment %q", err, r.Environment)
	}
	r = good()
	r.AppID = "app_0123456789abcdef0123456789abcdef"
	if err := validateImport(&r); err != nil || r.Environment != "production" {
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
		if err := validateImport(&r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseImportLines(t *testing.T) {
	line := `{"app_id":"` + importID + `","rp_id":"` + importRP + `","name":"n","redirect_uris":[]}`
	other := strings.NewReplacer(importID, "app_ffffffffffffffffffffffffffffffff", importRP, "rp_ffffffffffffffff").Replace(line)
	if reqs, lines, err := parseImportLines([]byte(line + "\n\n" + other + "\n")); err != nil || len(reqs) != 2 || lines[0] != 1 || lines[1] != 3 {
		t.Fatalf("two apps: %v, %v, %v", reqs, lines, err)
	}
	for name, c := range map[string]struct{ input, want string }{
		"duplicate app_id":   {line + "\n" + strings.Replace(line, importRP, "rp_ffffffffffffffff", 1), "line 2: " + importID + " repeats line 1"},
		"duplicate rp_id":    {line + "\n" + strings.Replace(line, importID, "app_ffffffffffffffffffffffffffffffff", 1), "line 2: " + importRP + " repeats line 1"},
		"unknown member":     {strings.Replace(line, `"name"`, `"secret":"x","name"`, 1), "line 1: invalid JSON"},
		"replace member":     {strings.Replace(line, `"name"`, `"replace":true,"name"`, 1), "line 1: invalid JSON"},
		"duplicate member":   {strings.Replace(line, `"name":"n"`, `"name":"n","name":"m"`, 1), "line 1:"},
		"case-folded member": {strings.Replace(line, `"name"`, `"Name"`, 1), "line 1:"},
		"malformed id":       {other + "\n\n" + strings.Replace(line, importID, "app_123", 1), "line 3: app_id"},
		"two values":         {line + line, "line 1:"},
		"empty":              {"\n\n", "no apps"},
		"long line":          {line + "\n" + strings.Repeat(" ", maxBody+1), "line 2:"},
		"too many":           {distinctApps(maxImportApps + 1), fmt.Sprintf("line %d: more than %d apps", maxImportApps+1, maxImportApps)},
	} {
		if _, _, err := parseImportLines([]byte(c.input)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// importLine is the import line of app n.
func importLine(n int) string {
	return fmt.Sprintf(`{"app_id":"app_%032x","rp_id":"rp_%016x","name":"app %d","redirect_uris":[]}`, n, n, n)
}

// distinctApps is n import lines of distinct apps.
func distinctApps(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(importLine(i) + "\n")
	}
	return b.String()
}

// One request imports a whole batch or nothing, and names the line of
// what it refuses.
func TestImportBatch(t *testing.T) {
	srv, st, log := newAuditedServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	ctx := t.Context()
	app := importLine
	batch := func(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }
	imported, err := c.ImportApps(ctx, batch(app(1), "", app(2)), false)
	if err != nil || len(imported.Apps) != 2 || imported.Apps[1].AppID != fmt.Sprintf("app_%032x", 2) || !strings.HasPrefix(imported.Apps[1].ClientSecret, "sk_") {
		t.Fatalf("import of two apps: %+v, %v", imported, err)
	}
	// App 1 is taken: the new app 3 before it is not imported either.
	_, err = c.ImportApps(ctx, batch(app(3), "", "", app(1)), false)
	if e, ok := err.(*Error); !ok || e.Status != 409 || !strings.Contains(e.Message, "line 4: app_id app_") || !strings.Contains(e.Message, "nothing imported") {
		t.Fatalf("a batch with a taken id: %v", err)
	}
	// A bad line refuses the batch before the store is asked.
	if _, err := c.ImportApps(ctx, batch(app(3), `{"app_id":"app_1"}`), false); err == nil || err.(*Error).Status != 400 || !strings.Contains(err.Error(), "line 2:") {
		t.Fatalf("a batch with a malformed line: %v", err)
	}
	if n := len(apps(t, st)); n != 2 {
		t.Fatalf("refused batches left %d apps, want 2", n)
	}
	// With replace, app 1 is replaced and app 3 created, in one operation.
	if imported, err := c.ImportApps(ctx, batch(strings.Replace(app(1), "app 1", "app 1 v2", 1), app(3)), true); err != nil || len(imported.Apps) != 2 {
		t.Fatalf("import with replace: %+v, %v", imported, err)
	}
	if got := apps(t, st); len(got) != 3 || !slices.ContainsFunc(got, func(a record.App) bool { return a.Name == "app 1 v2" }) {
		t.Fatalf("apps after replace: %+v", got)
	}
	if n := strings.Count(log(), `what="app imported"`); n != 2 {
		t.Errorf("%d audit lines for plain imports, want one per app (2)", n)
	}
	if n := strings.Count(log(), `what="app imported (replace)"`); n != 2 {
		t.Errorf("%d audit lines for replacing imports, want 2", n)
	}
	for name, c := range map[string]struct {
		contentType, query string
		body               string
		status             int
	}{
		"JSON content type": {"application/json", "", app(4), 415},
		"bad query":         {importType, "?replace=yes", app(4), 400},
		"extra query":       {importType, "?replace=true&x=1", app(4), 400},
		"too large":         {importType, "", strings.Repeat(" ", maxImportBody+1), 413},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/admin/apps/import"+c.query, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", c.contentType)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", name, resp.StatusCode, c.status)
		}
	}
}

// The lifecycle routes change the app atomically, answer its new state and
// log one audit line each.
func TestLifecycleRoutes(t *testing.T) {
	srv, st, log := newAuditedServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	ctx := t.Context()
	line := func(name, secret string) []byte {
		b, _ := json.Marshal(ImportAppRequest{AppID: importID, RPID: importRP, Name: name, ClientSecret: secret})
		return b
	}
	list, err := c.ImportApps(ctx, line("n", ""), false)
	if err != nil || len(list.Apps) != 1 {
		t.Fatalf("import: %+v, %v", list, err)
	}
	if imported := list.Apps[0]; !strings.HasPrefix(imported.ClientSecret, "sk_") || imported.Environment != "staging" || imported.State != "enabled" {
		t.Fatalf("import: %+v", imported)
	}
	if _, err := c.ImportApps(ctx, line("again", ""), false); err == nil || err.(*Error).Status != 409 {
		t.Fatalf("import of a taken id: %v", err)
	}
	const secret = "sk_given_0123456789abcdef0123"
	list, err = c.ImportApps(ctx, line("again", secret), true)
	if err != nil || len(list.Apps) != 1 || list.Apps[0].ClientSecret != "" || apps(t, st)[0].SecretHash != hashSecret(secret) {
		t.Fatalf("replace with a given secret: %+v, %v", list, err)
	}
	replaced := list.Apps[0]
	name := "renamed"
	if a, err := c.UpdateApp(ctx, importID, UpdateAppRequest{Name: &name}); err != nil || a.Name != name || a.UpdatedAt.IsZero() {
		t.Fatalf("update: %+v, %v", a, err)
	}
	if _, err := c.UpdateApp(ctx, importID, UpdateAppRequest{}); err == nil {
		t.Error("an empty update was accepted")
	}
	rotated, err := c.RotateSecret(ctx, importID)
	if err != nil || apps(t, st)[0].SecretHash != hashSecret(rotated.ClientSecret) {
		t.Fatalf("rotate: %v", err)
	}
	if a, err := c.SetAppEnabled(ctx, importID, false); err != nil || a.State != "disabled" || !apps(t, st)[0].Disabled {
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
	if err := c.DeleteApp(ctx, importID); err != nil || len(apps(t, st)) != 0 {
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

package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"worldid/backup"
	"worldid/internal/httpapi"
	"worldid/record"
	"worldid/store"
	"worldid/store/jsontest"
)

// apps is every app st holds.
func apps(t *testing.T, st Store) []record.App {
	t.Helper()
	list, err := st.Apps(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

const testToken = "t0k3n"

func newTestServer(t *testing.T) (*httptest.Server, *store.DB) {
	st := jsontest.Open(t)
	h := newHandler(t, Options{Token: testToken, Store: st, Rand: rand.Reader,
		Now: func() time.Time { return time.Unix(1700000000, 0) },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, st
}

func TestCreateAndListApps(t *testing.T) {
	srv, _ := newTestServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	created, err := c.CreateApp(t.Context(), CreateAppRequest{Name: "Demo", RedirectURIs: []string{"https://rp.example/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.AppID, "app_") || len(created.AppID) != 36 ||
		!strings.HasPrefix(created.RPID, "rp_") || len(created.RPID) != 19 ||
		!strings.HasPrefix(created.ClientSecret, "sk_") || len(created.ClientSecret) != 67 {
		t.Fatalf("bad identifiers: %+v", created)
	}
	list, err := c.Apps(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Apps) != 1 || list.Apps[0].AppID != created.AppID || list.Apps[0].RPID != created.RPID {
		t.Fatalf("list = %+v", list)
	}
}

func TestListNeverShowsSecrets(t *testing.T) {
	srv, st := newTestServer(t)
	if err := st.CreateApp(t.Context(), record.App{ID: "app_x", RPID: "rp_x", SecretHash: "deadbeef"}); err != nil {
		t.Fatal(err)
	}
	resp := do(t, srv, "GET", "/admin/apps", testToken, "", "")
	if strings.Contains(resp.body, "deadbeef") || strings.Contains(resp.body, "secret") {
		t.Fatalf("list leaks secret material: %s", resp.body)
	}
}

type response struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, srv *httptest.Server, method, path, token, ctype, body string) response {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, string(b)}
}

func TestBadRequests(t *testing.T) {
	const good = `{"name":"x","redirect_uris":["https://a.example/cb"]}`
	cases := []struct {
		name, method, path, token, ctype, body string
		status                                 int
		code                                   string
	}{
		{"no token", "GET", "/admin/apps", "", "", "", 401, "unauthenticated"},
		{"wrong token", "GET", "/admin/apps", "t0k3m", "", "", 401, "unauthenticated"},
		{"token prefix", "GET", "/admin/apps", "t0k3", "", "", 401, "unauthenticated"},
		{"unknown route", "GET", "/admin/nope", testToken, "", "", 404, "not_found"},
		{"wrong method", "DELETE", "/admin/apps", testToken, "", "", 405, "method_not_allowed"},
		{"content type", "POST", "/admin/apps", testToken, "text/plain", good, 415, "unsupported_media_type"},
		{"oversize", "POST", "/admin/apps", testToken, "application/json", `{"name":"` + strings.Repeat("a", maxBody) + `"}`, 413, "too_large"},
		{"unknown field", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["https://a.example/cb"],"admin":true}`, 400, "bad_request"},
		{"trailing data", "POST", "/admin/apps", testToken, "application/json", good + `{}`, 400, "bad_request"},
		{"duplicate member", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","name":"y","redirect_uris":["https://a.example/cb"]}`, 400, "bad_request"},
		{"case-folded member", "POST", "/admin/apps", testToken, "application/json", `{"Name":"x","redirect_uris":["https://a.example/cb"]}`, 400, "bad_request"},
		{"nested duplicate", "POST", "/admin/signups", testToken, "application/json", `{"signups":[{"id_commitment":"0x01","id_commitment":"0x02"}]}`, 400, "bad_request"},
		// This took 7 s and 2.3 GiB when each level built its path string.
		{"nested 32000 deep", "POST", "/admin/apps", testToken, "application/json", strings.Repeat("[", 32000) + strings.Repeat("]", 32000), 400, "bad_request"},
		{"invalid UTF-8", "POST", "/admin/apps", testToken, "application/json", "{\"name\":\"x\xff\",\"redirect_uris\":[\"https://a.example/cb\"]}", 400, "bad_request"},
		{"no uris", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":[]}`, 400, "bad_request"},
		{"relative uri", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["/cb"]}`, 400, "bad_request"},
		{"fragment", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["https://a.example/cb#x"]}`, 400, "bad_request"},
		{"http non-loopback", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["http://a.example/cb"]}`, 400, "bad_request"},
		{"javascript", "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["javascript:alert(1)"]}`, 400, "bad_request"},
		{"empty name", "POST", "/admin/apps", testToken, "application/json", `{"name":"","redirect_uris":["https://a.example/cb"]}`, 400, "bad_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, st := newTestServer(t)
			resp := do(t, srv, tc.method, tc.path, tc.token, tc.ctype, tc.body)
			if resp.status != tc.status || !strings.Contains(resp.body, `"error":"`+tc.code+`"`) {
				t.Fatalf("got %d %s, want %d %s", resp.status, resp.body, tc.status, tc.code)
			}
			if resp.header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", resp.header.Get("Content-Type"))
			}
			if tc.status == 405 && resp.header.Get("Allow") != "GET, POST" {
				t.Errorf("Allow = %q", resp.header.Get("Allow"))
			}
			if n := len(apps(t, st)); n != 0 {
				t.Errorf("a failed request stored %d apps", n)
			}
		})
	}
}

// TestDeepNestingNamesDepth: a 64 KiB body of nested arrays is refused as
// too deep (internal/leaf/strictjson measures its memory), not as something else.
func TestDeepNestingNamesDepth(t *testing.T) {
	srv, _ := newTestServer(t)
	body := strings.Repeat("[", 32000) + strings.Repeat("]", 32000)
	resp := do(t, srv, "POST", "/admin/apps", testToken, "application/json", body)
	if resp.status != 400 || !strings.Contains(resp.body, "nested more than 64 deep") {
		t.Fatalf("got %d %s", resp.status, resp.body)
	}
}

func TestValidateRedirectURI(t *testing.T) {
	for _, ok := range []string{"https://rp.example/cb?x=1", "http://127.0.0.1:3000/cb", "http://localhost/cb", "http://[::1]:8/cb", "com.example.app:/oauth"} {
		if err := ValidateRedirectURI(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "cb", "https:///cb", "https://u:p@rp.example/cb", "data:text/html,x", "file:///etc/passwd", "http://10.0.0.1/cb", "https://rp.example/cb#", "https://" + strings.Repeat("a", 3000)} {
		if err := ValidateRedirectURI(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestStorageUnavailableIs503(t *testing.T) {
	st := failingStore{}
	h := newHandler(t, Options{Token: testToken, Store: st, Rand: rand.Reader, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp := do(t, srv, "POST", "/admin/apps", testToken, "application/json", `{"name":"x","redirect_uris":["https://a.example/cb"]}`)
	if resp.status != 503 {
		t.Fatalf("status %d %s", resp.status, resp.body)
	}
}

// A client that went away is recorded as 499, not as a server failure.
func TestClientGoneIs499(t *testing.T) {
	h := newHandler(t, Options{Token: testToken, Store: canceledStore{}, Rand: rand.Reader, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	defer srv.Close()
	if resp := do(t, srv, "GET", "/admin/apps", testToken, "", ""); resp.status != httpapi.StatusClientClosed {
		t.Fatalf("status %d %s", resp.status, resp.body)
	}
}

type canceledStore struct{ failingStore }

func (canceledStore) Apps(context.Context) ([]record.App, error) { return nil, context.Canceled }

type failingStore struct{}

func (failingStore) CreateApp(context.Context, record.App) error {
	return errors.Join(errors.New("disk full"), record.ErrUnavailable)
}
func (failingStore) Apps(context.Context) ([]record.App, error) { return nil, record.ErrUnavailable }
func (failingStore) AppByRP(context.Context, string) (record.App, error) {
	return record.App{}, record.ErrUnavailable
}
func (failingStore) PutSignups(context.Context, []record.Signup) error { return record.ErrUnavailable }
func (failingStore) AddOrbKey(context.Context, string, string) error   { return record.ErrUnavailable }
func (failingStore) SetRefreshEnabled(context.Context, bool) error     { return record.ErrUnavailable }
func (failingStore) ImportApps(context.Context, []record.App, bool) error {
	return record.ErrUnavailable
}
func (failingStore) DeleteApp(context.Context, string) error { return record.ErrUnavailable }
func (failingStore) UpdateApp(context.Context, string, func(*record.App) error) (record.App, error) {
	return record.App{}, record.ErrUnavailable
}
func (failingStore) SetActionLimit(context.Context, string, string, string, int, time.Time) error {
	return record.ErrUnavailable
}

func (failingStore) Export(context.Context, backup.Emit) error { return record.ErrUnavailable }

// slowExport is a store whose export takes longer than a write timeout.
type slowExport struct {
	*store.DB
	rows  int
	pause time.Duration
}

func (s slowExport) Export(_ context.Context, emit backup.Emit) error {
	for i := range s.rows {
		time.Sleep(s.pause)
		app := record.App{ID: fmt.Sprintf("app_%032x", i), Name: strings.Repeat("n", 100<<10), RedirectURIs: []string{}}
		if err := emit(backup.TableApps, app); err != nil {
			return err
		}
	}
	return nil
}

// A backup that streams for longer than the listener's write timeout is
// not cut: the deadline moves with each chunk written.
func TestBackupOutlastsWriteTimeout(t *testing.T) {
	st := slowExport{DB: jsontest.Open(t), rows: 8, pause: 150 * time.Millisecond}
	srv := httptest.NewUnstartedServer(newHandler(t, Options{Token: testToken, Store: st, StoreName: "json", Rand: rand.Reader,
		Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	srv.Config.WriteTimeout = 500 * time.Millisecond
	srv.Start()
	defer srv.Close()
	var buf bytes.Buffer
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	if err := c.Backup(t.Context(), &buf); err != nil {
		t.Fatal(err)
	}
	if _, sum, err := backup.Read(&buf, nil); err != nil || sum.Counts[backup.TableApps] != st.rows {
		t.Fatalf("a backup streamed for %v under a %v write timeout: %v, %+v", time.Duration(st.rows)*st.pause, srv.Config.WriteTimeout, err, sum.Counts)
	}
}

// newHandler is New for tests: the required options a test leaves nil are
// fakes (no registry change, no keys, any PEM accepted).
func newHandler(t testing.TB, o Options) *Handler {
	t.Helper()
	if o.Registry == nil {
		o.Registry = &fakeRegistry{}
	}
	if o.Keys == nil {
		o.Keys = noopKeys{}
	}
	if o.ParseOrbKey == nil {
		o.ParseOrbKey = func([]byte) error { return nil }
	}
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// New refuses a configuration missing a required option, rather than
// answering 404 to "Bearer " (empty token) or panicking on first use.
func TestNewRefusesMissingOptions(t *testing.T) {
	full := Options{Token: testToken, Store: jsontest.Open(t), Registry: &fakeRegistry{}, Keys: noopKeys{},
		ParseOrbKey: func([]byte) error { return nil }}
	if _, err := New(full); err != nil {
		t.Fatalf("complete options refused: %v", err)
	}
	for name, clear := range map[string]func(*Options){
		"Token":       func(o *Options) { o.Token = "" },
		"Store":       func(o *Options) { o.Store = nil },
		"Registry":    func(o *Options) { o.Registry = nil },
		"Keys":        func(o *Options) { o.Keys = nil },
		"ParseOrbKey": func(o *Options) { o.ParseOrbKey = nil },
	} {
		o := full
		clear(&o)
		if h, err := New(o); err == nil || h != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, %v", name, h, err)
		}
	}
}

package admin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"worldid/record"
	"worldid/store"
	"worldid/store/jsontest"
)

// sectorDocs stands for the sector identifier documents on the web: the
// redirect URIs each URL lists.
type sectorDocs map[string][]string

func (d sectorDocs) check(_ context.Context, uri string, redirectURIs []string) error {
	listed, ok := d[uri]
	if !ok {
		return fmt.Errorf("fetch sector_identifier_uri: %s answered 404 Not Found", uri)
	}
	for _, r := range redirectURIs {
		if !slices.Contains(listed, r) {
			return fmt.Errorf("sector_identifier_uri: the document does not list the redirect URI %q", r)
		}
	}
	return nil
}

const (
	sectorURI  = "https://sector.example/uris.json"
	sectorURI2 = "https://SECTOR.example/other.json" // the same host, so the same sector
)

func newSectorServer(t *testing.T, docs sectorDocs) (*Client, *store.DB) {
	st := jsontest.Open(t)
	h := newHandler(t, Options{Token: testToken, Store: st, Rand: rand.Reader, CheckSector: docs.check,
		Now: func() time.Time { return time.Unix(1700000000, 0) }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}, st
}

func sectorApp(name string, uris []string, sector string) CreateAppRequest {
	return CreateAppRequest{Name: name, RedirectURIs: uris, SigninSettings: SigninSettings{Profile: record.ProfileCurrent, SectorIdentifierURI: sector}}
}

func wantAdminError(t *testing.T, err error, status int, text string) {
	t.Helper()
	e, ok := errors.AsType[*Error](err)
	if !ok || e.Status != status || !strings.Contains(e.Message, text) {
		t.Fatalf("error %v, want %d mentioning %q", err, status, text)
	}
}

// TestSectorRegistration: the first app of a sector proves for its own
// app_id, a later one for the first's; the document must list every
// redirect URI; a current-profile app spanning hosts needs a sector, a
// v1-contract one keeps today's rule; a sector never mixes environments.
func TestSectorRegistration(t *testing.T) {
	webURIs, mobileURIs := []string{"https://www.example/cb", "https://m.example/cb"}, []string{"https://app.example/cb", "com.example.app:/cb"}
	docs := sectorDocs{sectorURI: slices.Concat(webURIs, mobileURIs), sectorURI2: mobileURIs}
	c, st := newSectorServer(t, docs)
	ctx := t.Context()

	_, err := c.CreateApp(ctx, sectorApp("Spans hosts", webURIs, ""))
	wantAdminError(t, err, http.StatusBadRequest, "register a sector_identifier_uri")
	if _, err := c.CreateApp(ctx, CreateAppRequest{Name: "v1 spans hosts", RedirectURIs: webURIs}); err != nil {
		t.Fatalf("a v1-contract app with redirect URIs on two hosts: %v", err)
	}
	_, err = c.CreateApp(ctx, sectorApp("Unlisted", []string{"https://www.example/other"}, sectorURI))
	wantAdminError(t, err, http.StatusBadRequest, `does not list the redirect URI "https://www.example/other"`)

	web, err := c.CreateApp(ctx, sectorApp("Web", webURIs, sectorURI))
	if err != nil || web.SectorAppID != "" || web.SectorIdentifierURI != sectorURI {
		t.Fatalf("first app of the sector: %+v %v", web, err)
	}
	mobile, err := c.CreateApp(ctx, sectorApp("Mobile", mobileURIs, sectorURI2))
	if err != nil || mobile.SectorAppID != web.AppID {
		t.Fatalf("second app of the sector: %+v %v", mobile, err)
	}
	stored, _ := st.App(ctx, mobile.AppID)
	if stored.ProofAppID() != web.AppID || stored.SectorHost() != "sector.example" {
		t.Fatalf("stored %+v", stored)
	}
	other, err := c.CreateApp(ctx, sectorApp("Other", mobileURIs, ""))
	if err != nil || other.SectorAppID != "" {
		t.Fatalf("an app outside the sector: %+v %v", other, err)
	}
	line := fmt.Sprintf(`{"app_id":"app_staging_00000000000000000000000000000001","rp_id":"rp_0000000000000001","name":"Staging","redirect_uris":["https://app.example/cb"],"sector_identifier_uri":%q}`, sectorURI)
	_, err = c.ImportApps(ctx, []byte(line+"\n"), false)
	wantAdminError(t, err, http.StatusBadRequest, "must all be production or all staging")

	for name, bad := range map[string]string{
		"http": "http://sector.example/uris.json", "fragment": "https://sector.example/uris.json#x",
		"userinfo": "https://u@sector.example/uris.json", "relative": "/uris.json",
	} {
		_, err := c.CreateApp(ctx, sectorApp(name, mobileURIs, bad))
		wantAdminError(t, err, http.StatusBadRequest, "sector_identifier_uri must be an https URL")
	}
}

// TestSectorLifecycle: changing redirect URIs re-checks the document; the
// app whose app_id its sector proves for cannot be deleted while another
// app of the sector needs it; an import joins the sector of stored apps
// and of the batch's earlier apps, and cannot move the sector's first app
// out of it.
func TestSectorLifecycle(t *testing.T) {
	listed := []string{"https://a.example/cb", "https://b.example/cb"}
	c, _ := newSectorServer(t, sectorDocs{sectorURI: listed})
	ctx := t.Context()
	first, err := c.CreateApp(ctx, sectorApp("First", listed[:1], sectorURI))
	if err != nil {
		t.Fatal(err)
	}
	unlisted := []string{"https://c.example/cb"}
	_, err = c.UpdateApp(ctx, first.AppID, UpdateAppRequest{RedirectURIs: &unlisted})
	wantAdminError(t, err, http.StatusBadRequest, "does not list")
	if app, err := c.UpdateApp(ctx, first.AppID, UpdateAppRequest{RedirectURIs: &listed}); err != nil || len(app.RedirectURIs) != 2 {
		t.Fatalf("update to listed URIs: %+v %v", app, err)
	}

	lines := fmt.Sprintf(`{"app_id":"app_00000000000000000000000000000001","rp_id":"rp_0000000000000001","name":"One","redirect_uris":["https://b.example/cb"],"sector_identifier_uri":%q}
{"app_id":"app_00000000000000000000000000000002","rp_id":"rp_0000000000000002","name":"Two","redirect_uris":["https://a.example/cb"],"sector_identifier_uri":%q}
`, sectorURI, sectorURI)
	imported, err := c.ImportApps(ctx, []byte(lines), false)
	if err != nil || imported.Apps[0].SectorAppID != first.AppID || imported.Apps[1].SectorAppID != first.AppID {
		t.Fatalf("imported into the sector: %+v %v", imported, err)
	}

	err = c.DeleteApp(ctx, first.AppID)
	wantAdminError(t, err, http.StatusConflict, "signs in with the subjects of app "+first.AppID)
	moved := fmt.Sprintf(`{"app_id":%q,"rp_id":%q,"name":"First","redirect_uris":["https://a.example/cb"]}`, first.AppID, first.RPID)
	_, err = c.ImportApps(ctx, []byte(moved+"\n"), true)
	wantAdminError(t, err, http.StatusConflict, "must stay registered in the sector")
	for _, app := range imported.Apps {
		if err := c.DeleteApp(ctx, app.AppID); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DeleteApp(ctx, first.AppID); err != nil {
		t.Fatalf("the sector's last app: %v", err)
	}
}

// TestSectorNeedsAChecker: without Options.CheckSector a sector identifier
// is refused rather than registered unchecked.
func TestSectorNeedsAChecker(t *testing.T) {
	srv, _ := newTestServer(t)
	c := &Client{BaseURL: srv.URL, Token: testToken, HTTP: srv.Client()}
	_, err := c.CreateApp(t.Context(), sectorApp("Unchecked", []string{"https://a.example/cb"}, sectorURI))
	wantAdminError(t, err, http.StatusBadRequest, "does not accept sector_identifier_uri")
}

package admin

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"

	"worldid/internal/httpapi"
	"worldid/record"
)

// Bounds on app registration input.
const (
	maxAppName      = 100
	maxRedirectURIs = 20
	maxRedirectURI  = 2048
)

// CreateAppRequest is the body of POST /admin/apps.
type CreateAppRequest struct {
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"`
	SigninSettings
}

// AppInfo describes an app without its secret.
type AppInfo struct {
	AppID        string    `json:"app_id"`
	RPID         string    `json:"rp_id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirect_uris"`
	Environment  string    `json:"environment"` // production or staging
	State        string    `json:"state"`       // enabled or disabled
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"` // last operator change
	// RPSigner is the Ethereum address of the app's World ID 4.0 RP
	// signing key (rpkey.go); the key itself is never answered.
	RPSigner string `json:"rp_signer,omitempty"`
	// SectorAppID is the app of the same sector whose subjects this app's
	// sign-ins give (record.App.SectorAppID); absent: its own.
	SectorAppID string `json:"sector_app_id,omitempty"`
	SigninSettings
}

// CreatedApp is the answer to POST /admin/apps: the only time the client
// secret is ever shown.
type CreatedApp struct {
	AppInfo
	ClientSecret string `json:"client_secret"`
}

// AppList is the answer to GET /admin/apps.
type AppList struct {
	Apps []AppInfo `json:"apps"`
}

func (a *api) createApp(w http.ResponseWriter, r *http.Request) {
	req, err := parseCreateApp(w, r)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	app, secret, err := NewApp(a.Rand, a.Now(), req)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.registerSector(r.Context(), &app); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	if err := a.Store.CreateApp(r.Context(), app); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("app created", app.ID, "rp_id", app.RPID)
	httpapi.WriteJSON(w, http.StatusCreated, CreatedApp{AppInfo: infoOf(app), ClientSecret: secret})
}

func (a *api) listApps(w http.ResponseWriter, r *http.Request) {
	apps, err := a.Store.Apps(r.Context())
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	list := AppList{Apps: make([]AppInfo, 0, len(apps))}
	for _, app := range apps {
		list.Apps = append(list.Apps, infoOf(app))
	}
	httpapi.WriteJSON(w, http.StatusOK, list)
}

func parseCreateApp(w http.ResponseWriter, r *http.Request) (CreateAppRequest, error) {
	var req CreateAppRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return req, err
	}
	if err := validateName(req.Name); err != nil {
		return req, err
	}
	if err := validateRedirectURIs(req.RedirectURIs, 1); err != nil {
		return req, err
	}
	return req, req.SigninSettings.validate()
}

func validateName(name string) error {
	if name == "" || len(name) > maxAppName {
		return badRequest("name must be 1 to %d bytes", maxAppName)
	}
	for _, c := range name {
		if !unicode.IsPrint(c) {
			return badRequest("name must be printable text")
		}
	}
	return nil
}

// ValidateRedirectURI accepts the redirect URIs an operator may register:
// absolute, no fragment (RFC 6749 §3.1.2), no userinfo, and either https,
// http on a loopback host (RFC 8252 §7.3), or a private-use scheme in
// reverse-DNS form (RFC 8252 §7.1). The OIDC endpoints then compare
// redirect_uri to the registered strings exactly.
func ValidateRedirectURI(s string) error {
	if len(s) > maxRedirectURI {
		return fmt.Errorf("%.40q… is longer than %d bytes", s, maxRedirectURI)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", s)
	case !u.IsAbs():
		return fmt.Errorf("%q is not absolute", s)
	case u.Fragment != "" || strings.Contains(s, "#"):
		return fmt.Errorf("%q has a fragment", s)
	case u.User != nil:
		return fmt.Errorf("%q has userinfo", s)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
		if u.Host == "" {
			return fmt.Errorf("%q has no host", s)
		}
	case scheme == "http":
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("%q: http is allowed only for loopback hosts", s)
		}
	case strings.Contains(scheme, "."):
	default:
		return fmt.Errorf("%q: scheme must be https, http on loopback, or reverse-DNS", s)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// NewApp draws a new app's identifiers and secret: app_id "app_"+32 hex
// (128 bits), rp_id "rp_"+16 hex (64 bits), secret "sk_"+64 hex (256 bits).
// The record holds only the secret's SHA-256; the secret is returned once.
// The request is not validated here; serve uses it for the demo app.
func NewApp(rand io.Reader, now time.Time, req CreateAppRequest) (record.App, string, error) {
	var b [16 + 8]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return record.App{}, "", fmt.Errorf("admin: reading randomness: %w", err)
	}
	secret, hash, err := NewSecret(rand)
	if err != nil {
		return record.App{}, "", err
	}
	app := record.App{
		ID:           "app_" + hex.EncodeToString(b[:16]),
		RPID:         "rp_" + hex.EncodeToString(b[16:24]),
		Name:         req.Name,
		SecretHash:   hash,
		RedirectURIs: req.RedirectURIs,
		CreatedAt:    now.UTC(),
	}
	req.SigninSettings.apply(&app)
	return app, secret, nil
}

func infoOf(app record.App) AppInfo {
	state := "enabled"
	if app.Disabled {
		state = "disabled"
	}
	return AppInfo{AppID: app.ID, RPID: app.RPID, Name: app.Name, RedirectURIs: app.RedirectURIs,
		Environment: app.Environment(), State: state, CreatedAt: app.CreatedAt, UpdatedAt: app.UpdatedAt,
		RPSigner: rpSignerOf(app), SectorAppID: app.SectorAppID, SigninSettings: signinSettingsOf(app)}
}

func badRequest(format string, args ...any) error {
	return &Error{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...)}
}

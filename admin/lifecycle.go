package admin

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"worldid/internal/httpapi"
	"worldid/record"
)

// App lifecycle: import with existing ids, update, secret rotation,
// disable/enable, delete.

// Bounds on an imported client secret: printable ASCII without spaces, and
// random-looking and strong enough (secretstrength.go) that its fast hash
// (record.App.SecretHash) cannot be brute-forced the way a password could.
const (
	minImportedSecret = 24
	maxImportedSecret = 256
)

// Bounds on one import batch: its body and its apps (each line is also
// bounded by maxBody).
const (
	maxImportBody = 4 << 20
	maxImportApps = 1000
)

// importType is the media type of an import batch: JSON lines.
const importType = "application/x-ndjson"

// ImportAppRequest is one line of the body of POST /admin/apps/import, a
// file `worldid app import` sends as it is: an app registered elsewhere
// (the World ID developer portal), with its ids.
type ImportAppRequest struct {
	AppID        string   `json:"app_id"` // app_<32 hex> or app_staging_<32 hex>
	RPID         string   `json:"rp_id"`  // rp_<16 hex>
	Name         string   `json:"name"`
	RedirectURIs []string `json:"redirect_uris"` // may be empty: a verify-only app
	// Environment is production or staging; empty means staging for an
	// app_staging_ id and production otherwise.
	Environment string `json:"environment,omitempty"`
	// ClientSecret is the app's existing secret, stored as its hash;
	// empty: one is generated and shown once.
	ClientSecret string `json:"client_secret,omitempty"`
	SigninSettings
}

// ImportedApp is one app of the answer to POST /admin/apps/import;
// ClientSecret is set only when it was generated.
type ImportedApp struct {
	AppInfo
	ClientSecret string `json:"client_secret,omitempty"`
}

// ImportedApps answers POST /admin/apps/import: the apps in line order.
type ImportedApps struct {
	Apps []ImportedApp `json:"apps"`
}

// UpdateAppRequest is the body of POST /admin/apps/{app_id}: the members
// present are changed.
type UpdateAppRequest struct {
	Name         *string   `json:"name,omitempty"`
	RedirectURIs *[]string `json:"redirect_uris,omitempty"`
}

// RotatedSecret is the answer to POST /admin/apps/{app_id}/secret.
type RotatedSecret struct {
	AppID        string `json:"app_id"`
	ClientSecret string `json:"client_secret"`
}

// validateImport checks one app of an import and sets its environment.
func validateImport(req *ImportAppRequest) error {
	switch {
	case !record.ValidAppID(req.AppID):
		return badRequest("app_id %q is not app_ or app_staging_ followed by 32 lowercase hex digits", req.AppID)
	case !record.ValidRPID(req.RPID):
		return badRequest("rp_id %q is not rp_ followed by 16 lowercase hex digits", req.RPID)
	}
	staging := strings.HasPrefix(req.AppID, "app_staging_")
	switch {
	case req.Environment == "" && staging:
		req.Environment = "staging"
	case req.Environment == "":
		req.Environment = "production"
	case req.Environment != "production" && req.Environment != "staging":
		return badRequest("environment must be production or staging")
	case staging && req.Environment != "staging":
		return badRequest("app_id %q is a staging id but environment is %s", req.AppID, req.Environment)
	}
	if err := validateName(req.Name); err != nil {
		return err
	}
	if err := validateRedirectURIs(req.RedirectURIs, 0); err != nil {
		return err
	}
	if err := req.SigninSettings.validate(); err != nil {
		return err
	}
	if s := req.ClientSecret; s != "" {
		if len(s) < minImportedSecret || len(s) > maxImportedSecret || strings.IndexFunc(s, func(c rune) bool { return c <= ' ' || c > '~' }) >= 0 {
			return badRequest("client_secret must be %d to %d printable ASCII characters without spaces", minImportedSecret, maxImportedSecret)
		}
		if why := weakSecret(s); why != "" {
			return badRequest("client_secret %s", why)
		}
	}
	return nil
}

func validateRedirectURIs(uris []string, least int) error {
	if len(uris) < least || len(uris) > maxRedirectURIs {
		return badRequest("redirect_uris must hold %d to %d URIs", least, maxRedirectURIs)
	}
	for _, u := range uris {
		if err := ValidateRedirectURI(u); err != nil {
			return badRequest("redirect_uris: %v", err)
		}
	}
	return nil
}

// importBatch is a parsed POST /admin/apps/import.
type importBatch struct {
	apps    []ImportAppRequest
	lines   []int // the line of each app in the body
	replace bool
}

func parseImport(w http.ResponseWriter, r *http.Request) (importBatch, error) {
	var b importBatch
	if _, ok := httpapi.HasMediaType(r.Header.Get("Content-Type"), importType); !ok {
		return b, &Error{http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be " + importType}
	}
	switch r.URL.RawQuery {
	case "", "replace=false":
	case "replace=true":
		b.replace = true
	default:
		return b, badRequest("the only query is replace=true or replace=false")
	}
	body, err := readBody(w, r, maxImportBody)
	if err != nil {
		return b, err
	}
	b.apps, b.lines, err = parseImportLines(body)
	return b, err
}

// parseImportLines reads JSON lines strictly (unknown or repeated members
// are errors), validates each app, and refuses an app_id or rp_id that
// appears twice; errors name the line. Blank lines are skipped.
func parseImportLines(body []byte) (apps []ImportAppRequest, lines []int, err error) {
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxBody)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if len(apps) == maxImportApps {
			return nil, nil, badRequest("line %d: more than %d apps; import them in several files", line, maxImportApps)
		}
		var req ImportAppRequest
		if err := decodeBytes(text, &req); err != nil {
			return nil, nil, badRequest("line %d: %s", line, err.(*Error).Message)
		}
		if err := validateImport(&req); err != nil {
			return nil, nil, badRequest("line %d: %s", line, err.(*Error).Message)
		}
		for _, id := range []string{req.AppID, req.RPID} {
			if prev, dup := seen[id]; dup {
				return nil, nil, badRequest("line %d: %s repeats line %d", line, id, prev)
			}
			seen[id] = line
		}
		apps, lines = append(apps, req), append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, badRequest("line %d: %v (a line holds at most %d bytes)", line+1, err, maxBody)
	}
	if len(apps) == 0 {
		return nil, nil, badRequest("no apps")
	}
	return apps, lines, nil
}

// importApps stores the whole batch in one store operation: every app or,
// if one is refused, none.
func (a *api) importApps(w http.ResponseWriter, r *http.Request) {
	batch, err := parseImport(w, r)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	apps := make([]record.App, len(batch.apps))
	out := ImportedApps{Apps: make([]ImportedApp, len(batch.apps))}
	now := a.Now().UTC()
	for i, req := range batch.apps {
		secret := req.ClientSecret
		if secret == "" {
			if secret, err = newSecret(a.Rand); err != nil {
				writeError(w, r, a.Log, err)
				return
			}
			out.Apps[i].ClientSecret = secret
		}
		uris := req.RedirectURIs
		if uris == nil {
			uris = []string{}
		}
		apps[i] = record.App{ID: req.AppID, RPID: req.RPID, Name: req.Name, SecretHash: hashSecret(secret),
			RedirectURIs: uris, CreatedAt: now, Staging: req.Environment == "staging"}
		req.SigninSettings.apply(&apps[i])
	}
	if err := a.importSectors(r.Context(), apps, batch.replace); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	for i := range apps {
		out.Apps[i].AppInfo = infoOf(apps[i])
	}
	if err := a.Store.ImportApps(r.Context(), apps, batch.replace); err != nil {
		writeError(w, r, a.Log, importConflict(err, batch, apps))
		return
	}
	if batch.replace {
		// A replaced app kept its creation time: answer what is stored.
		if err := a.storedInfo(r.Context(), out.Apps); err != nil {
			writeError(w, r, a.Log, err)
			return
		}
	}
	what := map[bool]string{false: "app imported", true: "app imported (replace)"}[batch.replace]
	for _, app := range apps {
		a.audit(what, app.ID, "rp_id", app.RPID, "environment", app.Environment())
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
}

// storedInfo sets the AppInfo of each imported app to the stored app's.
func (a *api) storedInfo(ctx context.Context, imported []ImportedApp) error {
	stored, err := a.Store.Apps(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]record.App, len(stored))
	for _, app := range stored {
		byID[app.ID] = app
	}
	for i := range imported {
		if app, ok := byID[imported[i].AppID]; ok {
			imported[i].AppInfo = infoOf(app)
		}
	}
	return nil
}

// importConflict names the line of the app a store refused for a taken id.
func importConflict(err error, batch importBatch, apps []record.App) error {
	var item *record.ItemError
	if !errors.As(err, &item) || !errors.Is(err, record.ErrExists) || item.Index >= len(apps) {
		return err
	}
	app, line := apps[item.Index], batch.lines[item.Index]
	msg := fmt.Sprintf("line %d: app_id %s or rp_id %s is already registered (import with replace to overwrite an app_id); nothing imported", line, app.ID, app.RPID)
	if batch.replace {
		msg = fmt.Sprintf("line %d: rp_id %s belongs to another app; nothing imported", line, app.RPID)
	}
	return &Error{http.StatusConflict, "conflict", msg}
}

func (a *api) updateApp(w http.ResponseWriter, r *http.Request) {
	var req UpdateAppRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	switch {
	case req.Name == nil && req.RedirectURIs == nil:
		writeError(w, r, a.Log, badRequest("give name, redirect_uris or both"))
		return
	case req.Name != nil:
		if err := validateName(*req.Name); err != nil {
			writeError(w, r, a.Log, err)
			return
		}
	}
	var checked record.App
	if req.RedirectURIs != nil {
		var err error
		if err = validateRedirectURIs(*req.RedirectURIs, 0); err == nil {
			checked, err = a.recheckSector(r.Context(), r.PathValue("app_id"), *req.RedirectURIs)
		}
		if err != nil {
			writeError(w, r, a.Log, err)
			return
		}
	}
	a.changeApp(w, r, "app updated", func(app *record.App) error {
		if req.Name != nil {
			app.Name = *req.Name
		}
		if req.RedirectURIs != nil {
			if app.SectorIdentifierURI != checked.SectorIdentifierURI || app.Profile != checked.Profile {
				return &Error{http.StatusConflict, "conflict", "the app's sector or profile changed during the update; try again"}
			}
			app.RedirectURIs = *req.RedirectURIs
		}
		return nil
	})
}

// switchApp disables or enables an app.
func (a *api) switchApp(enable bool) http.HandlerFunc {
	what := map[bool]string{false: "app disabled", true: "app enabled"}[enable]
	return func(w http.ResponseWriter, r *http.Request) {
		a.changeApp(w, r, what, func(app *record.App) error { app.Disabled = !enable; return nil })
	}
}

// rotateSecret replaces the client secret; the old one stops working at
// once (doc.go: no grace period).
func (a *api) rotateSecret(w http.ResponseWriter, r *http.Request) {
	secret, hash, err := NewSecret(a.Rand)
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	app, ok := a.change(w, r, "client secret rotated", func(app *record.App) error { app.SecretHash = hash; return nil })
	if ok {
		httpapi.WriteJSON(w, http.StatusOK, RotatedSecret{AppID: app.ID, ClientSecret: secret})
	}
}

// changeApp applies change to the app of the path and answers its info.
func (a *api) changeApp(w http.ResponseWriter, r *http.Request, what string, change func(*record.App) error) {
	if app, ok := a.change(w, r, what, change); ok {
		httpapi.WriteJSON(w, http.StatusOK, infoOf(app))
	}
}

// change applies change atomically, stamps UpdatedAt and logs it; on
// failure (change's error included) it has written the error.
func (a *api) change(w http.ResponseWriter, r *http.Request, what string, change func(*record.App) error) (record.App, bool) {
	id := r.PathValue("app_id")
	if !record.ValidAppID(id) {
		writeError(w, r, a.Log, &Error{http.StatusNotFound, "not_found", fmt.Sprintf("no app %q", id)})
		return record.App{}, false
	}
	app, err := a.Store.UpdateApp(r.Context(), id, func(app *record.App) error {
		app.UpdatedAt = a.Now().UTC()
		return change(app)
	})
	if errors.Is(err, record.ErrNotFound) {
		err = &Error{http.StatusNotFound, "not_found", fmt.Sprintf("no app %q", id)}
	}
	if err != nil {
		writeError(w, r, a.Log, err)
		return record.App{}, false
	}
	a.audit(what, id)
	return app, true
}

func (a *api) deleteApp(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("app_id")
	err := error(&Error{http.StatusNotFound, "not_found", fmt.Sprintf("no app %q", id)})
	if record.ValidAppID(id) {
		if err = a.deletableFromSector(r.Context(), id); err == nil {
			err = a.Store.DeleteApp(r.Context(), id)
		}
		if errors.Is(err, record.ErrNotFound) {
			err = &Error{http.StatusNotFound, "not_found", fmt.Sprintf("no app %q", id)}
		}
	}
	if err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("app deleted", id)
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"app_id": id, "status": "deleted"})
}

// NewSecret draws a client secret and returns it with the hash an app
// record keeps (record.App.SecretHash).
func NewSecret(rand io.Reader) (secret, hash string, err error) {
	secret, err = newSecret(rand)
	return secret, hashSecret(secret), err
}

// newSecret draws a client secret: "sk_" + 64 hex (256 bits).
func newSecret(rand io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("admin: reading randomness: %w", err)
	}
	return "sk_" + hex.EncodeToString(b[:]), nil
}

// hashSecret is what the store keeps of a secret: its SHA-256, hex.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

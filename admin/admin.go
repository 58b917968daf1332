package admin

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"worldid/backup"
	"worldid/internal/httpapi"
	"worldid/internal/leaf/strictjson"
	"worldid/record"
)

// maxBody bounds every admin request body (doc/design.md §8).
const maxBody = 64 << 10

// Store is the storage the admin API needs.
type Store interface {
	CreateApp(ctx context.Context, a record.App) error
	Apps(ctx context.Context) ([]record.App, error)
	AppByRP(ctx context.Context, rpID string) (record.App, error)
	SetActionLimit(ctx context.Context, rpID, action, environment string, maxVerifications int, now time.Time) error
	PutSignups(ctx context.Context, ss []record.Signup) error
	AddOrbKey(ctx context.Context, orbID, pem string) error
	SetRefreshEnabled(ctx context.Context, on bool) error
	// ImportApps stores apps in one operation, all or none; a taken id
	// fails it with a *record.ItemError naming the app. With replace, a
	// replaced app keeps its CreatedAt and gets UpdatedAt = the
	// replacement's CreatedAt.
	ImportApps(ctx context.Context, apps []record.App, replace bool) error
	UpdateApp(ctx context.Context, id string, change func(*record.App) error) (record.App, error)
	DeleteApp(ctx context.Context, id string) error
	Exporter
}

// Keys manages the OIDC signing keys.
type Keys interface {
	RotateKeys(ctx context.Context) error
	// RevokeKey removes a key now; if it was signing, a new key signs
	// from now on. A key revoked before is an error wrapping
	// record.ErrKeyRevoked, an unknown one record.ErrNotFound.
	RevokeKey(ctx context.Context, kid string) error
	// KeyList describes every stored key, oldest first, then the revoked
	// ones (state "revoked", RevokedAt).
	KeyList(ctx context.Context) ([]record.KeyInfo, error)
}

// Options configures the admin API. Token, Store, Registry, Keys and
// ParseOrbKey are required.
type Options struct {
	Token    string // the bearer token; must not be empty
	Store    Store
	Registry Registry
	Keys     Keys
	// ParseOrbKey validates an Orb public key PEM before it is trusted.
	ParseOrbKey func(pem []byte) error
	// StoreName (json or postgres) and Files (the data-dir files a backup
	// carries; nil: none) serve GET /admin/backup.
	StoreName string
	Files     func(ctx context.Context) ([]backup.File, error)
	// CheckSector checks an app's sector identifier document (sector.go);
	// nil: sector_identifier_uri is refused.
	CheckSector CheckSector
	Rand        io.Reader        // source of app ids and secrets; default crypto/rand.Reader
	Now         func() time.Time // default time.Now
	Log         *slog.Logger     // default: discard
}

// Handler serves every path under /admin/.
type Handler struct{ serve http.Handler }

// ServeHTTP authenticates the request and routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serve.ServeHTTP(w, r) }

type api struct {
	Options
	tokenDigest [sha256.Size]byte
	who         string // the audit log's name of the token
}

// New checks o, fills its defaults and returns the admin API.
func New(o Options) (*Handler, error) {
	switch {
	case o.Token == "":
		return nil, errors.New("admin: Options.Token is empty")
	case o.Store == nil:
		return nil, errors.New("admin: Options.Store is nil")
	case o.Registry == nil:
		return nil, errors.New("admin: Options.Registry is nil")
	case o.Keys == nil:
		return nil, errors.New("admin: Options.Keys is nil")
	case o.ParseOrbKey == nil:
		return nil, errors.New("admin: Options.ParseOrbKey is nil")
	}
	o.Rand = cmp.Or[io.Reader](o.Rand, rand.Reader)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	a := &api{Options: o, tokenDigest: sha256.Sum256([]byte(o.Token)), who: TokenID(o.Token)}
	return &Handler{serve: a.routes()}, nil
}

// routes is every admin route behind the token check.
func (a *api) routes() http.Handler {
	mux := http.NewServeMux()
	a.route(mux, "/admin/apps", map[string]http.HandlerFunc{
		http.MethodGet:  a.listApps,
		http.MethodPost: a.createApp,
	})
	a.route(mux, "/admin/apps/import", map[string]http.HandlerFunc{http.MethodPost: a.importApps})
	a.route(mux, "/admin/apps/{app_id}", map[string]http.HandlerFunc{
		http.MethodPost:   a.updateApp,
		http.MethodDelete: a.deleteApp,
	})
	a.route(mux, "/admin/apps/{app_id}/rp-signing-key", map[string]http.HandlerFunc{
		http.MethodPut:    a.setRPSigningKey,
		http.MethodDelete: a.clearRPSigningKey,
	})
	a.route(mux, "/admin/apps/{app_id}/secret", map[string]http.HandlerFunc{http.MethodPost: a.rotateSecret})
	a.route(mux, "/admin/apps/{app_id}/disable", map[string]http.HandlerFunc{http.MethodPost: a.switchApp(false)})
	a.route(mux, "/admin/apps/{app_id}/enable", map[string]http.HandlerFunc{http.MethodPost: a.switchApp(true)})
	a.route(mux, "/admin/keys", map[string]http.HandlerFunc{http.MethodGet: a.listKeys})
	a.route(mux, "/admin/backup", map[string]http.HandlerFunc{http.MethodGet: a.getBackup})
	a.route(mux, "/admin/keys/{kid}/revoke", map[string]http.HandlerFunc{http.MethodPost: a.revokeKey})
	a.route(mux, "/admin/identities", map[string]http.HandlerFunc{http.MethodPost: a.addIdentity})
	a.route(mux, "/admin/roots", map[string]http.HandlerFunc{http.MethodPost: a.addRoot})
	a.route(mux, "/admin/anchors", map[string]http.HandlerFunc{
		http.MethodGet:  a.listAnchors,
		http.MethodPost: a.addAnchor,
	})
	a.route(mux, "/admin/keys/rotate", map[string]http.HandlerFunc{http.MethodPost: a.rotateKeys})
	a.route(mux, "/admin/signups", map[string]http.HandlerFunc{http.MethodPost: a.importSignups})
	a.route(mux, "/admin/orbkeys", map[string]http.HandlerFunc{http.MethodPost: a.addOrbKey})
	a.route(mux, "/admin/refresh", map[string]http.HandlerFunc{http.MethodPost: a.switchRefresh})
	a.route(mux, "/admin/actions", map[string]http.HandlerFunc{http.MethodPost: a.setActionLimit})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, a.Log, &Error{http.StatusNotFound, "not_found", "no admin route " + r.URL.Path})
	})
	return a.authenticate(mux)
}

// route registers one path whose methods are dispatched here, so that a
// wrong method gets the admin error shape rather than ServeMux's plain text.
func (a *api) route(mux *http.ServeMux, path string, methods map[string]http.HandlerFunc) {
	allow := slices.Sorted(maps.Keys(methods))
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if !httpapi.AllowMethod(w, r, allow...) {
			writeError(w, r, a.Log, &Error{http.StatusMethodNotAllowed, "method_not_allowed", r.Method + " is not allowed here"})
			return
		}
		methods[r.Method](w, r)
	})
}

// rotateKeys publishes the next signing key now; it starts signing after
// the pre-publication delay (oidc doc.go).
func (a *api) rotateKeys(w http.ResponseWriter, r *http.Request) {
	if err := a.Keys.RotateKeys(r.Context()); err != nil {
		writeError(w, r, a.Log, err)
		return
	}
	a.audit("signing key rotation scheduled", "")
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "rotation scheduled"})
}

// TokenID names an admin token in the audit log without revealing it: the
// first 8 hex digits of its SHA-256. Offline commands log "cli" instead.
func TokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "token:" + hex.EncodeToString(sum[:4])
}

// audit logs one admin change as one line: who made it, what it was, and
// the id it concerns (design: every admin change is logged).
func (a *api) audit(what, id string, attrs ...any) {
	a.Log.Info("admin change", append([]any{"who", a.who, "what", what, "id", id}, attrs...)...)
}

func (a *api) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], a.tokenDigest[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="worldid-admin"`)
			writeError(w, r, a.Log, &Error{http.StatusUnauthorized, "unauthenticated", "missing or wrong admin token"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Error is the admin API's one error type.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("admin: %s: %s", e.Code, e.Message) }

// decodeJSON is the only code that reads an admin request body.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	if _, ok := httpapi.HasMediaType(r.Header.Get("Content-Type"), "application/json"); !ok {
		return &Error{http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json"}
	}
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	return decodeBytes(body, v)
}

// readBody reads a body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, &Error{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("body exceeds %d bytes", limit)}
	case err != nil:
		return nil, &Error{http.StatusBadRequest, "bad_request", "reading the body: " + err.Error()}
	}
	return body, nil
}

// decodeBytes decodes one JSON value strictly: exact member names, no
// duplicates, nothing after the value.
func decodeBytes(body []byte, v any) error {
	if err := strictjson.Decode(body, v); err != nil {
		return badRequest("invalid JSON body: %v", err)
	}
	return nil
}

// writeError maps err to the admin error body. Storage sentinels become
// 409/404; any other failure is triaged by httpapi.FailureStatus (499,
// 503 or 500), logged without the request.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, record.ErrExists):
		e = &Error{http.StatusConflict, "conflict", "already exists"}
	case errors.Is(err, record.ErrNotFound):
		e = &Error{http.StatusNotFound, "not_found", "no such record"}
	default:
		e = failure(httpapi.FailureStatus(r.Context(), log, "admin", err))
	}
	httpapi.WriteJSON(w, e.Status, map[string]string{"error": e.Code, "message": e.Message})
}

// failure is the admin body of a triaged failure status.
func failure(status int) *Error {
	switch status {
	case httpapi.StatusClientClosed:
		return &Error{status, "client_closed", "the client closed the request"}
	case http.StatusServiceUnavailable:
		return &Error{status, "unavailable", "storage cannot accept writes"}
	default:
		return &Error{status, "internal", "internal error"}
	}
}

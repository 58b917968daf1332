package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client calls the admin API; the worldid CLI subcommands use it.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:8081
	Token   string
	HTTP    *http.Client
}

// CreateApp registers an app and returns its credentials.
func (c *Client) CreateApp(ctx context.Context, req CreateAppRequest) (CreatedApp, error) {
	var out CreatedApp
	return out, c.do(ctx, http.MethodPost, "/admin/apps", req, &out)
}

// Apps lists the registered apps.
func (c *Client) Apps(ctx context.Context) (AppList, error) {
	var out AppList
	return out, c.do(ctx, http.MethodGet, "/admin/apps", nil, &out)
}

// ImportApps registers the apps of lines (JSON lines of ImportAppRequest,
// sent as they are, so errors name their lines) with their existing ids,
// all or none.
func (c *Client) ImportApps(ctx context.Context, lines []byte, replace bool) (ImportedApps, error) {
	var out ImportedApps
	return out, c.send(ctx, http.MethodPost, "/admin/apps/import?replace="+strconv.FormatBool(replace), importType, bytes.NewReader(lines), &out)
}

// UpdateApp changes an app's name and/or redirect URIs.
func (c *Client) UpdateApp(ctx context.Context, appID string, req UpdateAppRequest) (AppInfo, error) {
	var out AppInfo
	return out, c.do(ctx, http.MethodPost, "/admin/apps/"+url.PathEscape(appID), req, &out)
}

// RotateSecret replaces an app's client secret and returns the new one.
func (c *Client) RotateSecret(ctx context.Context, appID string) (RotatedSecret, error) {
	var out RotatedSecret
	return out, c.do(ctx, http.MethodPost, "/admin/apps/"+url.PathEscape(appID)+"/secret", nil, &out)
}

// SetRPSigningKey sets an app's World ID 4.0 RP signing key (hex); the
// empty key removes it.
func (c *Client) SetRPSigningKey(ctx context.Context, appID, key string) (AppInfo, error) {
	var out AppInfo
	path := "/admin/apps/" + url.PathEscape(appID) + "/rp-signing-key"
	if key == "" {
		return out, c.do(ctx, http.MethodDelete, path, nil, &out)
	}
	return out, c.do(ctx, http.MethodPut, path, RPSigningKeyRequest{Key: key}, &out)
}

// SetAppEnabled enables or disables an app.
func (c *Client) SetAppEnabled(ctx context.Context, appID string, enabled bool) (AppInfo, error) {
	var out AppInfo
	verb := map[bool]string{false: "/disable", true: "/enable"}[enabled]
	return out, c.do(ctx, http.MethodPost, "/admin/apps/"+url.PathEscape(appID)+verb, nil, &out)
}

// DeleteApp removes an app.
func (c *Client) DeleteApp(ctx context.Context, appID string) error {
	return c.do(ctx, http.MethodDelete, "/admin/apps/"+url.PathEscape(appID), nil, nil)
}

// Keys lists the OIDC signing keys.
func (c *Client) Keys(ctx context.Context) (KeyList, error) {
	var out KeyList
	return out, c.do(ctx, http.MethodGet, "/admin/keys", nil, &out)
}

// RevokeKey removes a signing key now.
func (c *Client) RevokeKey(ctx context.Context, kid string) error {
	return c.do(ctx, http.MethodPost, "/admin/keys/"+url.PathEscape(kid)+"/revoke", nil, nil)
}

// Backup streams a backup of the server to w (GET /admin/backup). The
// caller checks it with backup.Read: a failure on the server side shows as
// a truncated file.
func (c *Client) Backup(ctx context.Context, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.BaseURL, "/")+"/admin/backup", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	hc := *c.HTTP
	hc.Timeout = 0 // a large store streams for longer than one API call
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return errorOf(resp, raw)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// AddIdentity inserts an identity commitment, or a batch of them, into a
// tree.
func (c *Client) AddIdentity(ctx context.Context, req AddIdentityRequest) (AddedIdentity, error) {
	var out AddedIdentity
	return out, c.do(ctx, http.MethodPost, "/admin/identities", req, &out)
}

// AddRoot records a root of a tree kept elsewhere.
func (c *Client) AddRoot(ctx context.Context, req AddRootRequest) (AddRootRequest, error) {
	var out AddRootRequest
	return out, c.do(ctx, http.MethodPost, "/admin/roots", req, &out)
}

// SetAnchor stores a World ID 4.0 trust anchor.
func (c *Client) SetAnchor(ctx context.Context, req AnchorRequest) (AnchorRequest, error) {
	var out AnchorRequest
	return out, c.do(ctx, http.MethodPost, "/admin/anchors", req, &out)
}

// Anchors lists the stored trust anchors.
func (c *Client) Anchors(ctx context.Context) (AnchorList, error) {
	var out AnchorList
	return out, c.do(ctx, http.MethodGet, "/admin/anchors", nil, &out)
}

// SetActionLimit sets an action's max_verifications.
func (c *Client) SetActionLimit(ctx context.Context, req ActionLimitRequest) (ActionLimitRequest, error) {
	var out ActionLimitRequest
	return out, c.do(ctx, http.MethodPost, "/admin/actions", req, &out)
}

// RotateKeys schedules the next OIDC signing key.
func (c *Client) RotateKeys(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/admin/keys/rotate", nil, nil)
}

// ImportSignups stores signup records (at most 200 per call).
func (c *Client) ImportSignups(ctx context.Context, req SignupImport) error {
	return c.do(ctx, http.MethodPost, "/admin/signups", req, nil)
}

// AddOrbKey trusts an Orb public key for PCP signatures.
func (c *Client) AddOrbKey(ctx context.Context, req OrbKeyRequest) error {
	return c.do(ctx, http.MethodPost, "/admin/orbkeys", req, nil)
}

// SetRefresh turns credential refresh on or off.
func (c *Client) SetRefresh(ctx context.Context, enabled bool) error {
	return c.do(ctx, http.MethodPost, "/admin/refresh", RefreshSwitch{Enabled: enabled}, nil)
}

// do sends one request; a non-2xx answer becomes an *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if in == nil {
		return c.send(ctx, method, path, "", nil, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.send(ctx, method, path, "application/json", bytes.NewReader(b), out)
}

// send makes one call with a body of contentType (none if "") and decodes
// a JSON answer into out.
func (c *Client) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return errorOf(resp, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// errorOf turns a non-2xx answer into an *Error.
func errorOf(resp *http.Response, raw []byte) error {
	var e struct{ Error, Message string }
	if json.Unmarshal(raw, &e) != nil || e.Error == "" {
		return &Error{resp.StatusCode, "http_" + resp.Status, string(raw)}
	}
	return &Error{resp.StatusCode, e.Error, e.Message}
}

package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"worldid/record"
)

// Sector identifiers (OIDC Core §8.1; doc/interfaces.md §2.4.2). An app
// registers one (SigninSettings.SectorIdentifierURI) at creation or import;
// no update changes it, since that would change the app's subjects (only a
// replacing import sets another).
// Registration and every change of the app's redirect URIs fetch its
// document (Options.CheckSector) and require it to list every redirect URI.
// The first app of a sector (a host) proves for its own app_id; the apps
// that join the sector later prove for that app's (record.App.SectorAppID,
// ProofAppID), so the sector's apps share subjects. The rules that keep
// that safe are checkPlacement's and deletableFromSector's.

// CheckSector fetches the sector identifier document at uri and checks
// that it lists every one of redirectURIs (oidc.Provider's
// CheckSectorIdentifier); its error says what is wrong.
type CheckSector func(ctx context.Context, uri string, redirectURIs []string) error

// validateSectorURI: an https URL with a host, without userinfo or
// fragment (OIDC Registration §2).
func validateSectorURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || strings.Contains(s, "#") || len(s) > maxRedirectURI {
		return badRequest("sector_identifier_uri must be an https URL without userinfo or fragment, at most %d bytes", maxRedirectURI)
	}
	return nil
}

// redirectHosts counts the distinct hosts of the URIs that have one
// (a private-use scheme's URI has none).
func redirectHosts(uris []string) int {
	var hosts []string
	for _, s := range uris {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			if h := strings.ToLower(u.Hostname()); !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	return len(hosts)
}

// checkSectorDocument applies OIDC Core §8.1 to an app with these
// redirect URIs: a current-profile app whose redirect URIs span hosts
// must register a sector identifier (v1-contract apps keep today's rule:
// their subject never depended on the host), and a registered one's
// document must list every redirect URI.
func (a *api) checkSectorDocument(ctx context.Context, app record.App) error {
	if app.SectorIdentifierURI == "" {
		if app.Profile == record.ProfileCurrent && redirectHosts(app.RedirectURIs) > 1 {
			return badRequest("the redirect URIs of a current-profile app span several hosts: register a sector_identifier_uri listing them (OIDC Core §8.1)")
		}
		return nil
	}
	if a.CheckSector == nil {
		return badRequest("this server does not accept sector_identifier_uri")
	}
	if err := a.CheckSector(ctx, app.SectorIdentifierURI, app.RedirectURIs); err != nil {
		return badRequest("%v", err)
	}
	return nil
}

// joinSector sets app.SectorAppID when another of apps already is in the
// app's sector: the app then proves for that sector's app_id.
func joinSector(apps []record.App, app *record.App) {
	app.SectorAppID = ""
	host := app.SectorHost()
	if host == "" {
		return
	}
	for _, other := range apps {
		if other.ID != app.ID && other.SectorHost() == host {
			if id := other.ProofAppID(); id != app.ID {
				app.SectorAppID = id
			}
			return
		}
	}
}

// checkPlacement refuses to store app among others when its subjects
// could link apps outside one registered sector: the app whose app_id it
// proves for must be one of others, proving for its own id, in the same
// sector; no other app may keep proving for app's id unless app stays in
// their sector; and a sector's apps are all production or all staging.
func checkPlacement(others []record.App, app record.App) error {
	host := app.SectorHost()
	for _, other := range others {
		switch {
		case other.ID == app.SectorAppID && (other.SectorAppID != "" || other.SectorHost() != host):
			return &Error{http.StatusConflict, "conflict", fmt.Sprintf("app %s is not the first app of the sector %s", other.ID, host)}
		case other.SectorAppID == app.ID && other.SectorHost() != host:
			return sectorAppNeeded(other)
		case host != "" && other.SectorHost() == host && other.Staging != app.Staging:
			return badRequest("the apps of the sector %s must all be production or all staging", host)
		}
	}
	if app.SectorAppID != "" && !slices.ContainsFunc(others, func(o record.App) bool { return o.ID == app.SectorAppID }) {
		return &Error{http.StatusConflict, "conflict", fmt.Sprintf("app %s, whose subjects the sector %s shares, is not registered", app.SectorAppID, host)}
	}
	return nil
}

// sectorAppNeeded is the refusal to move or delete the app whose app_id
// member proves for.
func sectorAppNeeded(member record.App) error {
	return &Error{http.StatusConflict, "conflict", fmt.Sprintf(
		"app %s signs in with the subjects of app %s, which must stay registered in the sector %s; change or delete %s first",
		member.ID, member.SectorAppID, member.SectorHost(), member.ID)}
}

// placeInSector checks app's sector document, joins it to its sector
// among others (the other apps the store will hold with it) and checks the
// result.
func (a *api) placeInSector(ctx context.Context, others []record.App, app *record.App) error {
	if err := a.checkSectorDocument(ctx, *app); err != nil {
		return err
	}
	joinSector(others, app)
	return checkPlacement(others, *app)
}

// registerSector places a new app among the stored ones.
func (a *api) registerSector(ctx context.Context, app *record.App) error {
	stored, err := a.Store.Apps(ctx)
	if err != nil {
		return err
	}
	return a.placeInSector(ctx, stored, app)
}

// importSectors places each app of an import batch, in order, among the
// stored apps it does not replace and the batch's earlier apps.
func (a *api) importSectors(ctx context.Context, batch []record.App, replace bool) error {
	stored, err := a.Store.Apps(ctx)
	if err != nil {
		return err
	}
	others := slices.DeleteFunc(stored, func(s record.App) bool {
		return replace && slices.ContainsFunc(batch, func(b record.App) bool { return b.ID == s.ID })
	})
	for i := range batch {
		err := a.placeInSector(ctx, others, &batch[i])
		if e, ok := errors.AsType[*Error](err); ok {
			return &Error{e.Status, e.Code, "app " + batch[i].ID + ": " + e.Message}
		}
		if err != nil {
			return err
		}
		others = append(others, batch[i])
	}
	return nil
}

// deletableFromSector refuses to delete an app whose app_id other apps of
// its sector prove for.
func (a *api) deletableFromSector(ctx context.Context, id string) error {
	stored, err := a.Store.Apps(ctx)
	if err != nil {
		return err
	}
	for _, app := range stored {
		if app.SectorAppID == id {
			return sectorAppNeeded(app)
		}
	}
	return nil
}

// recheckSector checks the sector document of the stored app id against
// the redirect URIs it is about to get, and returns the app as checked.
func (a *api) recheckSector(ctx context.Context, id string, redirectURIs []string) (record.App, error) {
	stored, err := a.Store.Apps(ctx)
	if err != nil {
		return record.App{}, err
	}
	i := slices.IndexFunc(stored, func(s record.App) bool { return s.ID == id })
	if i < 0 {
		return record.App{}, &Error{http.StatusNotFound, "not_found", fmt.Sprintf("no app %q", id)}
	}
	app := stored[i]
	app.RedirectURIs = redirectURIs
	return app, a.checkSectorDocument(ctx, app)
}

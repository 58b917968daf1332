package oidc

import (
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxBody bounds every request body (doc/design.md §8).
const maxBody = 64 << 10

// methods maps an HTTP method to its handler; GET also serves HEAD.
type methods map[string]http.HandlerFunc

// routeFlags select how a route answers errors and whether it allows CORS.
type routeFlags int

const (
	apiRoute  routeFlags = 1 << iota // errors are JSON (errors.go)
	pageRoute                        // errors are HTML pages (page.go)
	corsRoute                        // Access-Control-Allow-Origin: * and preflight (doc/design.md §4)
)

// route registers path with the deprecation headers, the sunset switch,
// CORS and method dispatch common to every sign-in route.
func (p *Provider) route(mux *http.ServeMux, path string, flags routeFlags, m methods) {
	allow := p.allowed(m, flags)
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// RFC 9745 / RFC 8594 on every sign-in response (doc/design.md §4).
		h.Set("Deprecation", p.deprecation)
		h.Set("Sunset", p.sunsetValue)
		if flags&corsRoute != 0 {
			h.Set("Access-Control-Allow-Origin", "*")
		}
		if p.enforce && !p.now().Before(p.sunset) {
			p.fail(w, flags, errGone())
			return
		}
		if r.Method == http.MethodOptions && flags&corsRoute != 0 {
			preflight(w, allow)
			return
		}
		handler, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			handler, ok = m[http.MethodGet]
		}
		if !ok {
			p.fail(w, flags, errMethod(r.Method, allow))
			return
		}
		handler(w, r)
	})
}

// allowed is the Allow header value of a route.
func (p *Provider) allowed(m methods, flags routeFlags) string {
	var allow []string
	for method := range m {
		allow = append(allow, method)
		if method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	if flags&corsRoute != 0 {
		allow = append(allow, http.MethodOptions)
	}
	slices.Sort(allow)
	return strings.Join(allow, ", ")
}

// fail writes e in the route's error format.
func (p *Provider) fail(w http.ResponseWriter, flags routeFlags, e *apiError) {
	if flags&pageRoute != 0 {
		p.errorPage(w, e)
		return
	}
	p.writeError(w, e)
}

// preflight answers a CORS preflight request. Credentials are never allowed,
// so the wildcard origin is safe.
func preflight(w http.ResponseWriter, allow string) {
	h := w.Header()
	h.Set("Allow", allow)
	h.Set("Access-Control-Allow-Methods", allow)
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

// readForm reads an application/x-www-form-urlencoded body (the only content
// type of every POST here) under the body limit.
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *apiError) {
	if e := checkFormType(r.Header.Get("Content-Type")); e != nil {
		return nil, e
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return nil, errTooLarge()
		}
		return nil, errInvalid("", "the request body could not be read")
	}
	return parseQuery(string(body))
}

// checkFormType accepts application/x-www-form-urlencoded with at most a
// UTF-8 charset parameter.
func checkFormType(ct string) *apiError {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return errContentType()
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return errContentType()
		}
	}
	return nil
}

// parseQuery parses form-encoded parameters, keeping duplicates so that the
// caller can decide where a duplicate's error goes.
func parseQuery(raw string) (url.Values, *apiError) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errInvalid("", "the parameters are not valid form encoding")
	}
	return v, nil
}

// strictParams rejects any parameter given more than once (RFC 6749 §3.1,
// §3.2) and returns the single values. A parameter sent without a value is
// treated as omitted (RFC 6749 §3.1).
func strictParams(v url.Values) (map[string]string, *apiError) {
	out := make(map[string]string, len(v))
	for _, name := range slices.Sorted(maps.Keys(v)) {
		vals := v[name]
		if len(vals) > 1 {
			return nil, errDuplicate(name)
		}
		if vals[0] != "" {
			out[name] = vals[0]
		}
	}
	return out, nil
}

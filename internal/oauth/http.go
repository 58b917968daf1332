package oauth

import (
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"worldid/internal/httpapi"
)

// maxBody bounds every request body (doc/design.md §8).
const maxBody = 64 << 10

// Methods maps an HTTP method to its handler; GET also serves HEAD.
type Methods map[string]http.HandlerFunc

// RouteFlags select how a route answers errors and whether it allows CORS.
type RouteFlags int

const (
	APIRoute  RouteFlags = 1 << iota // errors are JSON (Responder.WriteError)
	PageRoute                        // errors are HTML pages (Responder.ErrorPage)
	CORSRoute                        // Access-Control-Allow-Origin: * and preflight (doc/design.md §4)
)

// Router registers the routes of Sign in with World ID, the OpenID
// Connect endpoints and the browser sign-in alike, with what every one of
// them carries: the deprecation headers, the sunset switch, CORS where
// asked and method dispatch.
type Router struct {
	Out         Responder
	Deprecation string      // Deprecation header value (RFC 9745)
	Sunset      string      // Sunset header value (RFC 8594)
	Gone        func() bool // true once every route answers 410 Gone
}

// Handle registers path on mux.
func (rt *Router) Handle(mux *http.ServeMux, path string, flags RouteFlags, m Methods) {
	allow := allowed(m, flags)
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// RFC 9745 / RFC 8594 on every sign-in response (doc/design.md §4).
		h.Set("Deprecation", rt.Deprecation)
		h.Set("Sunset", rt.Sunset)
		if flags&CORSRoute != 0 {
			h.Set("Access-Control-Allow-Origin", "*")
		}
		if rt.Gone() {
			rt.fail(w, flags, errGone())
			return
		}
		if r.Method == http.MethodOptions && flags&CORSRoute != 0 {
			preflight(w, allow)
			return
		}
		handler, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			handler, ok = m[http.MethodGet]
		}
		if !ok {
			rt.fail(w, flags, ErrMethod(r.Method, allow))
			return
		}
		handler(w, r)
	})
}

func errGone() *Error {
	return NewError(http.StatusGone, "gone", "invalid_request", "", "sign-in v1 has been shut down")
}

// allowed is the Allow header value of a route.
func allowed(m Methods, flags RouteFlags) string {
	var allow []string
	for method := range m {
		allow = append(allow, method)
		if method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	if flags&CORSRoute != 0 {
		allow = append(allow, http.MethodOptions)
	}
	slices.Sort(allow)
	return strings.Join(allow, ", ")
}

// fail writes e in the route's error format.
func (rt *Router) fail(w http.ResponseWriter, flags RouteFlags, e *Error) {
	if flags&PageRoute != 0 {
		rt.Out.ErrorPage(w, e)
		return
	}
	rt.Out.WriteError(w, e)
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

// ReadForm reads an application/x-www-form-urlencoded body (the only content
// type of every POST here) under the body limit.
func ReadForm(w http.ResponseWriter, r *http.Request) (url.Values, *Error) {
	if e := checkFormType(r.Header.Get("Content-Type")); e != nil {
		return nil, e
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return nil, ErrTooLarge()
		}
		return nil, ErrInvalid("", "the request body could not be read")
	}
	return ParseQuery(string(body))
}

// checkFormType accepts application/x-www-form-urlencoded with at most a
// UTF-8 charset parameter.
func checkFormType(ct string) *Error {
	params, ok := httpapi.HasMediaType(ct, "application/x-www-form-urlencoded")
	if !ok || !httpapi.CharsetUTF8(params) {
		return ErrContentType()
	}
	for k := range params {
		if k != "charset" {
			return ErrContentType()
		}
	}
	return nil
}

// ParseQuery parses form-encoded parameters, keeping duplicates so that the
// caller can decide where a duplicate's error goes.
func ParseQuery(raw string) (url.Values, *Error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, ErrInvalid("", "the parameters are not valid form encoding")
	}
	return v, nil
}

// StrictParams rejects any parameter given more than once (RFC 6749 §3.1,
// §3.2) and returns the single values. A parameter sent without a value is
// treated as omitted (RFC 6749 §3.1).
func StrictParams(v url.Values) (map[string]string, *Error) {
	out := make(map[string]string, len(v))
	for _, name := range slices.Sorted(maps.Keys(v)) {
		vals := v[name]
		if len(vals) > 1 {
			return nil, ErrDuplicate(name)
		}
		if vals[0] != "" {
			out[name] = vals[0]
		}
	}
	return out, nil
}

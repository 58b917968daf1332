package verify

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestObserve: every request is reported once, with its protocol and its
// outcome.
func TestObserve(t *testing.T) {
	e := newEnv(t)
	var seen []string
	h, err := New(Options{Store: e.store, Checker: e.checker, Now: func() time.Time { return e.now },
		Observe: func(protocol, outcome string) { seen = append(seen, protocol+" "+outcome) }})
	if err != nil {
		t.Fatal(err)
	}
	e.mux = http.NewServeMux()
	h.Register(e.mux)
	wantSuccess(t, e.post(rpPath, body(items(validItem))))
	e.do(http.MethodPost, rpPath, "text/plain", body(items(validItem)))
	e.post(rpPath, `{"protocol_version":"3.0"}`)
	want := []string{"3.0 success", "unparsed " + codeContentType, "unparsed " + codeValidation}
	if !slices.Equal(seen, want) {
		t.Errorf("observed %q, want %q", seen, want)
	}
}

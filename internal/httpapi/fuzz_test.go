package httpapi

import (
	"strings"
	"testing"
)

// FuzzHasMediaType: a header accepted as application/json starts with that
// media type (after optional whitespace), and a UTF-8 charset verdict is
// never given for a charset parameter naming anything else.
func FuzzHasMediaType(f *testing.F) {
	for _, s := range []string{"application/json", "application/json; charset=utf-8", "APPLICATION/JSON;charset=\"utf-8\"", "text/plain", "application/json; charset", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		params, ok := HasMediaType(ct, "application/json")
		if !ok {
			return
		}
		if !strings.HasPrefix(strings.ToLower(strings.TrimLeft(ct, " \t")), "application/json") {
			t.Fatalf("accepted %q", ct)
		}
		if cs, has := params["charset"]; has && CharsetUTF8(params) != strings.EqualFold(cs, "utf-8") {
			t.Fatalf("charset %q of %q", cs, ct)
		}
	})
}

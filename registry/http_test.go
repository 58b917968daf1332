package registry

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"worldid/field"
	"worldid/store/jsontest"
)

func TestNewHandlerRefusesMissingOptions(t *testing.T) {
	reg := openTest(t, jsontest.Open(t), mustKey(t, 16), &clock{time.Unix(1_700_000_000, 0)}, false)
	for name, o := range map[string]HandlerOptions{
		"Registry":       {ProvingKeyFile: "pk"},
		"ProvingKeyFile": {Registry: reg},
	} {
		if h, err := NewHandler(o); err == nil || h != nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, %v", name, h, err)
		}
	}
}

// Every JSON answer of the wallet-facing endpoints is per request and
// carries Cache-Control: no-store, as every other interface's does.
func TestInclusionProofAnswersAreNotStored(t *testing.T) {
	reg := openTest(t, jsontest.Open(t), mustKey(t, 16), &clock{time.Unix(1_700_000_000, 0)}, false)
	c := elements(1, 1)[0]
	if _, _, err := reg.AddIdentities(t.Context(), "orb", "production", elements(1, 1)); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(HandlerOptions{Registry: reg, ProvingKeyFile: filepath.Join(t.TempDir(), "absent")})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	for body, status := range map[string]int{
		`{"identity_commitment":"` + field.Format(&c) + `"}`: http.StatusOK,
		`{"identity_commitment":"0x2a"}`:                     http.StatusNotFound,
		`{}`:                                                 http.StatusBadRequest,
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inclusion-proof", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != status || rec.Header().Get("Cache-Control") != "no-store" || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %q, want %d no-store JSON", body, rec.Code, rec.Header().Get("Cache-Control"), rec.Header().Get("Content-Type"), status)
		}
	}
}

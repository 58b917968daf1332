package oauth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorPagePlainWords: the error page leads with words a person
// understands; the code is only small print for support.
func TestErrorPagePlainWords(t *testing.T) {
	out := Responder{Log: slog.New(slog.DiscardHandler), Rand: bytes.NewReader(make([]byte, 64))}
	for _, tc := range []struct {
		e                 *Error
		headline, message string
	}{
		{NewError(http.StatusForbidden, "other_browser", "access_denied", "", "this sign-in was started in another browser; only that browser can finish it"),
			"This sign-in belongs to another browser", "this sign-in was started in another browser; only that browser can finish it."},
		{NewError(http.StatusInternalServerError, "internal", "server_error", "", "internal error"), "Something went wrong on our side", "internal error."},
		{ErrInvalid("nonce", "nonce must be 1 to 512 visible ASCII characters"), "This sign-in can&#39;t continue", "nonce must be 1 to 512 visible ASCII characters."},
	} {
		w := httptest.NewRecorder()
		out.ErrorPage(w, tc.e)
		body := w.Body.String()
		if w.Code != tc.e.Status || !strings.Contains(body, "<h1>"+tc.headline+"</h1>") || !strings.Contains(body, `<p id="error-detail">`+tc.message+`</p>`) ||
			!strings.Contains(body, `<div class="fine"><p><code>`+tc.e.Code+`</code>`) || strings.Count(body, "<code>"+tc.e.Code+"</code>") != 1 {
			t.Errorf("%s: %d\n%s", tc.e.Code, w.Code, body)
		}
	}
}

// ctxHandler records the context of every log record.
type ctxHandler struct {
	slog.Handler
	got *[]context.Context
}

func (ctxHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	*h.got = append(*h.got, ctx)
	return nil
}

// TestInternalLogsWithRequestContext: the failure line is logged with the
// request's context, where the request id lives (internal/leaf/metrics).
func TestInternalLogsWithRequestContext(t *testing.T) {
	type key struct{}
	var got []context.Context
	o := Responder{Log: slog.New(ctxHandler{slog.DiscardHandler, &got}), Prefix: "test: "}
	ctx := context.WithValue(t.Context(), key{}, "req-1")
	if e := o.Internal(ctx, "store", errors.New("disk on fire")); e.Status != http.StatusInternalServerError {
		t.Fatalf("status %d", e.Status)
	}
	if len(got) != 1 || got[0].Value(key{}) != "req-1" {
		t.Fatalf("logged with %v", got)
	}
}

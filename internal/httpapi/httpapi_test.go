package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"worldid/record"
)

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteJSON(rec, http.StatusTeapot, map[string]string{"a": "<b>"})
	if rec.Code != http.StatusTeapot {
		t.Errorf("status %d", rec.Code)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got, want := rec.Body.String(), `{"a":"\u003cb\u003e"}`+"\n"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
}

func TestClientGone(t *testing.T) {
	for err, want := range map[error]bool{
		context.Canceled:                      true,
		fmt.Errorf("x: %w", context.Canceled): true,
		// A backend's deadline cancels its own context; that is unavailability.
		fmt.Errorf("store: %w: timeout (%w)", record.ErrUnavailable, context.Canceled): false,
		context.DeadlineExceeded: false,
		record.ErrUnavailable:    false,
		errors.New("other"):      false,
	} {
		if got := ClientGone(err); got != want {
			t.Errorf("ClientGone(%v) = %v", err, got)
		}
	}
}

func TestFailureStatus(t *testing.T) {
	for _, c := range []struct {
		err     error
		status  int
		logLine string
	}{
		{fmt.Errorf("commit: %w", context.Canceled), StatusClientClosed, "level=DEBUG msg=\"x: client went away\""},
		{fmt.Errorf("commit: %w", record.ErrUnavailable), http.StatusServiceUnavailable, "level=ERROR msg=\"x: storage unavailable\" err=\"commit: record: storage unavailable\""},
		{fmt.Errorf("store: %w: timeout (%w)", record.ErrUnavailable, context.Canceled), http.StatusServiceUnavailable, "level=ERROR msg=\"x: storage unavailable\""},
		{errors.New("disk on fire"), http.StatusInternalServerError, "level=ERROR msg=\"x: internal error\" err=\"disk on fire\""},
	} {
		var buf bytes.Buffer
		log := slog.New(contextTag{slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})})
		ctx := context.WithValue(t.Context(), tagKey{}, "req-7")
		if got := FailureStatus(ctx, log, "x", c.err); got != c.status {
			t.Errorf("FailureStatus(%v) = %d, want %d", c.err, got, c.status)
		}
		if !strings.Contains(buf.String(), c.logLine) {
			t.Errorf("FailureStatus(%v) logged %q, want %q", c.err, buf.String(), c.logLine)
		}
		if !strings.Contains(buf.String(), "tag=req-7") {
			t.Errorf("FailureStatus(%v) logged %q without the request's context", c.err, buf.String())
		}
	}
}

// contextTag logs the tagKey value of a record's context, as
// internal/leaf/metrics.LogHandler logs the request id.
type contextTag struct{ slog.Handler }

type tagKey struct{}

func (h contextTag) Handle(ctx context.Context, r slog.Record) error {
	if tag, ok := ctx.Value(tagKey{}).(string); ok {
		r.AddAttrs(slog.String("tag", tag))
	}
	return h.Handler.Handle(ctx, r)
}

func TestAllowMethod(t *testing.T) {
	for method, ok := range map[string]bool{"GET": true, "POST": true, "PUT": false, "get": false} {
		rec := httptest.NewRecorder()
		if got := AllowMethod(rec, httptest.NewRequest(method, "/", nil), http.MethodGet, http.MethodPost); got != ok {
			t.Errorf("AllowMethod(%s) = %v", method, got)
		}
		wantAllow := ""
		if !ok {
			wantAllow = "GET, POST"
		}
		if got := rec.Header().Get("Allow"); got != wantAllow {
			t.Errorf("AllowMethod(%s): Allow %q, want %q", method, got, wantAllow)
		}
	}
}

func TestHasMediaType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                       true,
		"Application/JSON":                       true,
		"application/json; charset=utf-8":        true,
		"application/json;charset=UTF-8":         true,
		"application/json; charset=latin1":       true, // the charset is CharsetUTF8's question
		"":                                       false,
		"application/jsonx":                      false,
		"application/json-seq":                   false,
		"text/json":                              false,
		"application/json; charset":              false, // a parameter without a value
		"application/json; charset=utf-8; a=\"b": false,
		"application/json, text/plain":           false,
	} {
		if _, got := HasMediaType(ct, "application/json"); got != want {
			t.Errorf("HasMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestCharsetUTF8(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                    true,
		"application/json; charset=utf-8":     true,
		"application/json; CHARSET=\"UTF-8\"": true,
		"application/json; charset=latin1":    false,
		"application/json; charset=utf8":      false,
		"application/json; v=1":               true,
	} {
		params, ok := HasMediaType(ct, "application/json")
		if !ok {
			t.Fatalf("HasMediaType(%q) = false", ct)
		}
		if got := CharsetUTF8(params); got != want {
			t.Errorf("CharsetUTF8(%q) = %v, want %v", ct, got, want)
		}
	}
}

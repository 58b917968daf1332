package cli

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"worldid/internal/server"
)

func parseConfig(t *testing.T, args []string, env map[string]string) (server.Config, error) {
	t.Helper()
	var c server.Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.RegisterFlags(fs)
	if err := ParseFlags(fs, args, func(k string) string { return env[k] }); err != nil {
		return c, err
	}
	if err := c.Validate(); err != nil {
		return c, UsageError{Err: err}
	}
	return c, nil
}

func TestConfigDefaultsAreValid(t *testing.T) {
	c, err := parseConfig(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.AdminAddr != "127.0.0.1:8081" || c.DataDir != "./worldid-data" || !c.RefreshLimits {
		t.Fatalf("defaults %+v", c)
	}
}

func TestConfigEnvironmentAndPrecedence(t *testing.T) {
	c, err := parseConfig(t, []string{"-addr", "127.0.0.1:9000"}, map[string]string{"WORLDID_ADDR": "127.0.0.1:7000", "WORLDID_ADMIN_ADDR": "127.0.0.1:7001", "WORLDID_REFRESH_RATE_LIMITS": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" || c.AdminAddr != "127.0.0.1:7001" || c.RefreshLimits {
		t.Fatalf("flag must win over env, env over default: %+v", c)
	}
}

// TestConfigErrorsNameTheSetting: every invalid value is a usage error
// (exit status 2) naming its flag.
func TestConfigErrorsNameTheSetting(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		setting string
	}{
		{[]string{"-addr", "nonsense"}, nil, "addr:"},
		{[]string{"-admin-addr", "127.0.0.1"}, nil, "admin-addr:"},
		{[]string{"-admin-addr", "127.0.0.1:8080"}, nil, "admin-addr: must differ"},
		{[]string{"-base-url", "ftp://x"}, nil, "base-url:"},
		{[]string{"-base-url", "https://id.example/"}, nil, "base-url:"},
		{[]string{"-verify-url", "https://id.example?x=1"}, nil, "verify-url:"},
		{[]string{"-log-level", "loud"}, nil, "log-level:"},
		{[]string{"-signin-sunset", "31/01/2026"}, nil, "signin-sunset:"},
		{[]string{"-key-rotation", "1h"}, nil, "key-rotation:"},
		{[]string{"-email-domain", "192.0.2.1"}, nil, "email-domain:"},
		{[]string{"-email-domain", "a..example"}, nil, "email-domain:"},
		{[]string{"-store", "mysql://x"}, nil, "store:"},
		{[]string{"-trusted-proxies", "10.0.0.0/40"}, nil, "trusted-proxies:"},
		{[]string{"-tls-cert", "a.pem"}, nil, "tls-cert, tls-key: give both"},
		{[]string{"-tls-cert", "missing.pem", "-tls-key", "missing.key"}, nil, "tls-cert, tls-key:"},
		{[]string{"-data", ""}, nil, "data:"},
		{[]string{"-refresh-proof-checks", "-1"}, nil, "refresh-proof-checks:"},
		{[]string{"-crypto-path", "ifma"}, nil, "crypto-path:"},
		{nil, map[string]string{"WORLDID_CRYPTO_PATH": "fast"}, "crypto-path:"},
		{nil, map[string]string{"WORLDID_KEY_ROTATION": "soon"}, "WORLDID_KEY_ROTATION"},
		{[]string{"-no-such-flag"}, nil, "no-such-flag"},
		{[]string{"extra"}, nil, "unexpected arguments"},
	} {
		_, err := parseConfig(t, tc.args, tc.env)
		if err == nil || !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), tc.setting) {
			t.Errorf("%v %v: %v, want a usage error naming %q", tc.args, tc.env, err, tc.setting)
		}
	}
}

func TestReadSignupLinesIsStrict(t *testing.T) {
	const rec = `{"id_commitment":"0x01","signup_id":"a","verified_at":"2024-06-10T15:00:00Z"}`
	for name, content := range map[string]string{
		"two values on a line": rec + rec + "\n",
		"trailing garbage":     rec + " garbage\n",
		"unknown member":       `{"id_commitment":"0x01","signup_id":"a","verified_at":"2024-06-10T15:00:00Z","x":1}` + "\n",
		"case-folded member":   strings.Replace(rec, `"signup_id"`, `"Signup_ID"`, 1) + "\n",
		"repeated member":      strings.Replace(rec, `"signup_id":"a"`, `"signup_id":"a","signup_id":"b"`, 1) + "\n",
		"bad UTF-8":            strings.Replace(rec, `"a"`, "\"a\xff\"", 1) + "\n",
		"no records":           "\n\n",
	} {
		path := filepath.Join(t.TempDir(), "signups.jsonl")
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := readSignupLines(path); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	path := filepath.Join(t.TempDir(), "signups.jsonl")
	os.WriteFile(path, []byte(rec+"\n\n"+rec+"\n"), 0o600)
	if got, err := readSignupLines(path); err != nil || len(got) != 2 {
		t.Fatalf("valid file: %v, %d records", err, len(got))
	}
}

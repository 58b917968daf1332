package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func parseConfig(t *testing.T, args []string, env map[string]string) (Config, error) {
	t.Helper()
	var c Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.configFlags(fs)
	if err := parseFlags(fs, args, func(k string) string { return env[k] }); err != nil {
		return c, err
	}
	return c, c.Validate()
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
		{[]string{"-store", "mysql://x"}, nil, "store:"},
		{[]string{"-trusted-proxies", "10.0.0.0/40"}, nil, "trusted-proxies:"},
		{[]string{"-tls-cert", "a.pem"}, nil, "tls-cert, tls-key: give both"},
		{[]string{"-tls-cert", "missing.pem", "-tls-key", "missing.key"}, nil, "tls-cert, tls-key:"},
		{[]string{"-data", ""}, nil, "data:"},
		{nil, map[string]string{"WORLDID_KEY_ROTATION": "soon"}, "WORLDID_KEY_ROTATION"},
		{[]string{"-no-such-flag"}, nil, "no-such-flag"},
		{[]string{"extra"}, nil, "unexpected arguments"},
	} {
		_, err := parseConfig(t, tc.args, tc.env)
		if err == nil || !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), tc.setting) {
			t.Errorf("%v %v: %v, want a usage error naming %q", tc.args, tc.env, err, tc.setting)
		}
	}
}

// selfSignedCert writes a certificate for 127.0.0.1 and its key.
func selfSignedCert(t testing.TB) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "worldid test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return certFile, keyFile
}

// TestTLSListener runs the binary with -tls-cert/-tls-key: the public
// listener speaks HTTPS and the issuer URL says so.
func TestTLSListener(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	cert, key := selfSignedCert(t)
	p := startProc(t, t.TempDir(), "-tls-cert", cert, "-tls-key", key)
	if !strings.HasPrefix(p.public, "https://") {
		t.Fatalf("public URL %s", p.public)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(p.public + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct{ Issuer string }
	json.NewDecoder(resp.Body).Decode(&doc)
	if doc.Issuer != p.public || resp.TLS == nil {
		t.Fatalf("issuer %q over TLS %v", doc.Issuer, resp.TLS != nil)
	}
	// Go's TLS server answers a plain HTTP request with 400.
	if plain, err := http.Get("http" + strings.TrimPrefix(p.public, "https") + "/healthz"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == http.StatusOK {
			t.Error("plain HTTP served on the TLS listener")
		}
	}
}

func TestReadSignupLinesIsStrict(t *testing.T) {
	const rec = `{"id_commitment":"0x01","signup_id":"a","verified_at":"2024-06-10T15:00:00Z"}`
	for name, content := range map[string]string{
		"two values on a line": rec + rec + "\n",
		"trailing garbage":     rec + " garbage\n",
		"unknown member":       `{"id_commitment":"0x01","signup_id":"a","verified_at":"2024-06-10T15:00:00Z","x":1}` + "\n",
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

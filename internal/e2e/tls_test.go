package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
	// Terminating TLS itself, the server pins HTTPS (RFC 6797).
	if hsts := resp.Header.Get("Strict-Transport-Security"); hsts != "max-age=31536000" {
		t.Errorf("Strict-Transport-Security %q", hsts)
	}
	// Go's TLS server answers a plain HTTP request with 400.
	if plain, err := http.Get("http" + strings.TrimPrefix(p.public, "https") + "/healthz"); err == nil {
		plain.Body.Close()
		if plain.StatusCode == http.StatusOK {
			t.Error("plain HTTP served on the TLS listener")
		}
	}
}

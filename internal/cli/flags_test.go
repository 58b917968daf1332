package cli

import (
	"flag"
	"io"
	"testing"
)

// TestServerURL: the CLI's default listener URLs follow the server's own
// environment settings.
func TestServerURL(t *testing.T) {
	const fallback = "http://127.0.0.1:8081"
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, fallback},
		{map[string]string{"A": "127.0.0.1:9091"}, "http://127.0.0.1:9091"},
		{map[string]string{"A": ":9091"}, "http://127.0.0.1:9091"},
		{map[string]string{"A": "0.0.0.0:9091"}, "http://127.0.0.1:9091"},
		{map[string]string{"A": "[::]:9091"}, "http://127.0.0.1:9091"},
		{map[string]string{"A": "[::1]:9091"}, "http://[::1]:9091"},
		{map[string]string{"A": "10.0.0.5:9091"}, "http://10.0.0.5:9091"},
		{map[string]string{"A": "no-port"}, fallback},
		{map[string]string{"U": "https://id.example.com", "A": "127.0.0.1:9091"}, "https://id.example.com"},
	} {
		if got := serverURL(func(k string) string { return c.env[k] }, "U", "A", fallback); got != c.want {
			t.Errorf("%v: %s, want %s", c.env, got, c.want)
		}
	}
}

// TestCLIDefaultsFollowServerEnv: with WORLDID_ADMIN_ADDR and WORLDID_ADDR
// set as for `worldid serve`, the admin commands and the wallet talk to
// those listeners without -admin-url or -server.
func TestCLIDefaultsFollowServerEnv(t *testing.T) {
	t.Setenv("WORLDID_ADMIN_ADDR", "127.0.0.1:9091")
	t.Setenv("WORLDID_ADDR", "127.0.0.1:9090")
	var af AdminFlags
	var wf walletFlags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	af.Register(fs)
	wf.register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if af.URL != "http://127.0.0.1:9091" || wf.server != "http://127.0.0.1:9090" {
		t.Errorf("admin URL %s, server %s", af.URL, wf.server)
	}
}

package server

import (
	"bufio"
	"strings"
	"testing"
)

// TestScanListeners reads what printListeners prints, after the first
// start's demo-app lines, with and without a separate base URL.
func TestScanListeners(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:41001", "https://id.example.com"} {
		var out strings.Builder
		out.WriteString("worldid: demo app created (first start)\n  client_id     app_x\n")
		printListeners(&out, "http://127.0.0.1:41001", base, "http://127.0.0.1:41002", "/data/admin.token")
		out.WriteString("later output\n")
		var seen []string
		public, admin, err := ScanListeners(bufio.NewScanner(strings.NewReader(out.String())), func(l string) { seen = append(seen, l) })
		if err != nil || public != "http://127.0.0.1:41001" || admin != "http://127.0.0.1:41002" {
			t.Errorf("base %s: %q %q %v", base, public, admin, err)
		}
		if last := seen[len(seen)-1]; !strings.Contains(last, "admin listener") {
			t.Errorf("read past the listener lines to %q", last)
		}
	}
	if _, _, err := ScanListeners(bufio.NewScanner(strings.NewReader("worldid: public listener  http://x\n")), nil); err == nil {
		t.Error("output without an admin listener line accepted")
	}
}

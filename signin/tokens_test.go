package signin

import (
	"strings"
	"testing"
)

func TestMatchCode(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		id := make([]byte, requestIDBytes)
		id[0], id[1] = byte(i), byte(i>>8)
		c := matchCode(id)
		if len(c) != 5 || strings.Trim(c, matchAlphabet) != "" {
			t.Fatalf("match code %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 195 {
		t.Fatalf("%d distinct codes of 200", len(seen))
	}
}

package bench

import "testing"

// TestAbuseSources: junk and legitimate refreshes dial from disjoint
// loopback blocks, and only when the server is on loopback.
func TestAbuseSources(t *testing.T) {
	for base, want := range map[string]bool{"http://127.0.0.1:8080": true, "http://127.9.9.9": true, "http://[::1]:80": false, "https://id.example": false, "%": false} {
		if got := loopbackHost(base); got != want {
			t.Errorf("loopbackHost(%q) = %v", base, got)
		}
	}
	if sourceAddr(false, 2, 7) != nil {
		t.Error("a source address off loopback")
	}
	seen := map[string]int{}
	for block, n := range map[int]int{2: 2000, 40: 2000, 200: 2000} {
		for i := range n {
			a := sourceAddr(true, block, i).String()
			if b, dup := seen[a]; dup && b != block {
				t.Fatalf("%s used by blocks %d and %d", a, b, block)
			}
			seen[a] = block
		}
	}
	if len(seen) != 3*2000 {
		t.Errorf("%d distinct sources, want %d", len(seen), 3*2000)
	}
}

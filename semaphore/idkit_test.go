package semaphore

import (
	"strings"
	"testing"

	"worldid/field"
	"worldid/internal/vectors"
)

// TestExternalNullifierMatchesIDKit: the external nullifier of an app id
// and action, for app_ and app_staging_ ids alike (imported apps keep the
// developer portal's ids), is what IDKit's generateExternalNullifier
// computes (testdata/vectors/idkit.json).
func TestExternalNullifierMatchesIDKit(t *testing.T) {
	var v struct {
		ExternalNullifier map[string]string `json:"external_nullifier"`
	}
	vectors.Load(t, "idkit.json", &v)
	n := vectors.NewCounter(t, "idkit.json")
	for key, want := range v.ExternalNullifier {
		appID, action, ok := strings.Cut(key, "|")
		if !ok {
			t.Fatalf("vector key %q has no |", key)
		}
		got := ExternalNullifier(appID, action)
		if s := field.Format(&got); s != want {
			t.Errorf("ExternalNullifier(%q, %q) = %s, IDKit %s", appID, action, s, want)
		}
		n.Inc()
	}
}

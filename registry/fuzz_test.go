package registry

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"worldid/field"
	"worldid/internal/vectors"
	"worldid/semaphore"
)

// FuzzParseInclusionRequest: the inclusion-proof request parser never
// panics, and what it accepts is a JSON object of at most 4 KiB (exact
// member names, no duplicates) whose identity_commitment parses to the
// returned element (doc/crypto.md §a IDCommitment). Seeds: the id_commitment vectors of field_element.json.
func FuzzParseInclusionRequest(f *testing.F) {
	var file struct {
		IDCommitment []struct {
			Input string `json:"input"`
		} `json:"id_commitment"`
	}
	vectors.Load(f, "field_element.json", &file)
	count := vectors.NewCounter(f, "field_element.json")
	for _, v := range file.IDCommitment {
		body, _ := json.Marshal(InclusionProofRequest{IdentityCommitment: v.Input, Identifier: "orb", Environment: "production"})
		f.Add("application/json", body)
		count.Inc()
	}
	f.Add("application/json; charset=utf-8", []byte(`{"identity_commitment":"0x2a","identity_commitment":"0x2b"}`))
	f.Add("text/plain", []byte(`{"identity_commitment":"42"}`))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inclusion-proof", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		identifier, env, c, err := parseInclusionRequest(httptest.NewRecorder(), req)
		if err != nil {
			return
		}
		var got InclusionProofRequest
		if len(body) > maxInclusionBody || json.Unmarshal(body, &got) != nil {
			t.Fatalf("accepted a body that is not one JSON object of at most %d bytes: %q", maxInclusionBody, body)
		}
		if want, err := field.ParseIDCommitment(got.IdentityCommitment); err != nil || want != c {
			t.Fatalf("commitment %q parsed to %s", got.IdentityCommitment, c.String())
		}
		if identifier != cmp.Or(got.Identifier, "orb") || env != cmp.Or(got.Environment, "production") {
			t.Fatalf("tree %s/%s for %q", identifier, env, body)
		}
	})
}

// TestParseInclusionRequestRejectsAmbiguousBodies: bodies that
// encoding/json alone would read one way and another parser another.
func TestParseInclusionRequestRejectsAmbiguousBodies(t *testing.T) {
	for _, body := range []string{
		`{"identity_commitment":"0x2a","identity_commitment":"0x2b"}`,
		`{"Identity_Commitment":"0x2a"}`,
		`{"identity_commitment":"0x2a","ENVIRONMENT":"staging"}`,
		`{"identity_commitment":"0x2a"} {}`,
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/inclusion-proof", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		if _, _, _, err := parseInclusionRequest(httptest.NewRecorder(), req); err == nil {
			t.Errorf("accepted %s", body)
		}
	}
}

// FuzzDecodeCheckpoint: decodeCheckpoint never panics, and what it accepts
// encodes back to the same bytes. Seeds: the checkpoints of trees of 1 and
// 5 leaves.
func FuzzDecodeCheckpoint(f *testing.F) {
	for _, n := range []int{1, 5} {
		f.Add(checkpointOfFuzz(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckpoint(b)
		if err != nil {
			return
		}
		if !bytes.Equal(c.encode(), b) {
			t.Fatal("accepted bytes do not encode back to themselves")
		}
	})
}

// checkpointOfFuzz is the checkpoint of a tree of n leaves with its root.
func checkpointOfFuzz(f *testing.F, n int) []byte {
	tree, err := semaphore.BuildTree(TreeDepth, elements(1, n))
	if err != nil {
		f.Fatal(err)
	}
	encoded, _ := tree.Snapshot().MarshalBinary()
	return checkpoint{name: "orb/production", roots: []semaphore.RootEntry{{Root: tree.Root(), At: time.Unix(1_800_000_000, 0).UTC()}}, tree: encoded}.encode()
}

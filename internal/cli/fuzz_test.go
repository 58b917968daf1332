package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"worldid/internal/vectors"
	"worldid/record"
)

// FuzzReadSignupLines: readSignupLines never panics on any file content;
// what it accepts is one record per non-blank line, and the records
// written back as JSON lines read to the same records. Seeds: lines made
// from the id_commitment vectors of field_element.json and the signup_id
// fields of pcp_v2_3.json, with blank lines, an unknown member, a CRLF
// file and a malformed time.
func FuzzReadSignupLines(f *testing.F) {
	var fields struct {
		IDCommitment []struct {
			Input string `json:"input"`
		} `json:"id_commitment"`
	}
	vectors.Load(f, "field_element.json", &fields)
	var pcp struct {
		Vectors []struct {
			Form map[string]string `json:"form"`
		} `json:"vectors"`
	}
	vectors.Load(f, "pcp_v2_3.json", &pcp)
	count := vectors.NewCounter(f, "field_element.json")
	signupID := "signup-1"
	var all bytes.Buffer
	for i, v := range fields.IDCommitment {
		if i < len(pcp.Vectors) && pcp.Vectors[i].Form["signup_id"] != "" {
			signupID = pcp.Vectors[i].Form["signup_id"]
		}
		line, _ := json.Marshal(map[string]string{"id_commitment": v.Input, "signup_id": signupID, "verified_at": "2024-06-10T15:00:00Z"})
		f.Add(line)
		all.Write(line)
		all.WriteString("\n\n")
		count.Inc()
	}
	f.Add(all.Bytes())
	f.Add(bytes.ReplaceAll(all.Bytes(), []byte("\n"), []byte("\r\n")))
	f.Add([]byte(`{"id_commitment":"0x2a","signup_id":"s","verified_at":"2024-06-10T15:00:00Z","extra":1}`))
	f.Add([]byte(`{"id_commitment":"0x2a","signup_id":"s","verified_at":"2024-06-10 15:00"}`))
	f.Add([]byte("\n \t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "signups.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readSignupLines(path)
		if err != nil {
			return
		}
		if n := nonBlankLines(data); len(got) != n {
			t.Fatalf("%d records from %d non-blank lines", len(got), n)
		}
		var back bytes.Buffer
		for _, s := range got {
			line, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("accepted record %+v does not marshal: %v", s, err)
			}
			back.Write(append(line, '\n'))
		}
		again := filepath.Join(dir, "again.jsonl")
		if err := os.WriteFile(again, back.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		reread, err := readSignupLines(again)
		if err != nil || len(reread) != len(got) {
			t.Fatalf("written-back records do not read back: %v", err)
		}
		for i := range got {
			if !sameSignup(got[i], reread[i]) {
				t.Fatalf("record %d: %+v read back as %+v", i, got[i], reread[i])
			}
		}
	})
}

// nonBlankLines counts the lines bufio.ScanLines yields that are not
// only white space.
func nonBlankLines(data []byte) int {
	n := 0
	for line := range bytes.Lines(data) {
		if len(bytes.TrimSpace(line)) != 0 {
			n++
		}
	}
	return n
}

func sameSignup(a, b record.Signup) bool {
	return a.IDCommitment == b.IDCommitment && a.SignupID == b.SignupID && a.VerifiedAt.Equal(b.VerifiedAt) &&
		a.VerifiedAt.Format(time.RFC3339Nano) == b.VerifiedAt.Format(time.RFC3339Nano)
}

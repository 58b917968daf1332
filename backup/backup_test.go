package backup

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"worldid/record"
)

func sample(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "json", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		table string
		row   any
	}{
		{TableApps, record.App{ID: "app_1", RPID: "rp_1", RedirectURIs: []string{}}},
		{TableNullifiers, Nullifier{RPID: "rp_1", Environment: "production", Action: "a", Nullifier: "0x1", Count: 1}},
		{TableLeaves, Leaf{Tree: "orb/production", Leaf: record.Leaf{Commitment: "0x2"}}},
		{TableFiles, File{Name: "issuer-eddsa.seed", Content: []byte("secret\n")}},
	} {
		if err := w.Row(r.table, r.row); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	b := sample(t)
	var tables []string
	hdr, sum, err := Read(bytes.NewReader(b), func(table string, row any) error {
		tables = append(tables, table)
		if f, ok := row.(File); ok && string(f.Content) != "secret\n" {
			t.Errorf("file content %q", f.Content)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Source != "json" || strings.Join(tables, ",") != "apps,nullifiers,leaves,files" || sum.Counts[TableApps] != 1 {
		t.Fatalf("header %+v, tables %v, summary %+v", hdr, tables, sum)
	}
}

// Every damaged file is refused with an error naming the problem.
func TestDamagedBackups(t *testing.T) {
	b := sample(t)
	lines := strings.SplitAfter(string(b), "\n")
	trailer := lines[len(lines)-2]
	for name, c := range map[string]struct {
		data, want string
	}{
		"empty":               {"", "empty"},
		"truncated mid-line":  {string(b[:len(b)-10]), "truncated"},
		"no trailer":          {strings.Join(lines[:len(lines)-2], ""), "truncated"},
		"row dropped":         {lines[0] + strings.Join(lines[2:], ""), "checksum"},
		"row altered":         {strings.Replace(string(b), `"rp_1","name"`, `"rp_2","name"`, 1), "checksum"},
		"data after trailer":  {string(b) + lines[1], "after the trailer"},
		"not a backup":        {"{\"format\":\"worldid-store/1\"}\n", "header"},
		"unknown table":       {lines[0] + `{"t":"passwords","r":{}}` + "\n" + trailer, "unknown"},
		"out of order":        {lines[0] + lines[3] + lines[1] + trailer, "out-of-order"},
		"unknown member":      {lines[0] + strings.Replace(lines[1], `"rp_id"`, `"x":1,"rp_id"`, 1) + strings.Join(lines[2:], ""), "unknown member"},
		"case-folded member":  {lines[0] + strings.Replace(lines[1], `"rp_id"`, `"RP_ID"`, 1) + strings.Join(lines[2:], ""), "unknown member"},
		"duplicate member":    {lines[0] + strings.Replace(lines[1], `"rp_id":"rp_1"`, `"rp_id":"rp_1","rp_id":"rp_2"`, 1) + strings.Join(lines[2:], ""), "duplicate member"},
		"bad UTF-8":           {lines[0] + strings.Replace(lines[1], `"rp_1"`, "\"rp_\xff\"", 1) + strings.Join(lines[2:], ""), "UTF-8"},
		"two values":          {lines[0] + strings.Replace(lines[1], "\n", "{}\n", 1) + strings.Join(lines[2:], ""), "after the value"},
		"duplicate in header": {strings.Replace(lines[0], `"format"`, `"format":"x","format"`, 1) + strings.Join(lines[1:], ""), "header"},
	} {
		if _, _, err := Read(strings.NewReader(c.data), nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", name, err, c.want)
		}
	}
}

// Digests do not depend on row order but on every row's content.
func TestDigestOrderIndependent(t *testing.T) {
	var a, b, c Digester
	a.Add("apps", []byte("1"))
	a.Add("apps", []byte("2"))
	b.Add("apps", []byte("2"))
	b.Add("apps", []byte("1"))
	c.Add("apps", []byte("1"))
	c.Add("apps", []byte("3"))
	if err := a.Summary().Diff(b.Summary()); err != nil {
		t.Errorf("order changed the digest: %v", err)
	}
	if err := a.Summary().Diff(c.Summary()); err == nil || !strings.Contains(err.Error(), "table apps: digest") {
		t.Errorf("different rows, same digest: %v", err)
	}
}

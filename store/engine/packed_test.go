package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// packedKey is a key of table "packed" that hexCodec packs.
func packedKey(group string, n int) string { return fmt.Sprintf("%s/%064x", group, n) }

// Random puts, overwrites and deletes on a packed table, with reopens in
// between, leave what a plain map model holds: every read, the record
// count and the snapshot agree, and rows the codec cannot reproduce
// (uppercase hex, values that are not small numbers) stay JSON rows.
func TestPackedRowsFollowModel(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Codecs: testCodecs}
	db := mustOpen(t, dir, opts)
	defer func() { db.Close() }()
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 3000 {
		key := packedKey([]string{"g", "h", "i/j"}[rng.IntN(3)], rng.IntN(400))
		switch r := rng.IntN(10); {
		case r < 5:
			v := fmt.Sprint(rng.IntN(1000))
			put(t, db, "packed", key, json.RawMessage(v))
			model[key] = v
		case r == 5:
			upper := strings.ToUpper(key[:2]) + strings.ToUpper(key[2:])
			put(t, db, "packed", upper, json.RawMessage("7"))
			model[upper] = "7"
		case r == 6:
			put(t, db, "packed", key, "text")
			model[key] = `"text"`
		default:
			del(t, db, "packed", key)
			delete(model, key)
		}
		if step%500 == 499 {
			db.Close()
			db = mustOpen(t, dir, opts)
		}
	}
	checkState(t, db, map[string]map[string]string{"packed": model})
	if db.records != len(model) {
		t.Fatalf("record count %d, want %d", db.records, len(model))
	}
	if err := db.View(func(tx *ReadTx) error {
		for k, v := range model {
			if got, ok := tx.Get("packed", k); !ok || string(got) != v {
				t.Fatalf("Get %s = %s, %t; want %s", k, got, ok, v)
			}
		}
		if _, ok := tx.Get("packed", packedKey("g", 401)); ok {
			t.Fatal("Get found an absent key")
		}
		if n := tx.Count("packed"); n != len(model) {
			t.Fatalf("Count %d, want %d", n, len(model))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := db.base.tables["packed"].packed
	if p.len() == 0 || len(db.base.tables["packed"].json) == 0 {
		t.Fatalf("%d packed and %d JSON rows: the test should have made both", p.len(), len(db.base.tables["packed"].json))
	}
}

// Records lists a group's packed records, and only that group's.
func TestRecordsOfGroup(t *testing.T) {
	db := mustOpen(t, t.TempDir(), Options{Codecs: testCodecs})
	defer db.Close()
	put(t, db, "packed", packedKey("g", 1), json.RawMessage("10"))
	put(t, db, "packed", packedKey("g", 2), json.RawMessage("20"))
	put(t, db, "packed", packedKey("h", 3), json.RawMessage("30"))
	var got []string
	db.View(func(tx *ReadTx) error {
		tx.Records("packed", "g/", func(rec []byte) {
			rest, v := hexCodec{}.Unpack(rec)
			got = append(got, rest[62:]+"="+string(v))
		})
		return nil
	})
	if strings.Join(got, ",") != "01=10,02=20" {
		t.Fatalf("records of g/: %v", got)
	}
}

// A format-1 snapshot (rows as JSON, the state.json of earlier versions)
// opens with its rows packed, and Open rewrites it in format 2, which
// opens to the same state.
func TestOpenMigratesFormat1(t *testing.T) {
	dir := t.TempDir()
	body := fmt.Sprintf("{\n  \"format\": \"worldid-store/1\",\n  \"lsn\": 2,\n  \"tables\": {\n    \"apps\": {\n      \"a\": {\"id\":\"a\"}\n    },\n    \"packed\": {\n      %q: 5,\n      %q: 6\n    }\n  }",
		packedKey("g", 1), packedKey("g", 2))
	file := append([]byte(body), snapshotCRC...)
	file = append(appendCRC(file, []byte(body)), "\"\n}\n"...)
	writeFile(t, snapshotPath(dir), file)
	want := map[string]map[string]string{"apps": {"a": `{"id":"a"}`}, "packed": {packedKey("g", 1): "5", packedKey("g", 2): "6"}}
	db := mustOpen(t, dir, Options{Codecs: testCodecs})
	checkState(t, db, want)
	if n := db.base.tables["packed"].packed.len(); n != 2 {
		t.Fatalf("%d packed rows after migration, want 2", n)
	}
	db.Close()
	if !bytes.HasPrefix(readFile(t, snapshotPath(dir)), []byte(v2Head)) {
		t.Fatalf("Open did not rewrite the snapshot in format 2:\n%s", readFile(t, snapshotPath(dir)))
	}
	db = mustOpen(t, dir, Options{Codecs: testCodecs})
	defer db.Close()
	checkState(t, db, want)
}

// Damaged packed records, or records of a codec this build lacks, are
// refused with an error naming the file, and Open changes nothing.
func TestCorruptPackedRecords(t *testing.T) {
	dir := t.TempDir()
	db := mustOpen(t, dir, Options{Codecs: testCodecs})
	for i := range 3 {
		put(t, db, "packed", packedKey("g", i), json.RawMessage("1"))
	}
	db.Close()
	db = mustOpen(t, dir, Options{Codecs: testCodecs}) // compacts
	db.Close()
	snap := readFile(t, snapshotPath(dir))
	flipped := bytes.Clone(snap)
	flipped[len(flipped)-1] ^= 1
	tests := []struct {
		name   string
		data   []byte
		codecs map[string]Codec
		want   string
	}{
		{"record bit flip", flipped, testCodecs, "checksum does not verify"},
		{"records cut", snap[:len(snap)-10], testCodecs, "do not fit"},
		{"extra bytes", append(bytes.Clone(snap), 0), testCodecs, "1 bytes after the packed records"},
		{"no codec", snap, nil, `codec "test-hex/1", which this build does not have`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, snapshotPath(dir), tt.data)
			_, err := Open(dir, Options{Codecs: tt.codecs})
			wantErrContains(t, err, snapshotPath(dir), tt.want)
			if !bytes.Equal(readFile(t, snapshotPath(dir)), tt.data) {
				t.Fatal("Open changed the snapshot")
			}
		})
	}
}

// OpenContext with a done context stops while it reads the snapshot or
// the journal, returns the context's error, changes no file and releases
// the lock.
func TestOpenContextStops(t *testing.T) {
	for _, where := range []string{"snapshot", "journal"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			db := mustOpen(t, dir, Options{CompactAfter: 1 << 20, Codecs: testCodecs})
			if err := db.Update(context.Background(), func(tx *Tx) error {
				for i := range 2 * checkEvery {
					tx.Put("t", fmt.Sprint(i), i)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			put(t, db, "t", "last", 1)
			db.Close()
			if where == "snapshot" {
				mustOpen(t, dir, Options{Codecs: testCodecs}).Close() // compacts
			}
			before := map[string][]byte{}
			for _, p := range []string{snapshotPath(dir), journalPath(dir)} {
				before[p], _ = os.ReadFile(p)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := OpenContext(ctx, dir, Options{Codecs: testCodecs}); !errors.Is(err, context.Canceled) {
				t.Fatalf("OpenContext = %v, want context.Canceled", err)
			}
			for p, b := range before {
				if after, _ := os.ReadFile(p); !bytes.Equal(after, b) {
					t.Fatalf("%s changed", p)
				}
			}
			mustOpen(t, dir, Options{Codecs: testCodecs}).Close()
		})
	}
}

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"worldid/admin"
	"worldid/internal/server"
)

// TestFaultNoSilentResetWithMark deletes the store's files together with
// store.mark, which the mark alone cannot notice: the journal and the mark,
// then all three files. The first-start record still knows the store, so
// the server refuses to start, naming it and the recovery command, and
// changes nothing; -accept-data-loss starts it empty and logs the loss. A
// fresh data dir starts as before.
func TestFaultNoSilentResetWithMark(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	ctx := context.Background()
	dir := hardenedDataDir(t) // fresh: the first start
	record := filepath.Join(dir, server.FirstStartFile)
	for _, deleted := range [][]string{
		{"journal.jsonl", "store.mark"},
		{"state.json", "journal.jsonl", "store.mark"},
	} {
		p := startProc(t, dir)
		if _, err := p.adminClient.CreateApp(ctx, admin.CreateAppRequest{Name: "kept RP", RedirectURIs: []string{e2eRedirect}}); err != nil {
			t.Fatal(err)
		}
		p.stop(t)
		for _, name := range deleted {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		kept := readFiles(t, dir, server.FirstStartFile)
		out := serveFails(t, ctx, dir)
		for _, want := range []string{"is missing", record, "worldid serve -data " + dir + " -accept-data-loss"} {
			if !strings.Contains(out, want) {
				t.Errorf("deleted %v: the refusal does not say %q:\n%s", deleted, want, out)
			}
		}
		sameFiles(t, kept, readFiles(t, dir, server.FirstStartFile))
		for _, name := range deleted {
			if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
				t.Errorf("deleted %v: the refused start created %s", deleted, name)
			}
		}

		p = startProc(t, dir, "-accept-data-loss")
		if apps, err := p.adminClient.Apps(ctx); err != nil || len(apps.Apps) != 0 {
			t.Errorf("deleted %v: apps after accepting the loss: %v %+v", deleted, err, apps)
		}
		p.stop(t)
		if log := p.stderr.String(); !strings.Contains(log, "level=WARN") || !strings.Contains(log, record) {
			t.Errorf("deleted %v: the accepted loss is not logged:\n%s", deleted, log)
		}
	}
}

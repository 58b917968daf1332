package admin

import (
	"context"
	"net/http"
	"time"

	"worldid/backup"
)

// Exporter is the storage a backup reads: a consistent snapshot of every
// record, streamed (package backup).
type Exporter interface {
	Export(ctx context.Context, emit backup.Emit) error
}

// getBackup streams a backup of the running server (GET /admin/backup):
// the store's consistent snapshot, then the data-dir files. Writes go on
// meanwhile. If anything fails after the answer started, the connection is
// cut before the trailer, so the client holds a file Read refuses.
func (a *api) getBackup(w http.ResponseWriter, r *http.Request) {
	var files []backup.File
	if a.Files != nil {
		var err error
		if files, err = a.Files(r.Context()); err != nil {
			writeError(w, a.Log, err)
			return
		}
	}
	// A large store takes longer than the listener's write timeout.
	http.NewResponseController(w).SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	bw, err := backup.NewWriter(w, a.StoreName, a.Now())
	if err == nil {
		err = a.Store.Export(r.Context(), bw.Row)
	}
	for _, f := range files {
		if err == nil {
			err = bw.Row(backup.TableFiles, f)
		}
	}
	if err == nil {
		err = bw.Close()
	}
	if err != nil {
		a.Log.Error("admin: backup failed; the client gets a truncated file", "err", err)
		panic(http.ErrAbortHandler)
	}
	a.audit("backup taken", "")
}

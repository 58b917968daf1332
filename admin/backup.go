package admin

import (
	"context"
	"io"
	"net/http"
	"time"

	"worldid/backup"
)

// Exporter is the storage a backup reads: a consistent snapshot of every
// record, streamed (package backup).
type Exporter interface {
	Export(ctx context.Context, emit backup.Emit) error
}

// backupWriteStall is how long a backup client may take to accept each
// chunk (64 KiB) of the stream. A large store streams for longer than the
// listener's write timeout, so the deadline moves with the progress: a
// client that stops reading is cut within this, a slow one is not.
const backupWriteStall = 30 * time.Second

// progressWriter extends the response's write deadline before each write.
type progressWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func (p progressWriter) Write(b []byte) (int, error) {
	// A network deadline: the wall clock, not the injected one.
	if err := p.rc.SetWriteDeadline(time.Now().Add(backupWriteStall)); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}

// getBackup streams a backup of the running server (GET /admin/backup):
// the store's consistent snapshot, then the data-dir files. Writes go on
// meanwhile. If anything fails after the answer started, the connection is
// cut before the trailer, so the client holds a file Read refuses. The
// store bounds each of its waits (store/postgres: stepDeadline), the
// client each of its chunks (backupWriteStall).
func (a *api) getBackup(w http.ResponseWriter, r *http.Request) {
	var files []backup.File
	if a.Files != nil {
		var err error
		if files, err = a.Files(r.Context()); err != nil {
			writeError(w, r, a.Log, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	bw, err := backup.NewWriter(progressWriter{w, http.NewResponseController(w)}, a.StoreName, a.Now())
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

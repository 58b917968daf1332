package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"worldid/backup"
)

// backupFileNames are the data-dir files a backup carries: the secrets and
// key material a restored server needs to answer as the original.
var backupFileNames = []string{IssuerKeyFile, ProvingKeyFile, VerifyingKeyFile}

// dataFiles reads the files a backup carries: with a shared backend
// (PostgreSQL) its copies, which every replica uses, else the data dir's.
// Absent files are skipped.
func dataFiles(ctx context.Context, dir string, shared sharedFiles) ([]backup.File, error) {
	var files []backup.File
	for _, name := range backupFileNames {
		var (
			content []byte
			found   bool
			err     error
		)
		if shared != nil {
			content, found, err = shared.SharedFile(ctx, name)
		} else {
			content, err = os.ReadFile(filepath.Join(dir, name))
			found = err == nil
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if found {
			files = append(files, backup.File{Name: name, Content: content})
		}
	}
	return files, nil
}

package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrBackupPostgres is Backup's answer on PostgreSQL, whose own tool makes
// a consistent copy of a running database.
var ErrBackupPostgres = errors.New("this is a PostgreSQL database: back it up with pg_dump --format=custom (docs/operating.md, \"Backups\")")

// Backup writes a consistent copy of the database to path with VACUUM
// INTO: one read transaction, so it is safe while `herald serve` writes
// (it sees the database as of its start, and never blocks the server's
// writer). The copy is compacted and has no -wal file to go with it. It
// holds the actors' private keys, so it is created readable by its owner
// only, under a temporary name renamed into place when complete: a
// half-written backup never stands at path. An existing path is refused.
// The media folder (MediaDir) is copied after it to path+"-media", where a
// database restored at path finds it; files are never changed once
// written, so a file the copy has and the database does not (uploaded in
// between) is the only difference, and harmless.
//
// On PostgreSQL it refuses (ErrBackupPostgres): pg_dump makes that copy.
func (db *DB) Backup(ctx context.Context, path string) error { return db.dialect.backup(ctx, db, path) }

// backupMedia copies the media folder, if there is one, to dst.
func (db *DB) backupMedia(dst string) error {
	src := db.MediaDir()
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := copyMedia(src, dst); err != nil {
		return fmt.Errorf("back up the media folder to %s: %w", dst, err)
	}
	return nil
}

func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

package store

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of the media folder and its files: owner only, like the database.
// Followers-only attachments are among them, and Herald serves them itself
// (GET /media/...), so nobody else on the machine needs to read them.
const (
	MediaDirMode  fs.FileMode = 0o700
	MediaFileMode fs.FileMode = 0o600
)

// SecureMediaDir makes dir (the media folder) if it is missing, with
// MediaDirMode, and takes group and other permissions off it and everything
// in it that an older Herald made readable (folders 0755, files 0644).
func SecureMediaDir(dir string) error {
	if err := os.MkdirAll(dir, MediaDirMode); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := MediaFileMode
		if d.IsDir() {
			want = MediaDirMode
		}
		if info.Mode().Perm()&^want != 0 {
			return os.Chmod(path, info.Mode().Perm()&want)
		}
		return nil
	})
}

// copyMedia copies the media folder src to dst (made, or made more of)
// with the media modes whatever the process's umask: a backup of
// followers-only attachments is as private as the folder itself.
func copyMedia(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, MediaDirMode); err != nil {
				return err
			}
			return os.Chmod(to, MediaDirMode)
		case !d.Type().IsRegular():
			return nil // Herald keeps plain files only
		}
		return copyFile(path, to)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, MediaFileMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

//go:build unix

package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMediaFileModes (issue 26 item 9): an uploaded file and its folder
// are the owner's only (0600, 0700) whatever the umask, and so are the
// media copy of a backup; a media folder an older Herald left readable
// (0755 and 0644) is made owner-only when the server starts.
func TestMediaFileModes(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask: what made 0755 and 0644
	defer syscall.Umask(old)
	dir := t.TempDir()
	path := filepath.Join(dir, "herald.db")
	media := path + "-media"
	mustCLI(t, "init", "--db", path, "--domain", "127.0.0.1:1")
	if err := os.MkdirAll(filepath.Join(media, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(media, "old", "left.png"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	serveInProcess(t, path)
	mustCLI(t, "actor", "add", "alice", "--db", path)
	picture := filepath.Join(t.TempDir(), "strip.png")
	writePNG(t, picture)
	mustCLI(t, "post", "--as", "alice", "--to", "followers", "Hello", "--attach", picture, "--db", path)
	backup := filepath.Join(t.TempDir(), "backup.db")
	mustCLI(t, "backup", backup, "--db", path)

	for _, folder := range []string{media, backup + "-media"} {
		files := 0
		err := filepath.WalkDir(folder, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			} else {
				files++
			}
			if info.Mode().Perm() != want {
				t.Errorf("%s: mode %v, want %v", p, info.Mode().Perm(), want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files < 2 { // the upload and the older file
			t.Errorf("%s holds %d files, want the upload and the older one", folder, files)
		}
	}
}

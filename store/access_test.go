//go:build unix

package store

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenSaysWhoMayNot: a database file the process may not read and
// write (one `herald init` made as root, opened by the service user) is
// refused with a message that names the file, its owner and mode, and the
// user Herald runs as, not SQLite's bare "unable to open database file".
// As root the check runs in a child process of this test as nobody (uid
// 65534), since root may open anything.
func TestOpenSaysWhoMayNot(t *testing.T) {
	if path := os.Getenv("HERALD_ACCESS_CHILD"); path != "" {
		_, err := Open(context.Background(), path)
		if err == nil {
			t.Fatal("opened")
		}
		os.Stdout.WriteString("ERR: " + err.Error() + "\n")
		return
	}
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "herald.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	var msg string
	if os.Geteuid() == 0 {
		// The folder is the service user's, the file root's, as after a
		// `herald init` run as root in a StateDirectory.
		for p := dir; p != "/"; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(p, fi.Mode().Perm()|0o001) // let nobody reach it
			}
		}
		os.Chown(dir, 65534, 65534)
		// A copy of this test binary that nobody may run (go test's own
		// folder is root's alone).
		self, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(filepath.Dir(dir), "store.test")
		if err := os.WriteFile(bin, self, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^TestOpenSaysWhoMayNot$")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HERALD_ACCESS_CHILD="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.CombinedOutput()
		_, msg, _ = strings.Cut(string(out), "ERR: ")
		msg, _, _ = strings.Cut(msg, "\n")
		for _, want := range []string{"cannot open the database " + path, path + " is owned by root:root with mode 0600", "Herald runs as", "(uid 65534, gid 65534)", "chown "} {
			if !strings.Contains(msg, want) {
				t.Errorf("the message lacks %q:\n%s", want, out)
			}
		}
		return
	}
	os.Chmod(path, 0)
	_, err = Open(context.Background(), path)
	if err == nil {
		t.Fatal("opened a file of mode 0000")
	}
	msg = err.Error()
	for _, want := range []string{"cannot open the database " + path, "with mode 0000", "Herald runs as", "chown "} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q: %s", want, msg)
		}
	}
}

//go:build unix

package store

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// accessError explains a failure to open the SQLite file at path when
// what stands in the way is ownership or permissions: SQLite itself only
// says "unable to open database file (14)". It names the file (the
// database, a -wal or -shm companion, or the folder, where SQLite makes
// them), its owner and mode, and the user Herald runs as. It returns err
// unchanged when every file is accessible.
func accessError(path string, err error) error {
	dir := filepath.Dir(path)
	files := path + "*" // the file, its -wal and -shm, its -wake pipe and -media folder
	checks := []struct {
		path, fix string
		mode      uint32 // what Herald needs: syscall.Access bits
		what      string
	}{
		{dir, dir, 2 | 1, "write in the folder (SQLite makes " + filepath.Base(path) + "-wal and -shm beside the file)"},
		{path, files, 4 | 2, "read and write it"},
		{path + "-wal", files, 4 | 2, "read and write it"},
		{path + "-shm", files, 4 | 2, "read and write it"},
	}
	for _, c := range checks {
		fi, statErr := os.Stat(c.path)
		if statErr != nil {
			continue // not there: a companion SQLite makes, or the file createPrivate reports
		}
		if syscall.Access(c.path, c.mode) == nil {
			continue
		}
		return fmt.Errorf("cannot open the database %s: %s is owned by %s with mode %04o, and Herald runs as %s, which may not %s; "+
			"run Herald as the owner, or give it the files: chown %s %s (%w)",
			path, c.path, owner(fi), fi.Mode().Perm(), runningAs(), c.what, runningAsChown(), c.fix, err)
	}
	return err
}

// owner is a file's owner and group, by name where they have one.
func owner(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "?"
	}
	return userName(int(st.Uid)) + ":" + groupName(int(st.Gid))
}

// runningAs is the user this process runs as, with its ids.
func runningAs() string {
	return fmt.Sprintf("%s (uid %d, gid %d)", userName(os.Geteuid()), os.Geteuid(), os.Getegid())
}

// runningAsChown is the user:group a chown would give the files to.
func runningAsChown() string {
	return userName(os.Geteuid()) + ":" + groupName(os.Getegid())
}

func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

func groupName(gid int) string {
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		return g.Name
	}
	return strconv.Itoa(gid)
}

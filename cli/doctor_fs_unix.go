//go:build unix

package cli

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// owned is a file's owner, by id and name, and its mode bits.
type owned struct {
	uid  int
	name string
	mode os.FileMode
}

// fileOwner stats path (false when it is not there).
func fileOwner(path string) (owned, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return owned{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return owned{}, false
	}
	return owned{uid: int(st.Uid), name: userLabel(int(st.Uid)), mode: fi.Mode().Perm()}, true
}

// userLabel is a user's name, or its uid when it has none.
func userLabel(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return u.Username
	}
	return strconv.Itoa(uid)
}

// processUID is the real uid of a process of this machine, from /proc.
func processUID(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Uid:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				uid, err := strconv.Atoi(f[0])
				return uid, err == nil
			}
		}
	}
	return 0, false
}

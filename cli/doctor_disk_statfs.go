//go:build linux || darwin || freebsd

package cli

import "syscall"

// The systems whose syscall.Statfs_t has these fields; elsewhere (the
// other BSDs, Solaris name them differently) doctor_disk_other.go says
// nothing of the disk.

// diskSpace is what statfs says of the filesystem holding dir.
func diskSpace(dir string) (space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return space{}, err
	}
	var fi syscall.Stat_t
	syscall.Stat(dir, &fi)
	// The fields' types differ between systems (uint64 on Linux, int64
	// on FreeBSD, where the blocks and inodes left to users go negative
	// once root's reserve is in use).
	bs := count(st.Bsize)
	return space{device: uint64(fi.Dev), free: count(st.Bavail) * bs, total: count(st.Blocks) * bs, freeInodes: count(st.Ffree), allInodes: count(st.Files)}, nil
}

// count is a statfs field as a uint64, 0 for a negative one.
func count[T ~int32 | ~int64 | ~uint32 | ~uint64](v T) uint64 {
	if v < 0 {
		return 0
	}
	return uint64(v)
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"herald/federation"
	"herald/node"
	"herald/policy"
	"herald/store"
)

// doctor's checks of this machine and the database: the instance,
// migrations and integrity, the processes, file owners and modes, free
// space, the media folder.

// checkDatabase reads the instance, the migrations and the database's
// integrity. It reports false when nothing more can be checked.
func (d *doctorRun) checkDatabase(ctx context.Context) bool {
	pending, unknown, err := d.db.MigrationState(ctx)
	switch {
	case err != nil:
		d.add("migrations", statusFail, fmt.Sprintf("cannot read them: %v", err),
			"is this a Herald database? herald migrate applies the migrations, herald init makes a new one")
		return false
	case len(unknown) > 0:
		d.add("migrations", statusFail, fmt.Sprintf("the database was migrated by a newer Herald (%s is not one this one knows)", unknown[0]),
			"run the Herald that migrated it, or a newer one (herald version says which this is)")
		return false
	case len(pending) > 0:
		d.add("migrations", statusWarn, fmt.Sprintf("%s of this Herald not applied yet (the first: %s)", plural(len(pending), "migration"), pending[0]),
			"the server applies them at its next start (restart it after an upgrade), or herald migrate; take a backup first")
	default:
		d.add("migrations", statusOK, "every migration of this Herald is applied", "")
	}
	row, err := d.db.Instance(ctx)
	if errors.Is(err, store.ErrNoInstance) {
		d.add("instance", statusFail, "no instance recorded in "+d.db.Path(), "herald init --domain HOST")
		return false
	}
	if err != nil {
		d.add("instance", statusFail, fmt.Sprintf("cannot read it: %v", err), "")
		return false
	}
	d.inst = federation.Instance{Scheme: row.Scheme, Domain: row.Domain}
	d.add("instance", statusOK, fmt.Sprintf("%s, recorded in %s", d.inst.Base(), d.db.Path()), "")
	switch problems, checked, err := d.db.Integrity(ctx); {
	case err != nil:
		d.add("integrity", statusFail, fmt.Sprintf("the check failed: %v", err), "restore the latest backup (operating.md, \"Restoring\")")
	case !checked:
		d.add("integrity", statusSkip, "PostgreSQL checks its own pages", "")
	case len(problems) > 0:
		d.add("integrity", statusFail, fmt.Sprintf("%s: %s", plural(len(problems), "problem"), strings.Join(problems[:min(3, len(problems))], "; ")),
			"stop the server and restore the latest backup (operating.md, \"Restoring\")")
	default:
		d.add("integrity", statusOK, "the database file is sound (quick_check)", "")
	}
	return true
}

// checkWorker looks for a live process that does the background work
// (deliveries, jobs): without one nothing goes out.
func (d *doctorRun) checkWorker(ctx context.Context) {
	procs, err := d.db.Processes(ctx)
	if err != nil {
		d.add("worker", statusFail, fmt.Sprintf("cannot read the processes: %v", err), "")
		return
	}
	since := d.now().Add(-node.StaleAfter)
	var alive []string
	workers := 0
	for _, p := range procs {
		if p.HeartbeatAt.Before(since) {
			continue
		}
		alive = append(alive, fmt.Sprintf("pid %d on %s (role %s)", p.PID, p.Hostname, p.Role))
		if p.Role == policy.RoleAll || p.Role == policy.RoleWorker {
			workers++
		}
	}
	switch {
	case workers > 0:
		d.add("worker", statusOK, strings.Join(alive, ", "), "")
	case d.db.Engine() == store.PostgreSQL:
		d.add("worker", statusFail, "no worker is running on this database: deliveries and jobs wait", "start herald serve, or herald serve --role worker, on one machine")
	default:
		d.add("worker", statusFail, "no herald serve is running on this database: nothing is delivered", "systemctl start herald (journalctl -u herald says why it stopped)")
	}
}

// checkFiles checks the owner and mode of the SQLite file, its
// companions and the media folder: the server's user must own them (a
// command run as root makes root's files), and the database, which holds
// the private keys, must be private.
func (d *doctorRun) checkFiles(ctx context.Context) {
	if d.db.Engine() != store.SQLite {
		d.add("files", statusSkip, "the database is PostgreSQL's", "")
		return
	}
	want, who := d.serverUser(ctx)
	path := d.db.Path()
	var bad, open []string
	var fix string
	for _, f := range []string{path, path + "-wal", path + "-shm", path + "-wake", d.db.MediaDir()} {
		o, ok := fileOwner(f)
		if !ok {
			continue
		}
		if o.uid != want {
			bad = append(bad, fmt.Sprintf("%s is owned by %s", f, o.name))
			fix = fmt.Sprintf("chown -R %s %s*", who, path)
		}
		if f != d.db.MediaDir() && f != path+"-wake" && o.mode&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s has mode %04o", f, o.mode))
		}
	}
	switch {
	case len(bad) > 0:
		d.add("files", statusFail, strings.Join(bad, ", ")+"; the server runs as "+who, fix)
	case len(open) > 0:
		d.add("files", statusWarn, strings.Join(open, ", ")+": others may read the actors' private keys", "chmod 600 "+path+" "+path+"-wal "+path+"-shm")
	default:
		d.add("files", statusOK, fmt.Sprintf("%s and its companions are %s's, mode 0600", path, who), "")
	}
}

// serverUser is the uid the server runs as (that of a live serve on this
// machine, by its pid), else this command's (or, for root, the
// database file's owner's), and its name.
func (d *doctorRun) serverUser(ctx context.Context) (uid int, name string) {
	host, _ := os.Hostname()
	since := d.now().Add(-node.StaleAfter)
	if procs, err := d.db.Processes(ctx); err == nil {
		for _, p := range procs {
			if p.Hostname == host && !p.HeartbeatAt.Before(since) {
				if uid, ok := processUID(p.PID); ok {
					return uid, userLabel(uid)
				}
			}
		}
	}
	uid = os.Geteuid()
	if o, ok := fileOwner(filepath.Dir(d.db.Path())); ok && uid == 0 {
		uid = o.uid // root checks for the folder's owner: the service's, made for it
	}
	return uid, userLabel(uid)
}

// checkSpace checks the free space and inodes of the folders Herald
// writes: the database's (SQLite) and the media folder.
func (d *doctorRun) checkSpace() {
	var dirs []string
	if d.db.Engine() == store.SQLite {
		dirs = append(dirs, filepath.Dir(d.db.Path()))
	}
	if m := d.db.MediaDir(); m != "" {
		if _, err := os.Stat(m); err == nil {
			dirs = append(dirs, m)
		}
	}
	if len(dirs) == 0 {
		d.add("disk", statusSkip, "no folder of Herald's on this machine (PostgreSQL, no media folder)", "")
		return
	}
	seen := map[uint64]bool{}
	for _, dir := range dirs {
		st, err := diskSpace(dir)
		if err != nil {
			d.add("disk", statusWarn, fmt.Sprintf("cannot read the free space of %s: %v", dir, err), "")
			continue
		}
		if seen[st.device] {
			continue
		}
		seen[st.device] = true
		status, msg := judgeSpace(st)
		fix := ""
		if status != statusOK {
			fix = "free space on that filesystem (old backups, logs); at 0 the database refuses writes with 503 until space returns"
		}
		d.add("disk", status, dir+": "+msg, fix)
	}
}

// space is what statfs says of a filesystem.
type space struct {
	device                uint64
	free, total           uint64 // bytes available to Herald, and all
	freeInodes, allInodes uint64
}

// judgeSpace rates a filesystem: a failure under 1% or 100 MiB free (or
// 1% of inodes), a warning under 10% or 1 GiB (or 5% of inodes).
func judgeSpace(s space) (status, msg string) {
	const mib = 1 << 20
	msg = fmt.Sprintf("%s free of %s", bytesText(s.free), bytesText(s.total))
	if s.allInodes > 0 {
		msg += fmt.Sprintf(", %d%% of inodes free", s.freeInodes*100/s.allInodes)
	}
	pct := func(a, b uint64) float64 { return float64(a) * 100 / float64(max(b, 1)) }
	switch {
	case pct(s.free, s.total) < 1 || s.free < 100*mib || (s.allInodes > 0 && pct(s.freeInodes, s.allInodes) < 1):
		return statusFail, msg
	case pct(s.free, s.total) < 10 || s.free < 1024*mib || (s.allInodes > 0 && pct(s.freeInodes, s.allInodes) < 5):
		return statusWarn, msg
	}
	return statusOK, msg
}

// bytesText writes n bytes in MiB or GiB.
func bytesText(n uint64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// checkMedia checks that the server can keep uploads: a media folder it
// may write.
func (d *doctorRun) checkMedia() {
	dir := d.db.MediaDir()
	if dir == "" {
		d.add("media", statusWarn, "no media folder: uploads are refused (503)", "give every Herald process HERALD_MEDIA_DIR, one folder they all share")
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		d.add("media", statusOK, dir+" does not exist yet: the server makes it at start", "")
		return
	case err != nil:
		d.add("media", statusFail, err.Error(), "")
		return
	case !fi.IsDir():
		d.add("media", statusFail, dir+" is not a folder", "move it away; the server makes the folder")
		return
	}
	if os.Geteuid() == 0 {
		// root may write anywhere: what matters is the folder's owner,
		// which checkFiles compares with the server's user.
		d.add("media", statusOK, dir+" exists", "")
		return
	}
	f, err := os.CreateTemp(dir, ".herald-doctor-*")
	if err != nil {
		d.add("media", statusFail, fmt.Sprintf("cannot write in %s: %v", dir, err), "chown the folder to the user the server runs as")
		return
	}
	f.Close()
	os.Remove(f.Name())
	d.add("media", statusOK, dir+" is writable", "")
}

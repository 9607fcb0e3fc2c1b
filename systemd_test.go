//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// systemdSection returns the commands of docs/operating.md's "Installing
// as a service (systemd)" block, one a line.
func systemdSection(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "### Installing as a service (systemd)\n")
	if ok {
		_, rest, ok = strings.Cut(rest, "```sh\n")
	}
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/operating.md has no sh block under \"Installing as a service (systemd)\"")
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// scratchSystem is a folder standing for the machine's /: what the
// section installs in /usr/local/bin, /var/lib and /etc goes there, and
// its service user is one made for the test.
type scratchSystem struct {
	root, checkout string
	user           string
	uid, gid       int
	port           string
	replaced       map[string]bool
}

// rewrite redirects a line of the section (or of the unit) into the
// scratch system: its paths, its user, its domain and port.
func (s *scratchSystem) rewrite(line string) string {
	pairs := []string{
		"-- herald ", "-- /usr/local/bin/herald ", // then into the scratch system
		"/usr/local/bin/herald", s.root + "/usr/local/bin/herald",
		"/var/lib/herald", s.root + "/var/lib/herald",
		"/etc/systemd/system", s.root + "/etc/systemd/system",
		"/etc/herald", s.root + "/etc/herald",
		"-u herald ", "-u " + s.user + " ",
		"-o herald -g herald", "-o " + s.user + " -g " + s.user,
		"/usr/sbin/nologin herald", "/usr/sbin/nologin " + s.user,
		"User=herald", "User=" + s.user,
		"Group=herald", "Group=" + s.user,
		"social.example.com", "127.0.0.1:" + s.port,
		"127.0.0.1:8080", "127.0.0.1:" + s.port,
	}
	for i := 0; i < len(pairs); i += 2 {
		if strings.Contains(line, pairs[i]) {
			s.replaced[pairs[i]] = true
			line = strings.ReplaceAll(line, pairs[i], pairs[i+1])
		}
	}
	return line
}

// script runs lines as one bash script (set -eu) as root in the
// checkout, with the environment exports holds first.
func (s *scratchSystem) script(t *testing.T, exports, lines []string) string {
	t.Helper()
	body := "set -eu\n" + strings.Join(exports, "\n") + "\n" + strings.Join(lines, "\n") + "\n"
	cmd := exec.Command("bash", "-c", body)
	cmd.Dir = s.checkout
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the section's commands failed: %v\n%s\n%s", err, body, out)
	}
	return string(out)
}

// unit reads the installed unit: its [Service] keys (the last of each,
// Environment= all of them).
func unit(t *testing.T, path string) (map[string]string, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, env := map[string]string{}, []string(nil)
	section := ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") || section != "[Service]" {
			continue
		}
		if k == "Environment" {
			env = append(env, v)
		}
		keys[k] = v
	}
	return keys, env
}

// TestSystemdSection follows docs/operating.md's systemd section as root
// in a scratch folder: the commands as the doc gives them, with the paths,
// the service user, the domain and the port redirected into the scratch
// system. Where the doc starts the unit, the test runs the installed
// unit's ExecStart as its User= and Group=, with its Environment= and
// WorkingDirectory=, as systemd would, and the server opens the database
// and answers; then the commands after it run (herald doctor, as the
// service user). The unit passes `systemd-analyze verify`. Last, the
// wrong order (herald init as root first): the service user's serve
// refuses with the file, its owner and mode and the user it runs as.
func TestSystemdSection(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (useradd, runuser): the section is run as root; CI runs as root")
	}
	for _, tool := range []string{"useradd", "userdel", "runuser", "install"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH", tool)
		}
	}
	bin := buildHerald(t)
	lines := systemdSection(t)

	scratch := t.TempDir()
	// The service user must reach what is its own in the scratch system.
	for p := scratch; p != "/"; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(p, fi.Mode().Perm()|0o001)
		}
	}
	s := &scratchSystem{root: filepath.Join(scratch, "root"), checkout: filepath.Join(scratch, "checkout"), replaced: map[string]bool{}}
	for _, d := range []string{"usr/local/bin", "var/lib", "etc/systemd/system"} {
		os.MkdirAll(filepath.Join(s.root, d), 0o755)
	}
	os.MkdirAll(filepath.Join(s.checkout, "contrib"), 0o755)
	copyFile(t, bin, filepath.Join(s.checkout, "herald"), 0o755)
	copyFile(t, "contrib/herald.service", filepath.Join(s.checkout, "contrib", "herald.service"), 0o644)
	s.user = fmt.Sprintf("herald-t%d", os.Getpid())
	if _, err := user.Lookup(s.user); err == nil {
		t.Fatalf("a user %s exists already", s.user)
	}
	t.Cleanup(func() { exec.Command("userdel", s.user).Run() })
	s.port = unusedPort(t)

	// The commands up to the first systemctl, then the unit started, then
	// the commands after the last.
	var before, after, exports []string
	started := false
	for _, l := range lines {
		l = s.rewrite(l)
		switch {
		case strings.HasPrefix(l, "systemctl enable --now herald"), strings.HasPrefix(l, "systemctl start herald"):
			started = true
		case strings.HasPrefix(l, "systemctl "):
		case started:
			after = append(after, l)
		default:
			if strings.HasPrefix(l, "export ") {
				exports = append(exports, l)
			}
			before = append(before, l)
		}
	}
	if !started {
		t.Fatal("the section never starts the unit (systemctl enable --now herald)")
	}
	t.Logf("as root: %s", s.script(t, nil, before))
	for _, must := range []string{"/usr/local/bin/herald", "/var/lib/herald", "-u herald ", "social.example.com", "/etc/systemd/system"} {
		if !s.replaced[must] {
			t.Errorf("the section no longer names %q: the test must follow it", must)
		}
	}
	u, err := user.Lookup(s.user)
	if err != nil {
		t.Fatalf("the section made no user: %v", err)
	}
	s.uid, _ = strconv.Atoi(u.Uid)
	s.gid, _ = strconv.Atoi(u.Gid)
	db := filepath.Join(s.root, "var/lib/herald/herald.db")
	for _, f := range []string{db, filepath.Dir(db)} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != s.uid || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: owner %d, mode %04o; want the service user's (%d), private", f, st.Uid, fi.Mode().Perm(), s.uid)
		}
	}

	// The unit, as systemd would run it.
	unitFile := filepath.Join(s.root, "etc/systemd/system/herald.service")
	verifyUnit(t, s, unitFile)
	keys, env := unit(t, unitFile)
	exe := strings.Fields(s.rewrite(keys["ExecStart"]))
	if keys["User"] != "herald" || keys["StateDirectory"] != "herald" || keys["ProtectSystem"] != "strict" || keys["NoNewPrivileges"] != "yes" {
		t.Errorf("the unit is not the hardened one: %v", keys)
	}
	cmd := exec.Command(exe[0], exe[1:]...)
	cmd.Dir = s.rewrite(keys["WorkingDirectory"])
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	for _, e := range env {
		cmd.Env = append(cmd.Env, s.rewrite(e))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}}
	// A file, not a pipe: the child writes into it itself, so what it
	// wrote before answering is there once it answered (a pipe's copy
	// into a buffer may lag behind on a loaded machine).
	out, err := os.Create(filepath.Join(scratch, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logged := func() string { b, _ := os.ReadFile(out.Name()); return string(b) }
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	waitFor(t, func() bool {
		select {
		case <-exited:
			t.Fatalf("the unit's serve exited: %s", logged())
		default:
		}
		res, err := http.Get("http://127.0.0.1:" + s.port + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	// The line is written before the server answers.
	if startLine := "serving http://127.0.0.1:" + s.port; !strings.Contains(logged(), startLine) {
		t.Errorf("no start line: %s", logged())
	}
	res, err := http.Get("http://127.0.0.1:" + s.port + "/users/alice")
	if err != nil || res.StatusCode != 200 {
		t.Errorf("alice, made by the section, is not served: %v %v", err, res)
	} else {
		res.Body.Close()
	}

	// What the section does once the unit runs, as it says (herald
	// doctor as the service user, with the unit's variables): nothing
	// wrong.
	// The section says to give doctor the unit's HERALD_* variables.
	for _, e := range env {
		exports = append(exports, "export "+s.rewrite(e))
	}
	body := "set -u\n" + strings.Join(exports, "\n") + "\n" + strings.Join(after, "\n") + "\n"
	check := exec.Command("bash", "-c", body)
	check.Dir = s.checkout
	doctorOut, err := check.CombinedOutput()
	if code := check.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the commands after the start: %v\n%s\n%s", err, body, doctorOut)
	}
	t.Logf("after the start (exit %d):\n%s", check.ProcessState.ExitCode(), doctorOut)

	// The wrong order: the database made by root, then served by the
	// service user.
	wrong := filepath.Join(scratch, "wrong")
	os.Mkdir(wrong, 0o700)
	os.Chown(wrong, s.uid, s.gid)
	wrongDB := filepath.Join(wrong, "herald.db")
	scratchBin := filepath.Join(s.checkout, "herald") // go test's folder is root's alone
	if out, err := exec.Command(scratchBin, "init", "--db", wrongDB, "--domain", "social.example.com").CombinedOutput(); err != nil {
		t.Fatalf("init as root: %v %s", err, out)
	}
	serve := exec.Command(scratchBin, "serve", "--db", wrongDB, "--listen", "127.0.0.1:0")
	serve.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}}
	msg, _ := serve.CombinedOutput()
	want := fmt.Sprintf("cannot open the database %s: %s is owned by root:root with mode 0600, and Herald runs as %s (uid %d, gid %d)", wrongDB, wrongDB, s.user, s.uid, s.gid)
	if serve.ProcessState.ExitCode() != 1 || !strings.Contains(string(msg), want) || !strings.Contains(string(msg), "chown "+s.user+":") {
		t.Errorf("serve as the service user on root's database: exit %d\n%s\nwant %q", serve.ProcessState.ExitCode(), msg, want)
	}
}

// unusedPort is a free loopback port below the kernel's ephemeral range:
// the unit's serve binds it only after the section ran, and a port of that
// range, free when picked, could meanwhile be given to any of the
// connections and :0 listeners of the tests running beside this one.
func unusedPort(t *testing.T) string {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				low = n
			}
		}
	}
	for p := low - 1 - os.Getpid()%(low/2); p > 1024; p-- {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			ln.Close()
			return strconv.Itoa(p)
		}
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// verifyUnit checks the unit with systemd-analyze verify, where it is
// installed: a copy whose ExecStart names the scratch binary (verify
// checks that it exists), and no word from the tool, which reports a
// misspelt key or a bad value on stderr yet exits 0.
func verifyUnit(t *testing.T, s *scratchSystem, path string) {
	t.Helper()
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("no systemd-analyze on PATH: the unit is not verified (Debian's systemd package has it)")
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "herald.service")
	os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(raw), "/usr/local/bin/herald", s.root+"/usr/local/bin/herald")), 0o644)
	cmd := exec.Command(tool, "verify", copyPath)
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	if sec, err := exec.Command(tool, "security", "--offline=true", copyPath).CombinedOutput(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(sec)), "\n")
		t.Logf("systemd-analyze security: %s", lines[len(lines)-1])
	}
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, mode); err != nil {
		t.Fatal(err)
	}
}

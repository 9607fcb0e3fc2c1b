package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"herald/cli"
	"herald/internal/fedtest"
)

// The tests of this package run herald as a whole: the built binary as an
// operator runs it (buildHerald, startProcess), next to commands run in
// process. The tests of each command are in cli/.

// mustCLI runs herald in process and fails the test unless it exits 0.
func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	return fedtest.MustCLI(t, cli.Run, args...)
}

// syncBuffer is a log buffer the child process's output and the test
// share.
type syncBuffer = fedtest.Buffer

// What these tests share with the tests of the commands in cli/.
var (
	waitServing  = fedtest.WaitServing
	waitFor      = fedtest.WaitFor
	waitReceived = fedtest.WaitReceived
	lineValue    = fedtest.LineValue
	writePNG     = fedtest.WritePNG
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// buildHerald compiles the binary once per test run, static and without
// the build machine's paths; TestMain removes it.
func buildHerald(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "herald-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "herald")
		// As the release build makes it (docs/operating.md, "A release
		// build"): the binary these tests run is the one that ships, and
		// .ci/run's vet has compiled everything so already.
		cmd := exec.Command("go", "build", "-trimpath", "-o", builtBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// process is a `herald serve` child process.
type process struct {
	cmd    *exec.Cmd
	out    *syncBuffer
	errs   *syncBuffer
	exited chan struct{}
	Addr   string
	Base   string
}

// startProcess runs the binary with args (a serve) and waits until it
// listens.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := spawn(t, bin, args...)
	p.Base, p.Addr = waitServing(t, p.errs, p.hasExited)
	return p
}

// hasExited reports whether the process has stopped.
func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// spawn runs the binary with args, to be stopped (SIGINT, then SIGKILL)
// when the test ends.
func spawn(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), out: &syncBuffer{}, errs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := p.exited
	go func() { p.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			p.cmd.Process.Kill()
			<-exited
		}
	})
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// healthy reports whether the process answers /healthz.
func (p *process) healthy() bool {
	res, err := http.Get("http://" + p.Addr + "/healthz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == 200
}

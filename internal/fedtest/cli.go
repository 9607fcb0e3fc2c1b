package fedtest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// What the tests of the command line share, whether they run it in
// process (cli.Run) or as the built binary.

// Run is cli.Run's shape: herald without the process (the arguments
// after the program's name, the environment, the streams; the exit code).
type Run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int

// RunCLI runs herald in process with args and the environment env,
// returning the exit code and both streams.
func RunCLI(t testing.TB, run Run, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return code, out.String(), errOut.String()
}

// MustCLI runs herald in process and fails the test unless it exits 0.
func MustCLI(t testing.TB, run Run, args ...string) string {
	t.Helper()
	code, out, errOut := RunCLI(t, run, nil, args...)
	if code != 0 {
		t.Fatalf("herald %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// servingLine is serve's start line, logged: "herald VERSION serving BASE
// on ADDR from ...".
var servingLine = regexp.MustCompile(`serving (\S+) on (\S+) from`)

// WaitServing waits for serve's start line in its log (its stderr) and
// returns the base URL of its ids and the address it listens on; exited
// reports whether serve has stopped.
func WaitServing(t testing.TB, errs *Buffer, exited func() bool) (base, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingLine.FindStringSubmatch(errs.String()); m != nil {
			return m[1], m[2]
		}
		if exited() {
			t.Fatalf("serve exited: %s", errs.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never started: %s", errs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// LineValue returns what follows prefix on the line of out that starts
// with it ("token: " in what `herald actor add` prints).
func LineValue(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// WritePNG writes a 16x4 PNG to path, a file to attach.
func WritePNG(t testing.TB, path string) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 16, 4))
	for x := range 16 {
		img.Set(x, 1, color.NRGBA{B: 200, A: 255})
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

package cli

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// What a release build stamps (docs/operating.md, "A release build"):
//
//	-ldflags "-X herald/cli.version=0.2.0 -X herald/cli.commit=$(git rev-parse HEAD) -X herald/cli.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
//
// Without them, the version is the development one and the commit and its
// time come from what the go command recorded of the repository
// (debug.ReadBuildInfo's vcs.revision and vcs.time).
var (
	version = "0.1.0-dev"
	commit  = ""
	date    = ""
)

// build is what the binary knows of how it was built.
type build struct {
	Version  string // the release, or the development version
	Commit   string // the full commit hash, "" if unknown
	Modified bool   // built from a tree with uncommitted changes
	Date     string // RFC 3339: the build date if stamped, else the commit's
	Stamped  bool   // Date is the build date (-X), not the commit's
	Go       string // the Go release and platform
}

// buildInfo reads the stamped variables, then the build info for what
// they leave out.
func buildInfo() build {
	b := build{Version: version, Commit: commit, Date: date, Stamped: date != "",
		Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true" && commit == ""
		}
	}
	return b
}

// versionString is the version the server announces (User-Agent,
// NodeInfo, /metrics, the start line): the version and, when known, the
// first seven digits of the commit.
func versionString() string {
	b := buildInfo()
	if len(b.Commit) >= 7 {
		return b.Version + "+" + b.Commit[:7]
	}
	return b.Version
}

// version is `herald version`.
func (c *cli) version(_ context.Context, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := c.parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = usageError{"version takes no arguments"}
	}
	if err != nil {
		return c.fail(err)
	}
	b := buildInfo()
	fmt.Fprintln(c.stdout, "herald", b.Version)
	rev := b.Commit
	switch {
	case rev == "":
		rev = "unknown (this build recorded none; a release build stamps it)"
	case b.Modified:
		rev += " (with uncommitted changes)"
	}
	fmt.Fprintln(c.stdout, "commit:", rev)
	switch {
	case b.Date == "":
		fmt.Fprintln(c.stdout, "built: unknown")
	case b.Stamped:
		fmt.Fprintln(c.stdout, "built:", b.Date)
	default:
		fmt.Fprintln(c.stdout, "committed:", b.Date)
	}
	fmt.Fprintln(c.stdout, "go:", b.Go)
	return exitOK
}

//go:build !bench

package cli

import (
	"context"
	"errors"
)

// The benchmarks are not in the binary operators run: `go build -tags
// bench` makes one with them (docs/PERFORMANCE.md).

// benchChildren, the bench's child processes, exist only with the bench.
var benchChildren []command

// errNoBench is what `herald bench` says in a build without it.
var errNoBench = errors.New("this herald was built without the benchmarks: build one with go build -tags bench -o herald . (docs/PERFORMANCE.md)")

// benchFanout is `herald bench fanout` in a build without the bench.
func (c *cli) benchFanout(context.Context, []string) int { return c.fail(errNoBench) }

// benchWake is `herald bench wake` in a build without the bench.
func (c *cli) benchWake(context.Context, []string) int { return c.fail(errNoBench) }

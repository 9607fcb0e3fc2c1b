package cli

import (
	"context"

	"herald/jobs"
)

// pin puts a post in its actor's featured collection: herald pin URL
func (c *cli) pin(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindPin, args)
}

// unpin takes a post out of the featured collection: herald unpin URL
func (c *cli) unpin(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindUnpin, args)
}

package cli

import (
	"context"

	"herald/jobs"
)

// deleteObject deletes a published object: herald delete URL
func (c *cli) deleteObject(ctx context.Context, args []string) int {
	return c.objectJob(ctx, jobs.KindDelete, args)
}

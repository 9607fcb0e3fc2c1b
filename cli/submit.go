package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"herald/jobs"
	"herald/node"
	"herald/outbox"
	"herald/store"
)

// noServer says why a job will not run now, or "" when a process that
// runs jobs is there (and, on SQLite, was woken).
func (c *cli) noServer(ctx context.Context, db *store.DB) string {
	if err := db.WakeWorker(ctx, time.Now().Add(-node.StaleAfter)); errors.Is(err, store.ErrNoWorker) {
		return err.Error()
	}
	return ""
}

// jobWait is how long a command waits for the running server to do its
// job before it leaves the job queued and says where to look.
const jobWait = 10 * time.Second

// runJob hands a command to the server: it records the job (which wakes
// the server), waits for the outcome and prints it. With no server running
// on the database the job stays queued for the next start, and the command
// says so. A failed job is the command's failure. actor nil is the
// instance actor (relay add and remove).
func (c *cli) runJob(ctx context.Context, db *store.DB, kind string, actor *store.Actor, args jobs.Args, done func(sent)) error {
	var actorID int64
	if actor != nil {
		actorID = actor.ID
	}
	id, err := jobs.Submit(ctx, db, kind, actorID, args)
	if err != nil {
		return err
	}
	return c.awaitJob(ctx, db, id, done)
}

// awaitJob is runJob's second half, for a job queued already (with what
// it follows from, in one transaction): it waits for the outcome and
// prints it, or says the job stays queued.
func (c *cli) awaitJob(ctx context.Context, db *store.DB, id int64, done func(sent)) error {
	if msg := c.noServer(ctx, db); msg != "" {
		fmt.Fprintf(c.stdout, "queued as job %d: %s (see herald jobs)\n", id, msg)
		return nil
	}
	j, err := jobs.Wait(ctx, db, id, jobWait)
	if err != nil {
		return err
	}
	switch j.State {
	case store.JobDone:
		res, err := jobs.ResultOf(j)
		if err != nil {
			return err
		}
		done(sent{Result: res, Held: heldByPauses(ctx, db, res)})
		return nil
	case store.JobFailed:
		return errors.New(j.Error)
	}
	fmt.Fprintf(c.stdout, "queued as job %d; the server has not finished it yet (see herald jobs)\n", id)
	return nil
}

// sent is what a done job reports, with how many of its deliveries wait
// for hosts an operator paused (herald deliveries pause).
type sent struct {
	jobs.Result
	Held int
}

// heldByPauses counts the deliveries of res's activity that a pause
// holds: none unless a host is paused, the common case, which costs one
// query.
func heldByPauses(ctx context.Context, db *store.DB, res jobs.Result) int {
	if res.Queued == 0 || res.Activity == "" {
		return 0
	}
	if pauses, err := db.Pauses(ctx, db.Now()); err != nil || len(pauses) == 0 {
		return 0
	}
	rep, _, err := outbox.ReportFor(ctx, db, res.Activity)
	if err != nil {
		return 0
	}
	return rep.Counts["paused"]
}

// printSent prints what a publishing job sent.
func (c *cli) printSent(res sent) {
	fmt.Fprintf(c.stdout, "%s %s\n", res.Type, res.Activity)
	if res.Object != "" && res.Type == "Create" {
		fmt.Fprintf(c.stdout, "object: %s\n", res.Object)
	}
	c.printQueued(res)
	for iri, why := range res.Unresolved {
		fmt.Fprintf(c.stderr, "could not reach %s: %s\n", iri, why)
	}
}

// printQueued prints how many inboxes a job's activity was queued for.
func (c *cli) printQueued(res sent) {
	fmt.Fprintf(c.stdout, "queued for %s", plural(res.Queued, "inbox"))
	if res.SkippedBlocked+res.SkippedUnavailable > 0 {
		fmt.Fprintf(c.stdout, " (skipped: %d blocked, %d unavailable)", res.SkippedBlocked, res.SkippedUnavailable)
	}
	switch {
	case res.Queued == 0:
		fmt.Fprintln(c.stdout, ": nobody to send it to yet")
	case res.Held == 0:
		fmt.Fprintln(c.stdout, "; the server is sending them")
	case res.Held >= res.Queued && res.Queued == 1:
		fmt.Fprintln(c.stdout, "; held while its host is paused (herald deliveries lists the pauses)")
	case res.Held >= res.Queued:
		fmt.Fprintln(c.stdout, "; all held while their hosts are paused (herald deliveries lists the pauses)")
	case res.Held == 1:
		fmt.Fprintf(c.stdout, "; the server is sending %d, and 1 waits while its host is paused (herald deliveries lists the pauses)\n", res.Queued-1)
	default:
		fmt.Fprintf(c.stdout, "; the server is sending %d, and %d wait while their hosts are paused (herald deliveries lists the pauses)\n", res.Queued-res.Held, res.Held)
	}
}

// objectJob is a job about one published object (delete, pin, unpin),
// done as the object's author: herald KIND OBJECT_URL.
func (c *cli) objectJob(ctx context.Context, kind string, args []string) int {
	fs := flag.NewFlagSet(kind, flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald "+kind+" OBJECT_URL", func(db *store.DB, pos []string) error {
		o, err := db.ObjectByIRI(ctx, pos[0])
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no object %s on this server", pos[0])
		}
		if err != nil {
			return err
		}
		actor, err := db.ActorByID(ctx, o.ActorID)
		if err != nil {
			return err
		}
		return c.runJob(ctx, db, kind, actor, jobs.Args{Object: o.IRI}, c.printSent)
	})
}

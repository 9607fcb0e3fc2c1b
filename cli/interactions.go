package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"text/tabwriter"

	"herald/jobs"
	"herald/store"
)

// The interactions with local posts that their interaction policy holds
// for the author's approval (FEDERATION.md, "Interaction policies"), as
// an operator sees and decides them: the same requests as the client
// API's /api/v1/interaction_requests and the console's actor page.

// interactions is `herald interactions [NAME]`: the pending requests of
// NAME's posts, or of every actor's, newest first.
func (c *cli) interactions(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("interactions", flag.ContinueOnError)
	usage := "usage: herald interactions [NAME]"
	return c.withDB(ctx, fs, args, -1, usage, func(db *store.DB, pos []string) error {
		var actors []store.Actor
		switch len(pos) {
		case 0:
			all, err := db.ListActors(ctx)
			if err != nil {
				return err
			}
			for _, a := range all {
				actors = append(actors, a.Actor)
			}
		case 1:
			a, err := db.ActorByName(ctx, pos[0])
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no actor named %q", pos[0])
			}
			if err != nil {
				return err
			}
			actors = append(actors, *a)
		default:
			return usageError{usage}
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTOR\tKIND\tFROM\tPOST\tINTERACTION\tSINCE")
		for _, a := range actors {
			list, err := db.InteractionRequests(ctx, a.ID, store.InteractionPending, 500)
			if err != nil {
				return err
			}
			for _, r := range list {
				post := ""
				if o, err := db.ObjectByID(ctx, r.ObjectID); err == nil {
					post = o.IRI
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, a.Name, r.Kind, r.Actor, post, r.Interaction, stamp(r.CreatedAt))
			}
		}
		return tw.Flush()
	})
}

// interactionDecide is `herald interactions approve ID` and `herald
// interactions reject ID`: the post's author decides the request through
// the server (a job: the answer goes to the interacting actor's server).
func interactionDecide(approve bool) func(*cli, context.Context, []string) int {
	return func(c *cli, ctx context.Context, args []string) int {
		word := map[bool]string{true: "approve", false: "reject"}[approve]
		fs := flag.NewFlagSet("interactions "+word, flag.ContinueOnError)
		usage := "usage: herald interactions " + word + " ID"
		return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
			id, err := strconv.ParseInt(pos[0], 10, 64)
			if err != nil || id <= 0 {
				return usageError{fmt.Sprintf("invalid ID %q: the number herald interactions lists", pos[0])}
			}
			r, err := db.InteractionRequestByID(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("no interaction request %d", id)
			}
			if err != nil {
				return err
			}
			if r.State != store.InteractionPending {
				return fmt.Errorf("interaction request %d was %s already", id, r.State)
			}
			o, err := db.ObjectByID(ctx, r.ObjectID)
			if err != nil {
				return err
			}
			actor, err := db.ActorByID(ctx, o.ActorID)
			if err != nil {
				return err
			}
			kind := map[bool]string{true: jobs.KindInteractionApprove, false: jobs.KindInteractionReject}[approve]
			return c.runJob(ctx, db, kind, actor, jobs.Args{Request: id}, func(res sent) {
				fmt.Fprintf(c.stdout, "%s interaction request %d (%s of %s by %s); the %s is queued for %s\n",
					map[bool]string{true: "approved", false: "rejected"}[approve], id, r.Kind, o.IRI, r.Actor, res.Type, r.Actor)
			})
		})
	}
}

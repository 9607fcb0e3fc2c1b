package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"herald/store"
	"herald/webhook"
)

func (c *cli) webhookAdd(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook add", flag.ContinueOnError)
	as := fs.String("as", "", "the local actor whose events the webhook gets")
	events := fs.String("events", store.AllEvents, "the events to send, comma-separated ("+strings.Join(store.EventTypes, ", ")+"), or * for all")
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook add --as NAME URL [--events LIST]", func(db *store.DB, pos []string) error {
		a, err := asActor(ctx, db, *as)
		if err != nil {
			return err
		}
		if err := webhook.CheckURL(pos[0]); err != nil {
			return usageError{"invalid URL " + strconv.Quote(pos[0]) + ": " + err.Error()}
		}
		list, err := webhook.ParseEvents([]string{*events})
		if err != nil {
			return usageError{"invalid --events: " + err.Error()}
		}
		w, secret, err := webhook.Add(ctx, db, a.ID, pos[0], list)
		if errors.Is(err, webhook.ErrTooMany) {
			return fmt.Errorf("%s: %w", a.Name, err)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "webhook %d for %s: %s\nevents: %s\nsecret: %s\n", w.ID, a.Name, w.URL, strings.Join(w.Events, ","), secret)
		fmt.Fprintln(c.stdout, "(the secret is shown only now: the receiver verifies each webhook-signature with it)")
		return nil
	})
}

func (c *cli) webhookList(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook list", flag.ContinueOnError)
	as := fs.String("as", "", "only this actor's webhooks")
	return c.withDB(ctx, fs, args, 0, "usage: herald webhook list [--as NAME]", func(db *store.DB, _ []string) error {
		var actorID int64
		if *as != "" {
			a, err := asActor(ctx, db, *as)
			if err != nil {
				return err
			}
			actorID = a.ID
		}
		list, err := db.Webhooks(ctx, actorID)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tACTOR\tURL\tEVENTS\tSTATE\tQUEUED\tFAILED\tDELIVERED")
		for _, w := range list {
			state := "enabled"
			switch {
			case !w.DisabledAt.IsZero():
				state = "disabled since " + stamp(w.DisabledAt) + " (" + w.DisabledReason + ")"
			case !w.PausedAt.IsZero():
				state = "paused since " + stamp(w.PausedAt)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", w.ID, w.ActorName, w.URL, strings.Join(w.Events, ","), state, w.Queued, w.Failed, w.Done)
		}
		return tw.Flush()
	})
}

// webhookID parses a webhook's id and checks that it exists.
func webhookID(ctx context.Context, db *store.DB, s string) (*store.Webhook, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, usageError{fmt.Sprintf("invalid webhook id %q: want the number `herald webhook list` shows", s)}
	}
	w, err := db.WebhookByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no webhook %d", id)
	}
	return w, err
}

func (c *cli) webhookRemove(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook remove", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook remove ID", func(db *store.DB, pos []string) error {
		w, err := webhookID(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if err := db.RemoveWebhook(ctx, w.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "removed webhook %d (%s), with %s still queued for it\n", w.ID, w.URL, plural(w.Queued, "event"))
		return nil
	})
}

func (c *cli) webhookRetry(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook retry", flag.ContinueOnError)
	delivery := fs.Int64("delivery", 0, "requeue only this delivery (an id `herald webhook deliveries` shows)")
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook retry ID [--delivery N]", func(db *store.DB, pos []string) error {
		w, err := webhookID(ctx, db, pos[0])
		if err != nil {
			return err
		}
		n, err := db.RequeueWebhook(ctx, w.ID, *delivery)
		if err != nil {
			return err
		}
		if !w.DisabledAt.IsZero() {
			fmt.Fprintf(c.stdout, "webhook %d enabled again\n", w.ID)
		}
		fmt.Fprintf(c.stdout, "requeued %s to %s; a running server sends them now\n", plural(n, "failed delivery"), w.URL)
		return nil
	})
}

func (c *cli) webhookDeliveries(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook deliveries", flag.ContinueOnError)
	failed := fs.Bool("failed", false, "only the deliveries Herald gave up on")
	n := fs.Int("n", 20, "how many, newest first")
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook deliveries ID [--failed] [-n N]", func(db *store.DB, pos []string) error {
		if *n < 1 {
			return usageError{fmt.Sprintf("invalid -n %d: want a count of at least 1", *n)}
		}
		w, err := webhookID(ctx, db, pos[0])
		if err != nil {
			return err
		}
		state := ""
		if *failed {
			state = store.DeliveryFailed
		}
		list, err := db.WebhookDeliveries(ctx, w.ID, state, *n)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tEVENT\tTYPE\tSTATE\tATTEMPTS\tUPDATED\tLAST ERROR")
		for _, d := range list {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", d.ID, d.MsgID, d.Type, d.State, d.Attempts, stamp(d.UpdatedAt), d.LastError)
		}
		return tw.Flush()
	})
}

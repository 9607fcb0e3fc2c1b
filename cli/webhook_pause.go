package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"herald/store"
)

// webhookPause holds a webhook's deliveries: herald webhook pause ID. Its
// events are still queued; none is sent, or spends a retry, until
// `herald webhook resume`.
func (c *cli) webhookPause(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook pause", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook pause ID", func(db *store.DB, pos []string) error {
		w, err := webhookID(ctx, db, pos[0])
		if err != nil {
			return err
		}
		if err := db.PauseWebhook(ctx, w.ID); err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "webhook %d (%s) paused: its events are held until herald webhook resume %d\n", w.ID, w.URL, w.ID)
		return nil
	})
}

// webhookResume lets a paused webhook's deliveries go: herald webhook
// resume ID.
func (c *cli) webhookResume(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("webhook resume", flag.ContinueOnError)
	return c.withDB(ctx, fs, args, 1, "usage: herald webhook resume ID", func(db *store.DB, pos []string) error {
		w, err := webhookID(ctx, db, pos[0])
		if err != nil {
			return err
		}
		n, err := db.ResumeWebhook(ctx, w.ID)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("webhook %d is not paused", w.ID)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "webhook %d resumed; %s queued for it (a running server sends them now)\n", w.ID, plural(n, "event"))
		return nil
	})
}

package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"herald/federation"
	"herald/store"
)

// relayAdd subscribes the instance actor to the relay at args.Target
// (herald relay add): the subscription, pending, and the Follow are
// committed together with the job.
func (r *Runner) relayAdd(ctx context.Context, j *store.Job, args Args) error {
	inst := r.Publisher.Instance
	u, err := url.Parse(args.Target)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an http(s) URL", args.Target)
	}
	if u.Scheme == "http" && inst.Scheme == "https" {
		return fmt.Errorf("%s: relays are reached over https", args.Target)
	}
	p, err := r.Policy.Get(ctx)
	if err != nil {
		return fmt.Errorf("federation policy: %w", err)
	}
	if v := p.URL(args.Target); v.Refused() {
		return fmt.Errorf("%s is refused by the federation policy: %s", u.Host, v.Reason())
	}
	style, inbox, actor, err := r.detectRelay(ctx, args.Target, args.Style)
	if err != nil {
		return err
	}
	now := r.Now()
	rel := &store.Relay{URL: args.Target, Style: style, Inbox: inbox, Actor: actor, FollowID: inst.NewID("", "activities", now)}
	err = r.DB.Write(ctx, func(tx *store.Tx) error {
		if err := tx.AddRelay(ctx, rel, now); errors.Is(err, store.ErrExists) {
			return fmt.Errorf("already subscribed to %s (see herald relay list)", args.Target)
		} else if err != nil {
			return err
		}
		id, q, err := r.Publisher.FollowRelay(ctx, tx, rel, now)
		if err != nil {
			return err
		}
		return r.finish(ctx, tx, j, Result{Type: "Follow", Activity: id, Object: rel.Inbox,
			Queued: q.Queued, SkippedBlocked: q.SkippedBlocked, SkippedUnavailable: q.SkippedUnavailable})
	})
	if err != nil {
		return err
	}
	r.Publisher.Runner.Wake()
	return nil
}

// detectRelay works out how to subscribe to the relay at target (FEP-ae0c):
// a URL that serves an actor document is a LitePub relay's actor (Pleroma's
// /relay, AodeRelay's /actor), followed through its inbox; a URL that the
// relay answers with anything else is a Mastodon-style relay's inbox (the
// relays tell Mastodon admins to give https://relay.example/inbox and
// Pleroma admins .../actor). style, when given, decides instead: mastodon
// sends the Follow of as:Public to the inbox of an actor URL too; litepub
// needs an actor. It returns the style, the inbox and the relay's actor (""
// for a Mastodon-style relay until it answers).
func (r *Runner) detectRelay(ctx context.Context, target, style string) (string, string, string, error) {
	a, err := r.Publisher.Fetcher.RefreshActor(ctx, target)
	switch {
	case err == nil && style == store.RelayMastodon:
		return store.RelayMastodon, a.Inbox, a.ID, nil
	case err == nil:
		return store.RelayLitePub, a.Inbox, a.ID, nil
	case style == store.RelayLitePub:
		return "", "", "", fmt.Errorf("%s is not an actor (%v): a LitePub relay is subscribed to by its actor's URL", target, err)
	case federation.IsForbiddenAddress(err):
		// Waiting or another style would not help: the guard refuses the
		// address each time, and relays are public servers.
		return "", "", "", fmt.Errorf("%s is at a loopback or private address, which Herald does not reach: a relay must be a public server", target)
	case style == store.RelayMastodon || answeredOtherwise(err):
		return store.RelayMastodon, target, "", nil
	}
	return "", "", "", fmt.Errorf("could not reach %s: %w (try again, or say --style mastodon)", target, err)
}

// answeredOtherwise reports whether a fetch failed because the server
// answered with something other than an actor (a status, another document),
// as a relay's inbox does, rather than not answering.
func answeredOtherwise(err error) bool {
	var status *federation.StatusError
	return errors.As(err, &status) || errors.Is(err, federation.ErrNotActor) || errors.Is(err, federation.ErrInvalidActor) ||
		errors.Is(err, federation.ErrContentType) || errors.Is(err, federation.ErrIDMismatch)
}

// relayRemove ends the subscription to the relay at args.Target (herald
// relay remove): the Undo of the Follow, unless the relay rejected it, is
// committed with the removal and the job.
func (r *Runner) relayRemove(ctx context.Context, j *store.Job, args Args) error {
	rel, err := r.DB.RelayByURL(ctx, args.Target)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("not subscribed to %s (see herald relay list)", args.Target)
	}
	if err != nil {
		return err
	}
	now := r.Now()
	err = r.DB.Write(ctx, func(tx *store.Tx) error {
		if err := tx.RemoveRelay(ctx, rel.ID); err != nil {
			return err
		}
		res := Result{Type: "none", Object: rel.Inbox}
		if rel.State != store.RelayRejected {
			id, q, err := r.Publisher.UnfollowRelay(ctx, tx, rel, now)
			if err != nil {
				return err
			}
			res = Result{Type: "Undo", Activity: id, Object: rel.Inbox,
				Queued: q.Queued, SkippedBlocked: q.SkippedBlocked, SkippedUnavailable: q.SkippedUnavailable}
		}
		return r.finish(ctx, tx, j, res)
	})
	if err != nil {
		return err
	}
	r.Publisher.Runner.Wake()
	return nil
}

package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"herald/federation"
	"herald/store"
)

// Audience is who an activity is delivered to.
type Audience struct {
	// FollowersOf is the local actor (row id) whose accepted followers
	// receive the activity; 0 for none. Each follower is reached through
	// its shared inbox when it has one, so a host with a thousand followers
	// gets one delivery.
	FollowersOf int64
	// Inboxes are explicit recipients' inboxes, already resolved (see
	// ResolveInboxes).
	Inboxes []string
	// Relays adds the inbox of every accepted relay (FEP-ae0c): a public
	// post reaches each as one more inbox.
	Relays bool
}

// Enqueue stores the activity once with one delivery row per distinct inbox
// of its audience, inside tx. bto and bcc are removed from the body first:
// they name recipients that recipients must not see. Inboxes the
// federation policy refuses for good (blocked by the operator or by the
// sender, unavailable) get a failed row saying why (and are counted); held
// ones are queued for the runner to hold. Call Wake after the transaction
// commits.
func (r *Runner) Enqueue(ctx context.Context, tx *store.Tx, a store.OutActivity, aud Audience, now time.Time) (store.EnqueueResult, error) {
	body, err := StripBlindRecipients(a.Body)
	if err != nil {
		return store.EnqueueResult{}, err
	}
	a.Body = body
	// Deliveries to the sender's followers tell each server which of them
	// we think live there (FEP-8fcf); the digest is read at each attempt,
	// so a retry carries the current one.
	a.SyncFollowers = aud.FollowersOf != 0 && aud.FollowersOf == a.ActorID
	inboxes, skip, blocked, unavailable, err := r.audienceInboxes(ctx, tx, a, aud, now)
	if err != nil {
		return store.EnqueueResult{}, err
	}
	res, err := tx.EnqueueActivity(ctx, a, inboxes, now)
	if err != nil {
		return res, err
	}
	for why, list := range skip {
		if err := tx.SkipInboxes(ctx, res.ActivityID, a.Lane, list, why, now); err != nil {
			return res, err
		}
	}
	res.SkippedBlocked, res.SkippedUnavailable = blocked, unavailable
	m := r.cfg.Metrics
	m.total.WithLabelValues("skipped_blocked").Add(float64(res.SkippedBlocked))
	m.total.WithLabelValues("skipped_unavailable").Add(float64(res.SkippedUnavailable))
	return res, nil
}

// audienceInboxes lists the distinct inboxes of aud (explicit ones, the
// followers' and the relays') and judges each by the federation policy as
// this process knows it (within a second of any change): inboxes are the
// ones to queue (the runner judges them again when each is due); skip holds,
// by reason, those refused for good, and blocked and unavailable count them.
// Enqueue and EnqueueMore share it so the two cannot drift apart.
func (r *Runner) audienceInboxes(ctx context.Context, tx *store.Tx, a store.OutActivity, aud Audience, now time.Time) (inboxes []string, skip map[string][]string, blocked, unavailable int, err error) {
	inboxes = append([]string(nil), aud.Inboxes...)
	if aud.FollowersOf != 0 {
		f, err := tx.FollowerInboxes(ctx, aud.FollowersOf)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		inboxes = append(inboxes, f...)
	}
	if aud.Relays {
		rl, err := tx.RelayInboxes(ctx)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		inboxes = append(inboxes, rl...)
	}
	p, err := r.cfg.Policy.GetIn(ctx, tx)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("federation policy: %w", err)
	}
	return judgeInboxes(p, a, dedupe(inboxes), now)
}

func dedupe(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := ss[:0]
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// StripBlindRecipients removes bto and bcc from an activity and from its
// embedded object. A body without them is returned unchanged.
func StripBlindRecipients(body []byte) ([]byte, error) {
	if !bytes.Contains(body, []byte(`"bto"`)) && !bytes.Contains(body, []byte(`"bcc"`)) {
		return body, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	delete(doc, "bto")
	delete(doc, "bcc")
	if obj, ok := doc["object"].(map[string]any); ok {
		delete(obj, "bto")
		delete(obj, "bcc")
	}
	return json.Marshal(doc)
}

// ResolveInboxes turns explicit recipients (actor ids) into inboxes through
// the actor cache, fetching the ones it lacks. Call it before opening the
// enqueuing transaction: it may use the network. Recipients that cannot be
// resolved (gone, blocked, unreachable) are returned in failed.
func ResolveInboxes(ctx context.Context, f *federation.Fetcher, actorIDs []string) (inboxes []string, failed map[string]error) {
	failed = map[string]error{}
	for _, id := range dedupe(append([]string(nil), actorIDs...)) {
		a, err := f.Actor(ctx, id)
		if err != nil {
			failed[id] = err
			continue
		}
		if a.SharedInbox != "" {
			inboxes = append(inboxes, a.SharedInbox)
		} else if a.Inbox != "" {
			inboxes = append(inboxes, a.Inbox)
		} else {
			failed[id] = errors.New("actor has no inbox")
		}
	}
	return inboxes, failed
}

package delivery

import (
	"context"
	"errors"
	"time"

	"herald/host"
	"herald/policy"
	"herald/store"
)

// holdRetry is how soon a delivery held by the policy (allowlist mode, its
// host not on the list) is looked at again if the policy does not change
// meanwhile; a change makes every held delivery due at once
// (releaseHeld).
const holdRetry = time.Hour

// judge asks the federation policy about a claimed delivery, as it stands
// now (another process may have changed it since the row was queued). It
// returns the row's result and true if the policy decided it: failed for a
// rule that does not change by itself (a block, an actor's block, an
// unavailable host), held for one the operator is expected to change (a
// pause, an allowlist without the host), each saying which rule it was.
func (r *Runner) judge(ctx context.Context, c store.Claimed, now time.Time) (store.DeliveryResult, bool) {
	m := r.cfg.Metrics
	p, err := r.cfg.Policy.Get(ctx)
	if err != nil {
		// No policy could be read: nothing goes out, nothing is lost.
		m.delivery("held_policy")
		return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryQueued, Attempts: c.Attempts,
			NextAt: now.Add(time.Minute), Error: "held: the federation policy cannot be read"}, true
	}
	var actorID int64
	judge := p.Delivery
	if act, err := r.bodies.get(ctx, c.ActivityID); err == nil && act.typ != "Reject" {
		// A Reject goes to a host the actor blocks: it is how that host
		// learns that its Follow is refused.
		actorID = act.actorID
		if act.announces {
			judge = p.AnnouncementDelivery
			if stale, err := r.staleSuspensionUpdate(ctx, act); err != nil {
				return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryQueued, Attempts: c.Attempts,
					NextAt: now.Add(time.Minute), Error: "held: the suspension cannot be read"}, true
			} else if stale {
				m.delivery("skipped_stale")
				return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryFailed, Attempts: c.Attempts, NextAt: now,
					Error: "skipped: the suspension it announces was lifted"}, true
			}
		}
	}
	a, err := host.ParseAuthority(c.Host)
	if err != nil {
		a = host.Authority{} // judged invalid below
	}
	v := judge(actorID, a, now)
	switch {
	case !v.Refused():
		return store.DeliveryResult{}, false
	case v.Rule == policy.RulePaused:
		// Paused after this row was claimed: back to the queue as it was,
		// where claims pass over it until the pause ends.
		m.delivery("held_paused")
		return r.release(c), true
	case v.Held() && now.Sub(time.UnixMilli(c.EnqueuedAt)) < policy.MaxHold:
		m.delivery("held_" + string(v.Rule))
		return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryQueued, Attempts: c.Attempts,
			NextAt: now.Add(holdRetry), Error: store.HeldPrefix + v.Reason()}, true
	case v.Held():
		m.delivery("skipped_" + string(v.Rule))
		return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryFailed, Attempts: c.Attempts, NextAt: now,
			Error: "skipped: " + v.Reason() + ", held for " + policy.MaxHold.String()}, true
	case v.Rule == policy.RuleUnavailable:
		m.delivery("skipped_unavailable")
	default:
		m.delivery("skipped_blocked")
	}
	return store.DeliveryResult{ID: c.ID, Host: c.Host, Inbox: c.Inbox, State: store.DeliveryFailed, Attempts: c.Attempts, NextAt: now,
		Error: "skipped: " + v.Reason()}, true
}

// releaseHeld makes every delivery the policy held due now, once the
// policy changed: what it held may go now (a host was allowed), and what
// it still holds is held again at its next claim.
func (r *Runner) releaseHeld(old, cur *policy.Policy) {
	if old.Mode() != policy.ModeAllowlist && cur.Mode() != policy.ModeAllowlist {
		return
	}
	n, err := r.cfg.DB.ReleaseHeldDeliveries(context.Background(), r.cfg.Now())
	if err != nil {
		r.cfg.Logger.Error("delivery: release held deliveries", "err", err)
		return
	}
	if n > 0 {
		r.cfg.Logger.Info("delivery: the federation policy changed; held deliveries are due again", "deliveries", n)
		r.Wake()
	}
}

// judgeInboxes splits the inboxes of an activity about to be queued into
// those to queue and those the policy refuses for good now (by reason),
// counting the blocked and the unavailable. Held ones (allowlist mode, a
// pause) are queued: the runner holds them, and they go once the policy
// lets them.
func judgeInboxes(p *policy.Policy, a store.OutActivity, inboxes []string, now time.Time) (keep []string, skip map[string][]string, blocked, unavailable int, err error) {
	actorID := a.ActorID
	if a.Type == "Reject" {
		actorID = 0
	}
	skip = map[string][]string{}
	verdicts := map[host.Authority]policy.Verdict{}
	for _, inbox := range inboxes {
		au, err := host.OfURL(inbox)
		if err != nil {
			return nil, nil, 0, 0, err
		}
		v, ok := verdicts[au]
		if !ok {
			v = p.Delivery(actorID, au, now)
			verdicts[au] = v
		}
		switch {
		case !v.Refused() || v.Held():
			keep = append(keep, inbox)
			continue
		case v.Rule == policy.RuleUnavailable:
			unavailable++
		default:
			blocked++
		}
		why := "skipped: " + v.Reason()
		skip[why] = append(skip[why], inbox)
	}
	return keep, skip, blocked, unavailable, nil
}

// staleSuspensionUpdate says whether act is the Update announcing a
// suspension that has been lifted since (or ended in the deletion): sent
// late, after the lifting's Update (a retry to a server that was down),
// it would have the server take the actor for suspended again. The
// suspension is read from the database, not from the policy, which may
// not know yet of a suspension just made.
func (r *Runner) staleSuspensionUpdate(ctx context.Context, act activityBody) (bool, error) {
	if act.typ != "Update" {
		return false, nil
	}
	_, err := r.cfg.DB.ActorSuspensionOf(ctx, act.actorID)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	return false, err
}

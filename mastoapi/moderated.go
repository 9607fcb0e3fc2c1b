package mastoapi

import (
	"context"

	"herald/policy"
	"herald/store"
)

// moderated leaves out of rows what the operator's moderation
// (policy/moderation.go) keeps from apps: everywhere, the statuses of a
// suspended local actor, a suspended remote account and an account of a
// blocked (suspended) domain, and boosts by them; in the public and hashtag
// timelines (public) also those of a limited (silenced) account or domain,
// as Mastodon keeps silenced accounts out of its public feeds. What arrived
// before the operator acted is hidden too. Without a Policy (tests of the
// API alone) nothing is left out.
func (h *Handler) moderated(ctx context.Context, rows []*store.Status, public bool) ([]*store.Status, error) {
	if h.Policy == nil || len(rows) == 0 {
		return rows, nil
	}
	p, err := h.Policy.Get(ctx)
	if err != nil {
		return nil, err
	}
	out := rows[:0:0]
	for _, s := range rows {
		if !hiddenBy(p, s, public) {
			out = append(out, s)
		}
	}
	return out, nil
}

// hiddenBy reports whether the policy p hides s.
func hiddenBy(p *policy.Policy, s *store.Status, public bool) bool {
	if s.LocalActorID != 0 {
		return p.ActorSuspended(s.LocalActorID)
	}
	return p.Suspended(s.Author) || p.URL(s.Author).Rule == policy.RuleBlocked || (public && p.Moderate(s.Author).Limited)
}

package outbox

import (
	"herald/federation/as"
	"herald/store"
)

// postPolicy sets the interactionPolicy of a new local post obj by actor,
// addressed already: the defaults of its visibility (DefaultPolicy), with
// each sub-policy the client gave instead of the default, and always the
// author and, for canReply, the mentioned accounts (complete). A bad
// policy is an *InputError.
func (p *Publisher) postPolicy(actor *store.Actor, obj *as.Object) error {
	author := p.Instance.ActorID(actor.Name)
	followers := p.Instance.FollowersURL(actor.Name)
	visibility := Visibility(obj, followers)
	mentions := mentioned(obj)
	policy := DefaultPolicy(visibility, author, followers, mentions)
	if raw := obj.Get("interactionPolicy"); raw != nil && string(raw) != "null" {
		given, err := ParsePolicy(raw)
		if err != nil {
			return err
		}
		for k, r := range given {
			if k == CanQuote && (visibility == "private" || visibility == "direct") {
				// Mastodon lets nobody but the author quote a
				// followers-only or direct post, whatever the author
				// asked (Status#quote_policy_for_account).
				continue
			}
			policy[k] = r
		}
		policy = complete(policy, author, mentions)
	}
	return obj.Set("interactionPolicy", policy.JSON())
}

package outbox

import (
	"encoding/json"

	"herald/federation/as"
	"herald/store"
)

// postPolicy sets the interactionPolicy of a local post obj by actor,
// addressed already: the defaults of its visibility (DefaultPolicy), with
// each sub-policy the post stated before (earlier, for an Update; nil for
// a new post) and then each the client gave instead, and always the
// author and, for canReply, the mentioned accounts (complete). A bad
// policy is an *InputError.
func (p *Publisher) postPolicy(actor *store.Actor, obj *as.Object, earlier json.RawMessage) error {
	author := p.Instance.ActorID(actor.Name)
	followers := p.Instance.FollowersURL(actor.Name)
	visibility := Visibility(obj, followers)
	mentions := mentioned(obj)
	policy := DefaultPolicy(visibility, author, followers, mentions)
	var stated map[string]json.RawMessage
	if json.Unmarshal(earlier, &stated) == nil {
		for k, raw := range stated {
			if r, present, err := parseRule(raw, false); err == nil && present {
				policy[k] = r
			}
		}
	}
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

// updatePolicy applies the interactionPolicy of an Update's patch to the
// post obj: the sub-policies it gives change, the others stay as they
// were. A patch without one changes nothing.
func (p *Publisher) updatePolicy(actor *store.Actor, obj, patch *as.Object) error {
	raw := patch.Get("interactionPolicy")
	if raw == nil {
		return nil
	}
	earlier := obj.Get("interactionPolicy")
	if err := obj.Set("interactionPolicy", raw); err != nil {
		return err
	}
	return p.postPolicy(actor, obj, earlier)
}

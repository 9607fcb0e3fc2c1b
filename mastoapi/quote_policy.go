package mastoapi

import (
	"herald/federation"
	"herald/federation/as"
)

// quotePolicy reads POST /api/v1/statuses' quote_approval_policy
// (Mastodon 4.5, app/controllers/concerns/api/interaction_policies_concern.rb):
// public, followers or nobody; none leaves the outbox's default (anyone
// may quote a public or unlisted post), anything else is a 422. It puts
// the canQuote sub-policy it means on the post, in the interactionPolicy
// the outbox completes; Mastodon's serializer names the followers
// collection, or only the author for nobody.
func (h *Handler) quotePolicy(c *Call, obj *as.Object) error {
	var approved []string
	switch c.Params.Get("quote_approval_policy") {
	case "":
		return nil
	case "public":
		approved = []string{federation.Public}
	case "followers":
		approved = []string{h.Instance.FollowersURL(c.Actor.Name)}
	case "nobody":
		approved = []string{h.Instance.ActorID(c.Actor.Name)}
	default:
		return invalid("Quote approval policy is not one of public, followers, nobody")
	}
	return obj.Set("interactionPolicy", map[string]any{"canQuote": map[string]any{"automaticApproval": approved}})
}

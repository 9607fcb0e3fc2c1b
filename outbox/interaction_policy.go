package outbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"

	"herald/federation"
	"herald/federation/as"
)

// Interaction policies, as GoToSocial states them on its posts
// (superseriousbusiness/gotosocial docs/federation/interaction_policy.md,
// v0.19 and later: automaticApproval and manualApproval; the older always
// and approvalRequired are read too) and Mastodon 4.5 its canQuote
// (app/serializers/activitypub/note_serializer.rb, interaction_policy).
// Herald states all four sub-policies on every new post, which tells
// peers it enforces them (the document's "Indicating that verification
// is required").

// The sub-policies of an interactionPolicy.
const (
	CanLike     = "canLike"
	CanReply    = "canReply"
	CanAnnounce = "canAnnounce"
	CanQuote    = "canQuote"
)

// policyKinds are the sub-policies Herald states, in order.
var policyKinds = []string{CanLike, CanReply, CanAnnounce, CanQuote}

// Rule is one sub-policy: who is approved at once, and who may ask.
type Rule struct {
	Automatic []string
	Manual    []string
}

// Policy is an object's interactionPolicy, by sub-policy.
type Policy map[string]Rule

// Approval is what a policy says of one interaction.
type Approval int

// The three answers a policy gives.
const (
	Denied    Approval = iota // not allowed at all
	Manual                    // allowed if the author approves it
	Automatic                 // allowed
)

// String names an approval as Mastodon's API does (automatic, manual,
// denied).
func (a Approval) String() string {
	return [...]string{"denied", "manual", "automatic"}[a]
}

// policyContext defines the interactionPolicy terms (GoToSocial's
// https://gotosocial.org/ns, whose document Herald never fetches, and
// Mastodon's interaction_policies context extension).
var policyContext = map[string]any{
	"gts":               "https://gotosocial.org/ns#",
	"interactionPolicy": map[string]any{"@id": "gts:interactionPolicy", "@type": "@id"},
	"canLike":           map[string]any{"@id": "gts:canLike", "@type": "@id"},
	"canReply":          map[string]any{"@id": "gts:canReply", "@type": "@id"},
	"canAnnounce":       map[string]any{"@id": "gts:canAnnounce", "@type": "@id"},
	"canQuote":          map[string]any{"@id": "gts:canQuote", "@type": "@id"},
	"automaticApproval": map[string]any{"@id": "gts:automaticApproval", "@type": "@id"},
	"manualApproval":    map[string]any{"@id": "gts:manualApproval", "@type": "@id"},
	"approvedBy":        map[string]any{"@id": "gts:approvedBy", "@type": "@id"},
}

// Visibility is a post's audience as the client API names it: public,
// unlisted, private (followers only) or direct, read from its addressing.
func Visibility(obj *as.Object, followers string) string {
	switch {
	case obj.To.HasPublic():
		return "public"
	case obj.CC.HasPublic():
		return "unlisted"
	case slices.Contains(obj.To.IDs(), followers) || slices.Contains(obj.CC.IDs(), followers):
		return "private"
	}
	return "direct"
}

// DefaultPolicy is the policy of a new local post of visibility by author
// (whose followers collection is followers) mentioning mentioned, as
// GoToSocial's defaults are (internal/gtsmodel/interaction.go,
// DefaultInteractionPolicyPublic, ...FollowersOnly, ...Direct) with
// Mastodon's canQuote: anyone may like, reply to, boost and quote a public
// or unlisted post; only the followers and the mentioned may like or
// reply to a followers-only one, only the mentioned a direct one; nobody but the
// author may boost or quote either.
func DefaultPolicy(visibility, author, followers string, mentioned []string) Policy {
	public := []string{federation.Public}
	switch visibility {
	case "public", "unlisted":
		return complete(Policy{CanLike: {Automatic: public}, CanReply: {Automatic: public},
			CanAnnounce: {Automatic: public}, CanQuote: {Automatic: public}}, author, mentioned)
	case "private":
		// GoToSocial's DefaultCanLikeFor(VisibilityFollowersOnly):
		// the author, the followers and the mentioned.
		likers := append([]string{followers}, mentioned...)
		return complete(Policy{CanLike: {Automatic: likers}, CanReply: {Automatic: []string{followers}}}, author, mentioned)
	}
	return complete(Policy{CanLike: {Automatic: slices.Clone(mentioned)}}, author, mentioned)
}

// complete adds what GoToSocial always assumes ("Implicit Assumptions"):
// the author may do anything with its own post, and a mentioned account
// may always reply, unless the public covers them already. A sub-policy
// left out gets the author alone.
func complete(p Policy, author string, mentioned []string) Policy {
	for _, k := range policyKinds {
		r := p[k]
		r.Automatic = withIRIs(r.Automatic, author)
		if k == CanReply {
			r.Automatic = withIRIs(r.Automatic, mentioned...)
		}
		if r.Manual == nil {
			r.Manual = []string{}
		}
		p[k] = r
	}
	return p
}

// withIRIs adds iris to list unless the list has the public in it.
func withIRIs(list []string, iris ...string) []string {
	if list == nil {
		list = []string{}
	}
	if slices.ContainsFunc(list, as.IsPublic) {
		return list
	}
	for _, iri := range iris {
		if iri != "" && !slices.Contains(list, iri) {
			list = append(list, iri)
		}
	}
	return list
}

// JSON is the policy as it goes on the wire: each sub-policy with both
// lists, as Mastodon writes them.
func (p Policy) JSON() map[string]any {
	out := map[string]any{}
	for k, r := range p {
		out[k] = map[string]any{"automaticApproval": nonNil(r.Automatic), "manualApproval": nonNil(r.Manual)}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParsePolicy reads an interactionPolicy a client submitted: an object of
// the four sub-policies, each null, {} or an object with
// automaticApproval and manualApproval (or the older always and
// approvalRequired), each an IRI or a list of them. Only the sub-policies
// given are returned. A bad shape is an *InputError saying what is wrong.
func ParsePolicy(raw json.RawMessage) (Policy, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return nil, inputErr("interactionPolicy must be an object of canLike, canReply, canAnnounce and canQuote")
	}
	p := Policy{}
	for _, k := range sortedKeys(top) {
		if !slices.Contains(policyKinds, k) {
			return nil, inputErr("interactionPolicy: unknown sub-policy %q (canLike, canReply, canAnnounce, canQuote)", k)
		}
		r, present, err := parseRule(top[k], true)
		if err != nil {
			return nil, inputErr("interactionPolicy.%s: %v", k, err)
		}
		if present {
			p[k] = r
		}
	}
	return p, nil
}

// ReadPolicy reads the interactionPolicy of a peer's object, leniently:
// nil when it states none (null or {} too), which means every
// interaction is allowed; otherwise each sub-policy it gives, and for
// those it leaves out (or gets wrong) GoToSocial's defaults: anyone may
// like, reply and boost, nobody but the author may quote.
func ReadPolicy(obj *as.Object) Policy {
	raw := obj.Get("interactionPolicy")
	var top map[string]json.RawMessage
	if raw == nil || json.Unmarshal(raw, &top) != nil || len(top) == 0 {
		return nil
	}
	author := obj.AttributedTo.First()
	p := Policy{}
	for _, k := range policyKinds {
		r, present, err := parseRule(top[k], false)
		if err != nil || !present {
			r = Rule{Automatic: []string{federation.Public}}
			if k == CanQuote {
				r = Rule{Automatic: []string{author}}
			}
		}
		p[k] = r
	}
	return p
}

// ruleKeys are the properties of a sub-policy: the new name first, then
// the one GoToSocial before v0.20 used.
var ruleKeys = [][2]string{{"automaticApproval", "always"}, {"manualApproval", "approvalRequired"}}

// parseRule reads one sub-policy; present is false for a missing, null or
// empty one. strict refuses properties it does not know.
func parseRule(raw json.RawMessage, strict bool) (r Rule, present bool, err error) {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return r, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return r, false, fmt.Errorf("must be an object with automaticApproval and manualApproval")
	}
	if len(m) == 0 {
		return r, false, nil
	}
	if strict {
		for k := range m {
			if !slices.ContainsFunc(ruleKeys, func(p [2]string) bool { return p[0] == k || p[1] == k }) {
				return r, false, fmt.Errorf("unknown property %q (automaticApproval, manualApproval)", k)
			}
		}
	}
	lists := [2][]string{}
	for i, names := range ruleKeys {
		for _, name := range names {
			if m[name] == nil {
				continue
			}
			iris, err := policyIRIs(m[name])
			if err != nil {
				return r, false, fmt.Errorf("%s: %v", name, err)
			}
			lists[i] = withIRIs(lists[i], iris...)
		}
	}
	return Rule{Automatic: nonNil(lists[0]), Manual: nonNil(lists[1])}, true, nil
}

// policyIRIs reads an IRI or a list of them; the public collection in any of
// its spellings becomes its full IRI.
func policyIRIs(raw json.RawMessage) ([]string, error) {
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("must be an IRI or a list of IRIs")
		}
		list = []string{one}
	}
	out := make([]string, 0, len(list))
	for _, iri := range list {
		if as.IsPublic(iri) {
			out = append(out, federation.Public)
			continue
		}
		if u, err := url.Parse(iri); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http(s) IRI of an actor or collection", iri)
		}
		out = append(out, iri)
	}
	return out, nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Decision is what a policy says of one actor's interaction with a post.
// Collection is true when the approval came from the actor's place in a
// collection (the author's followers or following): a peer then waits for
// an Accept before it distributes the interaction, and the author's
// server sends one at once (GoToSocial's "preapproval").
type Decision struct {
	Approval   Approval
	Collection bool
}

// Decide says whether actor may do the interaction kind with a post by
// author under the policy p (nil: no policy, everything allowed), where
// mentioned are the accounts the post mentions and member reports whether
// actor is in a collection the policy names (nil: it is not known). The
// more specific entry wins: the actor itself before a collection, a
// collection before the public; the same entry in both lists approves
// automatically (interaction_policy.md, "Conflicting / Duplicate
// Values").
func (p Policy) Decide(kind, actor, author string, mentioned []string, member func(collection string) bool) Decision {
	if p == nil || actor == author || (kind == CanReply && slices.Contains(mentioned, actor)) {
		return Decision{Approval: Automatic}
	}
	r, ok := p[kind]
	if !ok {
		return Decision{Approval: Automatic}
	}
	switch {
	case slices.Contains(r.Automatic, actor):
		return Decision{Approval: Automatic}
	case slices.Contains(r.Manual, actor):
		return Decision{Approval: Manual}
	}
	in := func(list []string) bool {
		return member != nil && slices.ContainsFunc(list, func(c string) bool { return !as.IsPublic(c) && c != actor && member(c) })
	}
	switch {
	case in(r.Automatic):
		return Decision{Approval: Automatic, Collection: true}
	case in(r.Manual):
		return Decision{Approval: Manual, Collection: true}
	case slices.ContainsFunc(r.Automatic, as.IsPublic):
		return Decision{Approval: Automatic}
	case slices.ContainsFunc(r.Manual, as.IsPublic):
		return Decision{Approval: Manual}
	}
	return Decision{Approval: Denied}
}

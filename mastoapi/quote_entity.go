package mastoapi

import (
	"herald/federation"
	"herald/store"
)

// Quote is Mastodon 4.5's Quote entity (REST::QuoteSerializer): the state
// of a status's quote and, once accepted, the quoted status (whose own
// quote is shallow).
type Quote struct {
	State        string  `json:"state"`
	QuotedStatus *Status `json:"quoted_status"`
}

// ShallowQuote is the quote of a quoted status
// (REST::ShallowQuoteSerializer): its state and the quoted status's id.
type ShallowQuote struct {
	State          string  `json:"state"`
	QuotedStatusID *string `json:"quoted_status_id"`
}

// QuoteApproval is Mastodon 4.5's QuoteApproval entity: who may quote a
// status (automatic and manual: public, followers, following,
// unsupported_policy) and how that applies to the viewer (automatic,
// manual, denied, unknown).
type QuoteApproval struct {
	Automatic   []string `json:"automatic"`
	Manual      []string `json:"manual"`
	CurrentUser string   `json:"current_user"`
}

// quoteApproval reads a status's interactionPolicy.canQuote (obj, its
// body) as the viewer sees it, as Mastodon's quote_approval does
// (app/models/concerns/status/interaction_policy_concern.rb): the
// author may quote itself; a remote post that states no policy is
// unknown; the viewer is then automatic or manual where the policy names
// the public, the author's followers among whom the viewer is, or the
// viewer itself; else denied. A private or direct post is quoted by
// nobody but its author; a caller not logged in may quote nothing.
func (r *renderer) quoteApproval(s *store.Status, obj map[string]any) *QuoteApproval {
	policy, _ := obj["interactionPolicy"].(map[string]any)
	canQuote, _ := policy["canQuote"].(map[string]any)
	qa := &QuoteApproval{Automatic: []string{}, Manual: []string{}}
	followers := s.Author + "/followers"
	if s.LocalActorID != 0 {
		if name, ok := r.h.Instance.LocalName(s.Author); ok {
			followers = r.h.Instance.FollowersURL(name)
		}
	}
	var viewerIn [2]bool
	for i, key := range []string{"automaticApproval", "manualApproval"} {
		into := &qa.Automatic
		if i == 1 {
			into = &qa.Manual
		}
		for _, who := range stringList(canQuote[key]) {
			switch {
			case federation.IsPublic(who):
				*into = appendOnce(*into, "public")
				viewerIn[i] = true
			case who == followers:
				*into = appendOnce(*into, "followers")
				viewerIn[i] = viewerIn[i] || r.viewerFollows(s.Author)
			case who == s.Author:
			case who == r.viewerIRI && r.viewerIRI != "":
				viewerIn[i] = true
			default:
				*into = appendOnce(*into, "unsupported_policy")
			}
		}
	}
	switch {
	case r.viewer == nil:
		qa.CurrentUser = "denied" // nobody logged in quotes anything
	case s.Visibility == "private" || s.Visibility == "direct":
		qa.Automatic, qa.Manual = []string{}, []string{}
		qa.CurrentUser = "denied"
		if r.viewerIRI == s.Author {
			qa.CurrentUser = "automatic"
		}
	case r.viewerIRI != "" && r.viewerIRI == s.Author:
		qa.CurrentUser = "automatic"
	case canQuote == nil && s.LocalActorID == 0:
		qa.CurrentUser = "unknown"
	case viewerIn[0]:
		qa.CurrentUser = "automatic"
	case viewerIn[1]:
		qa.CurrentUser = "manual"
	default:
		qa.CurrentUser = "denied"
	}
	return qa
}

// viewerFollows reports whether the viewer follows an account.
func (r *renderer) viewerFollows(account string) bool {
	if r.viewer == nil {
		return false
	}
	rels, err := r.h.DB.Relations(r.ctx, r.viewer.ID, []string{account})
	return err == nil && rels[account].Following
}

// stringList reads a JSON string or list of strings.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func appendOnce(list []string, s string) []string {
	for _, e := range list {
		if e == s {
			return list
		}
	}
	return append(list, s)
}

package outbox

import (
	"context"
	"errors"

	"herald/federation"
	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
)

// addressFields are the ActivityStreams audience properties.
var addressFields = []string{"to", "cc", "bto", "bcc", "audience"}

// audienceField is the field of an audience property.
func audienceField(o *as.Object, f string) *as.Refs {
	switch f {
	case "to":
		return &o.To
	case "cc":
		return &o.CC
	case "bto":
		return &o.BTo
	case "bcc":
		return &o.BCC
	}
	return &o.Audience
}

// addressing is an activity's audience, merged from the activity and its
// object.
type addressing map[string][]string

// readAddressing merges the audience properties of the given documents.
// present reports whether any of them had one at all (even empty).
func readAddressing(docs ...*as.Object) (a addressing, present bool) {
	a = addressing{}
	seen := map[string]map[string]bool{}
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, f := range addressFields {
			if !d.Has(f) {
				continue
			}
			present = true
			if seen[f] == nil {
				seen[f] = map[string]bool{}
			}
			for _, iri := range audienceField(d, f).IDs() {
				if !seen[f][iri] {
					seen[f][iri] = true
					a[f] = append(a[f], iri)
				}
			}
		}
	}
	return a, present
}

func (a addressing) empty() bool {
	for _, v := range a {
		if len(v) > 0 {
			return false
		}
	}
	return true
}

// set writes the audience onto each document (fields without recipients
// are left out).
func (a addressing) set(docs ...*as.Object) {
	for _, d := range docs {
		for _, f := range addressFields {
			*audienceField(d, f) = nil
			if len(a[f]) > 0 {
				*audienceField(d, f) = as.IRIs(a[f]...)
			}
		}
	}
}

// publicDefault is the addressing of a post that says nothing: public, and
// to the followers.
func (p *Publisher) publicDefault(actor *store.Actor) addressing {
	return addressing{"to": {federation.Public}, "cc": {p.Instance.FollowersURL(actor.Name)}}
}

// resolveAudience works out who an addressing reaches: the public and the
// actor's followers (both mean the followers' inboxes), local actors (an
// inbox item each), and remote actors, resolved to inboxes through the actor
// cache (fetching the ones it lacks). Unresolvable recipients are noted in
// the plan; an addressing that reaches nobody at all is refused.
func (p *Publisher) resolveAudience(ctx context.Context, pl *plan, a addressing) error {
	followers := p.Instance.FollowersURL(pl.actor.Name)
	var remote []string
	reachesAnyone := false
	for _, f := range addressFields {
		for _, iri := range a[f] {
			switch {
			case federation.IsPublic(iri):
				pl.public = true
				pl.aud.FollowersOf = pl.actor.ID
				reachesAnyone = true
			case iri == followers:
				pl.aud.FollowersOf = pl.actor.ID
				reachesAnyone = true
			case p.ours(iri):
				if name, ok := p.Instance.LocalName(iri); ok {
					if local, err := p.DB.ActorByName(ctx, name); err == nil {
						pl.locals = append(pl.locals, local.ID)
						reachesAnyone = true
					} else if !errors.Is(err, store.ErrNotFound) {
						return err
					}
				}
			default:
				remote = append(remote, iri)
			}
		}
	}
	if len(remote) > 0 {
		inboxes, failed := delivery.ResolveInboxes(ctx, p.Fetcher, remote)
		for iri, err := range failed {
			pl.unresolved[iri] = err.Error()
		}
		if len(inboxes) > 0 {
			reachesAnyone = true
		}
		pl.aud.Inboxes = append(pl.aud.Inboxes, inboxes...)
	}
	if !reachesAnyone {
		if len(remote) > 0 {
			return inputErr("none of the recipients could be resolved to an inbox: %v", pl.unresolved)
		}
		return inputErr("the addressing (to, cc, bto, bcc, audience) names no recipient and is not public")
	}
	return nil
}

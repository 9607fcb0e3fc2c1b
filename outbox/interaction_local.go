package outbox

import (
	"context"
	"fmt"

	"herald/federation/as"
	"herald/store"
)

// Local posts' interaction policies, honoured when another local actor
// replies to, likes or boosts them. A local interaction reaches its
// local recipients without going through the inbox (addLocalItems), so
// the inbox's judgement (inbox/interaction_policy.go) never sees it: it
// is judged here, before anything is published, by the same rules.
// GoToSocial judges its own accounts' interactions with its own posts
// the same way as a peer's (internal/filter/interaction/interactable.go,
// called from internal/processing/status/create.go, fave.go and
// boost.go), and holds the ones needing approval; Herald has no local
// interaction requests yet, so one left to the author is refused with a
// clear answer rather than let through unjudged. One a collection
// approves needs no Accept: GoToSocial preapproves it for a local post
// (fave.go, MatchedOnCollection on a local status).

// localApprovalMsg refuses a local actor's interaction with another
// local actor's post that the post's policy leaves to its author: Herald
// cannot hold a local interaction for approval yet.
const localApprovalMsg = "the author of %s approves who may %s it by hand (its interactionPolicy.%s), and Herald does not support approval requests between local accounts yet"

// judgeLocal applies the policy of doc, the local post target by the
// local actor author, to pl's interaction kind with it: nil when it is
// approved automatically, else a refusal (an *InputError that is also
// ErrInteractionRefused).
func (p *Publisher) judgeLocal(ctx context.Context, pl *plan, kind, target, author string, doc *as.Object) error {
	name, ok := p.Instance.LocalName(author)
	if !ok {
		return nil
	}
	owner, err := p.DB.ActorByName(ctx, name)
	if err != nil {
		return err
	}
	me := p.Instance.ActorID(pl.actor.Name)
	switch p.DecideWithLocalPost(ctx, p.DB.Queries, doc, owner, kind, me).Approval {
	case Denied:
		return refused(target, kind)
	case Manual:
		return &refusedError{InputError{Msg: fmt.Sprintf(localApprovalMsg, target, verbs[kind], kind)}}
	}
	return nil
}

// refused is the refusal of an interaction kind with target, which its
// policy does not allow.
func refused(target, kind string) error {
	return &refusedError{InputError{Msg: "the author of " + target + " does not let you " + verbs[kind] + " it (its interactionPolicy." + kind + ")"}}
}

// DecideWithLocalPost judges an interaction of kind by actor with post,
// a post of the local actor owner, by its interactionPolicy: the owner's
// followers and following as q reads them (in or out of a transaction),
// the owner and, for a reply, the post's mentions always allowed. The
// inbox judges peers' interactions with it, and judgeLocal local ones.
func (p *Publisher) DecideWithLocalPost(ctx context.Context, q *store.Queries, post *as.Object, owner *store.Actor, kind, actor string) Decision {
	member := func(collection string) bool {
		switch collection {
		case p.Instance.FollowersURL(owner.Name):
			f, err := q.FollowerRow(ctx, owner.ID, actor)
			return err == nil && f.State == store.StateAccepted
		case p.Instance.ActorID(owner.Name) + "/following":
			f, err := q.FollowingRow(ctx, owner.ID, actor)
			return err == nil && f.State == store.StateAccepted
		}
		return false
	}
	return ReadPolicy(post).Decide(kind, actor, p.Instance.ActorID(owner.Name), mentioned(post), member)
}

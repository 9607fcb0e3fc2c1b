package outbox

import (
	"context"

	"herald/store"
)

// BlockDomain makes actor block a domain (a host name as host.ParseOperator
// gives it), in one transaction: each of its followers there is removed and
// sent a Reject of its Follow (as Mastodon does when an account blocks a
// domain, so that server stops counting it as a follower), the block is
// recorded, and the actor's deliveries still queued for the domain fail as
// skipped. From then on nothing from the domain reaches the actor's inbox
// or webhooks, its Follows are refused (with a Reject), and the actor's
// other activities are not delivered there. It returns how many followers went, and whether the
// block is new (blocking twice changes nothing).
func (p *Publisher) BlockDomain(ctx context.Context, actor *store.Actor, domain string) (removed int, created bool, err error) {
	now := p.Now()
	err = p.DB.Write(ctx, func(tx *store.Tx) error {
		followers, err := tx.FollowersOnDomain(ctx, actor.ID, domain)
		if err != nil {
			return err
		}
		for _, f := range followers {
			if _, err := tx.RemoveFollower(ctx, "", f.Follower, actor.ID); err != nil {
				return err
			}
			if _, _, err := p.AnswerFollow(ctx, tx, actor, false, f.FollowID, f.Follower, f.Inbox, now); err != nil {
				return err
			}
		}
		removed = len(followers)
		if created, err = tx.AddActorDomainBlock(ctx, actor.ID, domain, now); err != nil {
			return err
		}
		_, err = tx.SkipQueuedToDomain(ctx, actor.ID, domain, now)
		return err
	})
	if err == nil && removed > 0 {
		p.Runner.Wake()
	}
	return removed, created, err
}

package store

import (
	"context"
	"strings"
	"time"
)

// Relation is what lies between a local actor and another account, for
// the client API's Relationship entity.
type Relation struct {
	Following, Requested        bool // the local actor follows it (accepted / pending)
	FollowedBy, RequestedBy     bool // it follows the local actor (accepted / pending)
	Blocking                    bool
	DomainBlocking              bool
	Muting, MutingNotifications bool
	MuteExpiresAt               time.Time // zero: muted until unmuted
}

// Relations returns the relations of a local actor with each of iris
// (actor ids), by id; accounts with none are in the map too.
func (q *Queries) Relations(ctx context.Context, actorID int64, iris []string) (map[string]*Relation, error) {
	out := map[string]*Relation{}
	for _, iri := range iris {
		out[iri] = &Relation{}
	}
	list := q.db.listArg(iris)
	scan := func(query string, set func(r *Relation, state string)) error {
		rows, err := q.r.QueryContext(ctx, query, actorID, list)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var iri, state string
			if err := rows.Scan(&iri, &state); err != nil {
				return err
			}
			if r := out[iri]; r != nil {
				set(r, state)
			}
		}
		return rows.Err()
	}
	if err := scan(`SELECT target, state FROM following WHERE actor_id = $1 AND `+q.db.inList("target", "$2"), func(r *Relation, s string) {
		r.Following, r.Requested = s == StateAccepted, s == StatePending
	}); err != nil {
		return nil, err
	}
	if err := scan(`SELECT follower, state FROM followers WHERE actor_id = $1 AND `+q.db.inList("follower", "$2"), func(r *Relation, s string) {
		r.FollowedBy, r.RequestedBy = s == StateAccepted, s == StatePending
	}); err != nil {
		return nil, err
	}
	if err := scan(`SELECT target, '' FROM actor_blocks WHERE actor_id = $1 AND `+q.db.inList("target", "$2"), func(r *Relation, _ string) {
		r.Blocking = true
	}); err != nil {
		return nil, err
	}
	mutes, err := q.MutesOf(ctx, actorID, iris)
	if err != nil {
		return nil, err
	}
	for iri, m := range mutes {
		out[iri].Muting, out[iri].MutingNotifications, out[iri].MuteExpiresAt = true, m.Notifications, m.ExpiresAt
	}
	domains, err := q.ActorDomainBlocks(ctx, actorID)
	if err != nil {
		return nil, err
	}
	for iri, r := range out {
		host, err := HostOf(iri)
		if err != nil {
			continue
		}
		for _, d := range domains {
			if host == d.Target || strings.HasSuffix(host, "."+d.Target) {
				r.DomainBlocking = true
			}
		}
	}
	return out, nil
}

// SearchAccounts returns the ids of local actors (base is the instance's
// scheme://domain, which their ids start with) and cached remote actors
// whose name (or a local one's display name) starts with prefix, local ones
// first, at most limit of them after skipping offset.
func (q *Queries) SearchAccounts(ctx context.Context, base, prefix string, limit, offset int) ([]string, error) {
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(prefix)) + "%"
	return column[string](ctx, q.r, `SELECT iri FROM (
			SELECT $1 || '/users/' || name AS iri, 0 AS remote, name AS n FROM actors
				WHERE deleted_at IS NULL AND discoverable AND (name LIKE $2 ESCAPE '\' OR lower(display_name) LIKE $2 ESCAPE '\')
			UNION ALL
			SELECT id, 1, lower(preferred_username) FROM remote_actors WHERE lower(preferred_username) LIKE $2 ESCAPE '\'
		) s ORDER BY remote, n, iri LIMIT $3 OFFSET $4`, base, like, limit, offset)
}

// RemoteActorsNamed returns the ids of cached remote actors whose
// preferredUsername is user (any case), for resolving user@host among
// known accounts.
func (q *Queries) RemoteActorsNamed(ctx context.Context, user string) ([]string, error) {
	return column[string](ctx, q.r, `SELECT id FROM remote_actors WHERE lower(preferred_username) = lower($1) ORDER BY id`, user)
}

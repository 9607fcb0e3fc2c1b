package store

import (
	"context"
	"strconv"
	"strings"
)

// PublicFilter narrows the public and tag timelines as Mastodon's
// parameters do.
type PublicFilter struct {
	Local, Remote, OnlyMedia bool
}

// where is the filter's conditions on statuses aliased s.
func (f PublicFilter) where() string {
	w := ""
	if f.Local {
		w += ` AND s.local_actor_id IS NOT NULL`
	}
	if f.Remote {
		w += ` AND s.local_actor_id IS NULL`
	}
	if f.OnlyMedia {
		w += ` AND s.has_media`
	}
	return w
}

// PublicPage is one page of the public timeline: public statuses Herald
// has, neither boosts nor replies to others, by the statuses_public index.
func (q *Queries) PublicPage(ctx context.Context, f PublicFilter, p KeysetPage[int64]) ([]*Status, error) {
	return q.statusPage(ctx, `FROM statuses s WHERE s.visibility = 'public' AND s.reblog_iri IS NULL AND NOT s.reply AND s.deleted_at IS NULL`+f.where(), "s.id", p)
}

// TagFilter is a tag timeline's hashtags: any of Any, all of All, none of
// None (normalised names).
type TagFilter struct {
	Any, All, None []string
}

// TagPage is one page of a hashtag timeline: public statuses, replies
// included, with the hashtags.
func (q *Queries) TagPage(ctx context.Context, t TagFilter, f PublicFilter, p KeysetPage[int64]) ([]*Status, error) {
	args := []any{q.db.listArg(t.Any)}
	from := `FROM statuses s WHERE s.id IN (SELECT status_id FROM status_tags WHERE ` + q.db.inList("tag", "$1") + `)
		AND s.visibility = 'public' AND s.reblog_iri IS NULL AND s.deleted_at IS NULL` + f.where()
	for _, tag := range t.All {
		args = append(args, tag)
		from += ` AND EXISTS (SELECT 1 FROM status_tags t WHERE t.status_id = s.id AND t.tag = $` + strconv.Itoa(len(args)) + `)`
	}
	if len(t.None) > 0 {
		args = append(args, q.db.listArg(t.None))
		from += ` AND NOT EXISTS (SELECT 1 FROM status_tags t WHERE t.status_id = s.id AND ` + q.db.inList("t.tag", "$"+strconv.Itoa(len(args))) + `)`
	}
	return q.statusPage(ctx, from, "s.id", p, args...)
}

// AccountFilter is what an account's statuses list shows, and to whom.
type AccountFilter struct {
	ExcludeReplies, ExcludeReblogs, OnlyMedia bool
	Tagged                                    string // a normalised hashtag, or ""
	// Viewer is the local actor looking (0: nobody logged in); it sees
	// the private statuses when Follower, and the statuses that name it.
	Viewer   int64
	Follower bool
	Own      bool // the viewer's own account: everything
}

// AccountPage is one page of an account's statuses and boosts.
func (q *Queries) AccountPage(ctx context.Context, author string, f AccountFilter, p KeysetPage[int64]) ([]*Status, error) {
	from := `FROM statuses s WHERE s.author = $1 AND s.deleted_at IS NULL AND (s.reblog_iri IS NULL OR s.reblog_of IS NOT NULL)`
	args := []any{author}
	if !f.Own {
		vis := `s.visibility IN ('public', 'unlisted')`
		if f.Follower {
			vis = `s.visibility IN ('public', 'unlisted', 'private')`
		}
		args = append(args, f.Viewer)
		from += ` AND (` + vis + ` OR s.id IN (SELECT status_id FROM status_audience WHERE actor_id = $2))`
	}
	if f.ExcludeReplies {
		from += ` AND NOT s.reply`
	}
	if f.ExcludeReblogs {
		from += ` AND s.reblog_iri IS NULL`
	}
	if f.OnlyMedia {
		from += ` AND s.has_media`
	}
	if f.Tagged != "" {
		args = append(args, f.Tagged)
		from += ` AND s.id IN (SELECT status_id FROM status_tags WHERE tag = $` + strconv.Itoa(len(args)) + `)`
	}
	return q.statusPage(ctx, from, "s.id", p, args...)
}

// PinnedStatuses are a local actor's pinned statuses, the latest pinned
// first.
func (q *Queries) PinnedStatuses(ctx context.Context, actorID int64) ([]*Status, error) {
	return q.statuses(ctx, `SELECT `+statusColumnsOf("s.")+` FROM statuses s JOIN objects o ON o.iri = s.iri
		WHERE o.actor_id = $1 AND o.pinned_at IS NOT NULL AND s.deleted_at IS NULL ORDER BY o.pinned_at DESC, o.id DESC`, actorID)
}

// PinnedAmong reports which of the statuses are pinned (local ones only
// can be).
func (q *Queries) PinnedAmong(ctx context.Context, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := column[int64](ctx, q.r, `SELECT s.id FROM statuses s JOIN objects o ON o.iri = s.iri
		WHERE o.pinned_at IS NOT NULL AND `+q.db.inList("s.id", "$1"), q.db.listArg(ids))
	for _, id := range list {
		out[id] = true
	}
	return out, err
}

// CountStatuses counts an author's statuses that stand (boosts too), and
// returns the time of the latest.
func (q *Queries) CountStatuses(ctx context.Context, author string) (int, int64, error) {
	var n int
	var last int64
	err := q.r.QueryRowContext(ctx, `SELECT count(*), coalesce(max(created_at), 0) FROM statuses WHERE author = $1 AND deleted_at IS NULL
		AND visibility IN ('public', 'unlisted')`, author).Scan(&n, &last)
	return n, last, err
}

// SearchStatuses finds statuses a local actor wrote, favourited,
// bookmarked or was named in whose text holds q (Mastodon without a
// search engine finds nothing; with one, these).
func (q *Queries) SearchStatuses(ctx context.Context, actorID int64, actorIRI, text string, limit, offset int) ([]*Status, error) {
	return q.statuses(ctx, `SELECT `+statusColumns+` FROM statuses WHERE deleted_at IS NULL AND reblog_iri IS NULL
		AND lower(content) LIKE $1 AND (author = $2 OR id IN (SELECT status_id FROM favourites WHERE account = $2)
		OR id IN (SELECT status_id FROM bookmarks WHERE actor_id = $3) OR id IN (SELECT status_id FROM status_audience WHERE actor_id = $3))
		ORDER BY id DESC LIMIT $4 OFFSET $5`, "%"+likeEscape(text)+"%", actorIRI, actorID, limit, offset)
}

// likeEscape lower-cases s and drops LIKE's wildcards from it.
func likeEscape(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r != '%' && r != '_' && r != '\\' {
			out = append(out, r)
		}
	}
	return strings.ToLower(string(out))
}

// SearchTags returns the hashtags Herald has seen that start with prefix
// (a normalised name), the most used first.
func (q *Queries) SearchTags(ctx context.Context, prefix string, limit, offset int) ([]string, error) {
	return column[string](ctx, q.r, `SELECT tag FROM status_tags WHERE tag >= $1 AND tag < $2 GROUP BY tag ORDER BY count(*) DESC, tag
		LIMIT $3 OFFSET $4`, prefix, prefix+"\U0010FFFF", limit, offset)
}

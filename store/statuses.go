package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is a post the client API can show (table statuses): a local
// actor's, a remote one that arrived or was fetched, or a boost of either
// (ReblogIRI set). package timeline writes them; mastoapi renders them.
type Status struct {
	ID              int64 // a Snowflake of its published time
	IRI             string
	URL             string
	Author          string // the actor's id
	LocalActorID    int64  // the local author; 0 for a remote status
	ReblogIRI       string // a boost: what it boosts
	ReblogOf        int64  // a boost: that status, 0 until Herald has it
	InReplyTo       string
	InReplyToAuthor string
	Thread          string
	Visibility      string // public, unlisted, private, direct
	Reply           bool   // answers someone else
	HasMedia        bool
	Sensitive       bool
	SpoilerText     string
	Content         string // sanitised HTML
	Language        string
	Body            string // the object as JSON
	Source          string // a local post's text as written
	CreatedAt       time.Time
	EditedAt        time.Time // zero: never edited
	DeletedAt       time.Time // zero: not deleted
	RepliesCount    int
	ReblogsCount    int
	FavouritesCount int
}

// statusColumns are the columns scanStatus reads.
var statusColumns = statusColumnsOf("")

// statusColumnsOf is statusColumns of the table aliased alias ("s.").
func statusColumnsOf(alias string) string {
	return strings.NewReplacer("@", alias).Replace(`@id, @iri, @url, @author, coalesce(@local_actor_id, 0), coalesce(@reblog_iri, ''),
	coalesce(@reblog_of, 0), coalesce(@in_reply_to, ''), coalesce(@in_reply_to_author, ''), @thread, @visibility, @reply, @has_media,
	@sensitive, @spoiler_text, @content, @language, @body, @source, @created_at, coalesce(@edited_at, 0), coalesce(@deleted_at, 0),
	@replies_count, @reblogs_count, @favourites_count`)
}

func scanStatus(row rowScanner) (*Status, error) {
	var s Status
	var created, edited, deleted int64
	err := row.Scan(&s.ID, &s.IRI, &s.URL, &s.Author, &s.LocalActorID, &s.ReblogIRI, &s.ReblogOf, &s.InReplyTo, &s.InReplyToAuthor,
		&s.Thread, &s.Visibility, &s.Reply, &s.HasMedia, &s.Sensitive, &s.SpoilerText, &s.Content, &s.Language, &s.Body, &s.Source,
		&created, &edited, &deleted, &s.RepliesCount, &s.ReblogsCount, &s.FavouritesCount)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.CreatedAt = time.UnixMilli(created).UTC()
	if edited != 0 {
		s.EditedAt = time.UnixMilli(edited).UTC()
	}
	if deleted != 0 {
		s.DeletedAt = time.UnixMilli(deleted).UTC()
	}
	return &s, nil
}

// msOrNull is t in milliseconds, or NULL for the zero time.
func msOrNull(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: !t.IsZero()}
}

// InsertStatus stores s, keyed by a Snowflake of s.CreatedAt, and reports
// whether it is new. A status with that IRI already stored is left as it
// is and loaded into s (created false): an activity that arrives twice
// makes one status.
func (q *Queries) InsertStatus(ctx context.Context, s *Status) (created bool, err error) {
	return inTx(ctx, q, func(tx *Tx) (bool, error) {
		for range 8 {
			if old, err := tx.StatusByIRI(ctx, s.IRI); err == nil {
				*s = *old
				return false, nil
			} else if !errors.Is(err, ErrNotFound) {
				return false, err
			}
			s.ID = Snowflake(s.CreatedAt)
			res, err := tx.w.ExecContext(ctx, `INSERT INTO statuses(id, iri, url, author, local_actor_id, reblog_iri, reblog_of, in_reply_to,
				in_reply_to_author, thread, visibility, reply, has_media, sensitive, spoiler_text, content, language, body, source, created_at, edited_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) ON CONFLICT DO NOTHING`,
				s.ID, s.IRI, s.URL, s.Author, sql.NullInt64{Int64: s.LocalActorID, Valid: s.LocalActorID != 0}, nullString(s.ReblogIRI),
				sql.NullInt64{Int64: s.ReblogOf, Valid: s.ReblogOf != 0}, nullString(s.InReplyTo), nullString(s.InReplyToAuthor), s.Thread,
				s.Visibility, s.Reply, s.HasMedia, s.Sensitive, s.SpoilerText, s.Content, s.Language, s.Body, s.Source,
				s.CreatedAt.UnixMilli(), msOrNull(s.EditedAt))
			if err != nil {
				return false, err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				return true, nil
			}
			// The drawn id was taken, or another transaction stored the
			// IRI meanwhile: look again.
		}
		return false, fmt.Errorf("status %s: eight colliding ids", s.IRI)
	})
}

// StatusByID returns a status (deleted ones too), or ErrNotFound.
func (q *Queries) StatusByID(ctx context.Context, id int64) (*Status, error) {
	return scanStatus(q.r.QueryRowContext(ctx, `SELECT `+statusColumns+` FROM statuses WHERE id = $1`, id))
}

// StatusByIRI returns the status of an object (or a boost's Announce) id,
// or ErrNotFound.
func (q *Queries) StatusByIRI(ctx context.Context, iri string) (*Status, error) {
	return scanStatus(q.r.QueryRowContext(ctx, `SELECT `+statusColumns+` FROM statuses WHERE iri = $1`, iri))
}

// StatusesByIDs returns the statuses of ids that exist, by id.
func (q *Queries) StatusesByIDs(ctx context.Context, ids []int64) (map[int64]*Status, error) {
	out := map[int64]*Status{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := q.statuses(ctx, `SELECT `+statusColumns+` FROM statuses WHERE `+q.db.inList("id", "$1"), q.db.listArg(ids))
	for _, s := range list {
		out[s.ID] = s
	}
	return out, err
}

// statuses runs a query selecting statusColumns.
func (q *Queries) statuses(ctx context.Context, query string, args ...any) ([]*Status, error) {
	rows, err := q.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*Status{}
	for rows.Next() {
		s, err := scanStatus(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// StatusEdit is what an edit changes of a status.
type StatusEdit struct {
	Content, SpoilerText, Language, Body, Source string
	Sensitive, HasMedia                          bool
	EditedAt                                     time.Time // zero: not an edit (a poll's counts)
}

// EditStatus gives a status its current version.
func (q *Queries) EditStatus(ctx context.Context, id int64, e StatusEdit) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE statuses SET content = $1, spoiler_text = $2, language = $3, body = $4, source = $5,
			sensitive = $6, has_media = $7, edited_at = coalesce($8, edited_at) WHERE id = $9 AND deleted_at IS NULL`,
			e.Content, e.SpoilerText, e.Language, e.Body, e.Source, e.Sensitive, e.HasMedia, msOrNull(e.EditedAt), id)
		return err
	})
}

// DeleteStatus marks a status deleted and forgets what it said (content,
// body, source): it leaves the home feeds, its notifications and hashtags
// go. It returns the local actors whose home feed held it, for their
// streams.
func (q *Queries) DeleteStatus(ctx context.Context, id int64, now time.Time) ([]int64, error) {
	return inTx(ctx, q, func(tx *Tx) ([]int64, error) {
		holders, err := column[int64](ctx, tx.w, `SELECT actor_id FROM home_feed WHERE status_id = $1`, id)
		if err != nil {
			return nil, err
		}
		if _, err := tx.w.ExecContext(ctx, `UPDATE statuses SET deleted_at = $1, body = '', source = '', content = '', spoiler_text = ''
			WHERE id = $2 AND deleted_at IS NULL`, now.UnixMilli(), id); err != nil {
			return nil, err
		}
		for _, table := range []string{"home_feed", "notifications", "status_tags", "bookmarks"} {
			if _, err := tx.w.ExecContext(ctx, `DELETE FROM `+table+` WHERE status_id = $1`, id); err != nil {
				return nil, err
			}
		}
		return holders, nil
	})
}

// Status counters AddToCount changes.
const (
	CountReplies    = "replies_count"
	CountReblogs    = "reblogs_count"
	CountFavourites = "favourites_count"
)

// AddToCount adds delta to one of a status's counters (never below 0).
func (q *Queries) AddToCount(ctx context.Context, id int64, counter string, delta int) error {
	switch counter {
	case CountReplies, CountReblogs, CountFavourites:
	default:
		return fmt.Errorf("no status counter %q", counter)
	}
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE statuses SET `+counter+` = CASE WHEN `+counter+` + $1 < 0 THEN 0 ELSE `+counter+` + $1 END WHERE id = $2`, delta, id)
		return err
	})
}

// SetCounts sets a status's counters to what its server says.
func (q *Queries) SetCounts(ctx context.Context, id int64, replies, reblogs, favourites int) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE statuses SET replies_count = $1, reblogs_count = $2, favourites_count = $3 WHERE id = $4`,
			replies, reblogs, favourites, id)
		return err
	})
}

// ResolveBoosts points the boosts of iri, which Herald did not have, at
// its status now that it does, and returns them.
func (q *Queries) ResolveBoosts(ctx context.Context, iri string, statusID int64) ([]*Status, error) {
	return inTx(ctx, q, func(tx *Tx) ([]*Status, error) {
		if _, err := tx.w.ExecContext(ctx, `UPDATE statuses SET reblog_of = $1 WHERE reblog_iri = $2 AND reblog_of IS NULL`, statusID, iri); err != nil {
			return nil, err
		}
		return tx.statuses(ctx, `SELECT `+statusColumns+` FROM statuses WHERE reblog_iri = $1 AND deleted_at IS NULL`, iri)
	})
}

// Boosts returns the boosts of a status that stand, by the actors given
// (all actors when none is).
func (q *Queries) Boosts(ctx context.Context, statusID int64, by ...string) ([]*Status, error) {
	query := `SELECT ` + statusColumns + ` FROM statuses WHERE reblog_of = $1 AND deleted_at IS NULL`
	args := []any{statusID}
	if len(by) > 0 {
		query += ` AND ` + q.db.inList("author", "$2")
		args = append(args, q.db.listArg(by))
	}
	return q.statuses(ctx, query+` ORDER BY id`, args...)
}

// Replies returns the statuses that answer any of iris, not deleted,
// oldest first.
func (q *Queries) Replies(ctx context.Context, iris []string) ([]*Status, error) {
	if len(iris) == 0 {
		return nil, nil
	}
	return q.statuses(ctx, `SELECT `+statusColumns+` FROM statuses WHERE `+q.db.inList("in_reply_to", "$1")+` AND deleted_at IS NULL ORDER BY id`,
		q.db.listArg(iris))
}

// SetStatusTags replaces a status's hashtags (normalised names).
func (q *Queries) SetStatusTags(ctx context.Context, statusID int64, tags []string) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM status_tags WHERE status_id = $1`, statusID); err != nil {
			return err
		}
		for _, t := range tags {
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO status_tags(tag, status_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t, statusID); err != nil {
				return err
			}
		}
		return nil
	})
}

// SetStatusAudience records the local actors a status names.
func (q *Queries) SetStatusAudience(ctx context.Context, statusID int64, actorIDs []int64) error {
	return q.write(ctx, func(tx *Tx) error {
		for _, id := range actorIDs {
			if _, err := tx.w.ExecContext(ctx, `INSERT INTO status_audience(status_id, actor_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, statusID, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// InAudience reports which of ids name actorID (addressed or mentioned).
func (q *Queries) InAudience(ctx context.Context, actorID int64, ids []int64) (map[int64]bool, error) {
	return q.idSet(ctx, `SELECT status_id FROM status_audience WHERE actor_id = $1 AND `+q.db.inList("status_id", "$2"), actorID, ids)
}

// idSet runs a query of one id column over (actorID, ids).
func (q *Queries) idSet(ctx context.Context, query string, key any, ids []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	list, err := column[int64](ctx, q.r, query, key, q.db.listArg(ids))
	for _, id := range list {
		out[id] = true
	}
	return out, err
}

// StatusTagsOf returns a status's hashtags.
func (q *Queries) StatusTagsOf(ctx context.Context, statusID int64) ([]string, error) {
	return column[string](ctx, q.r, `SELECT tag FROM status_tags WHERE status_id = $1 ORDER BY tag`, statusID)
}

// DeleteStatusesBy marks every status of an author deleted (a deleted
// account) and takes them out of the feeds.
func (q *Queries) DeleteStatusesBy(ctx context.Context, author string, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		for _, stmt := range []string{
			`DELETE FROM home_feed WHERE status_id IN (SELECT id FROM statuses WHERE author = $1)`,
			`DELETE FROM notifications WHERE account = $1`,
			`DELETE FROM favourites WHERE account = $1`,
			`DELETE FROM status_reactions WHERE account = $1`,
		} {
			if _, err := tx.w.ExecContext(ctx, stmt, author); err != nil {
				return err
			}
		}
		_, err := tx.w.ExecContext(ctx, `UPDATE statuses SET deleted_at = $1, body = '', source = '', content = '', spoiler_text = ''
			WHERE author = $2 AND deleted_at IS NULL`, now.UnixMilli(), author)
		return err
	})
}

// StatusIDsByIRI returns the ids of the statuses of iris that Herald has
// (and did not delete), by iri.
func (q *Queries) StatusIDsByIRI(ctx context.Context, iris []string) (map[string]int64, error) {
	return q.idsByIRI(ctx, `SELECT iri, id FROM statuses WHERE deleted_at IS NULL AND `+q.db.inList("iri", "$1"), iris)
}

// idsByIRI runs query, which selects (iri, id) pairs for the iris its $1
// lists, into a map.
func (q *Queries) idsByIRI(ctx context.Context, query string, iris []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(iris) == 0 {
		return out, nil
	}
	rows, err := q.r.QueryContext(ctx, query, q.db.listArg(iris))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var iri string
		var id int64
		if err := rows.Scan(&iri, &id); err != nil {
			return nil, err
		}
		out[iri] = id
	}
	return out, rows.Err()
}

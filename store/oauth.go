package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// OAuthApp is an app registered with POST /api/v1/apps. Its client secret
// is kept only as a hash.
type OAuthApp struct {
	ID           int64
	ClientID     string
	SecretHash   string
	Name         string
	Website      string
	RedirectURIs []string
	Scopes       []string
	CreatedAt    time.Time
}

const appColumns = `id, client_id, secret_hash, name, website, redirect_uris, scopes, created_at`

func scanApp(row rowScanner) (*OAuthApp, error) {
	var a OAuthApp
	var uris, scopes string
	var created int64
	err := row.Scan(&a.ID, &a.ClientID, &a.SecretHash, &a.Name, &a.Website, &uris, &scopes, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	a.RedirectURIs, a.Scopes, a.CreatedAt = strings.Split(uris, "\n"), strings.Fields(scopes), time.UnixMilli(created).UTC()
	return &a, err
}

// CreateOAuthApp registers an app whose client secret hashes to
// a.SecretHash, and fills in its id and creation time.
func (q *Queries) CreateOAuthApp(ctx context.Context, a *OAuthApp) error {
	a.CreatedAt = q.db.Now().UTC().Truncate(time.Millisecond)
	return q.write(ctx, func(tx *Tx) error {
		return tx.w.QueryRowContext(ctx, `INSERT INTO oauth_apps(client_id, secret_hash, name, website, redirect_uris, scopes, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			a.ClientID, a.SecretHash, a.Name, a.Website, strings.Join(a.RedirectURIs, "\n"), strings.Join(a.Scopes, " "), a.CreatedAt.UnixMilli()).Scan(&a.ID)
	})
}

// OAuthAppByClientID returns the app with that client id, or ErrNotFound.
func (q *Queries) OAuthAppByClientID(ctx context.Context, clientID string) (*OAuthApp, error) {
	return scanApp(q.r.QueryRowContext(ctx, `SELECT `+appColumns+` FROM oauth_apps WHERE client_id = $1`, clientID))
}

// OAuthAppByID returns the app with that row id, or ErrNotFound.
func (q *Queries) OAuthAppByID(ctx context.Context, id int64) (*OAuthApp, error) {
	return scanApp(q.r.QueryRowContext(ctx, `SELECT `+appColumns+` FROM oauth_apps WHERE id = $1`, id))
}

// OAuthToken is an access token (kept only as its hash): an actor's, or
// an app's own (ActorID 0, from the client_credentials grant).
type OAuthToken struct {
	ID         int64
	AppID      int64
	AppName    string
	ActorID    int64
	Scopes     []string
	CreatedAt  time.Time
	LastUsedAt time.Time
}

const tokenColumns = `t.id, t.app_id, a.name, coalesce(t.actor_id, 0), t.scopes, t.created_at, t.last_used_at`

func scanToken(row rowScanner) (*OAuthToken, error) {
	var t OAuthToken
	var scopes string
	var created, used int64
	err := row.Scan(&t.ID, &t.AppID, &t.AppName, &t.ActorID, &scopes, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	t.Scopes, t.CreatedAt, t.LastUsedAt = strings.Fields(scopes), time.UnixMilli(created).UTC(), time.UnixMilli(used).UTC()
	return &t, err
}

// IssueOAuthToken stores a token whose hash is tokenHash and fills in t's
// id and times (now).
func (q *Queries) IssueOAuthToken(ctx context.Context, t *OAuthToken, tokenHash string) error {
	now := q.db.Now().UTC().Truncate(time.Millisecond)
	t.CreatedAt, t.LastUsedAt = now, now
	actor := sql.NullInt64{Int64: t.ActorID, Valid: t.ActorID != 0}
	return q.write(ctx, func(tx *Tx) error {
		return tx.w.QueryRowContext(ctx, `INSERT INTO oauth_tokens(token_hash, app_id, actor_id, scopes, created_at, last_used_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, tokenHash, t.AppID, actor, strings.Join(t.Scopes, " "), now.UnixMilli()).Scan(&t.ID)
	})
}

// OAuthTokenByHash returns the token with that hash, or ErrNotFound (also
// for a token of a deleted actor).
func (q *Queries) OAuthTokenByHash(ctx context.Context, tokenHash string) (*OAuthToken, error) {
	return scanToken(q.r.queryRowPrepared(ctx, `SELECT `+tokenColumns+` FROM oauth_tokens t JOIN oauth_apps a ON a.id = t.app_id
		LEFT JOIN actors ac ON ac.id = t.actor_id
		WHERE t.token_hash = $1 AND (t.actor_id IS NULL OR ac.deleted_at IS NULL)`, tokenHash))
}

// TouchOAuthToken records that a token was used at now, if its last use
// is older than an hour: the token list shows when an app was last seen
// without a write on every request.
func (q *Queries) TouchOAuthToken(ctx context.Context, id int64, now time.Time) error {
	return q.write(ctx, func(tx *Tx) error {
		_, err := tx.w.ExecContext(ctx, `UPDATE oauth_tokens SET last_used_at = $1 WHERE id = $2 AND last_used_at < $3`,
			now.UnixMilli(), id, now.Add(-time.Hour).UnixMilli())
		return err
	})
}

// ActorOAuthTokens lists the tokens a local actor gave apps, newest first.
func (q *Queries) ActorOAuthTokens(ctx context.Context, actorID int64) ([]OAuthToken, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+tokenColumns+` FROM oauth_tokens t JOIN oauth_apps a ON a.id = t.app_id
		WHERE t.actor_id = $1 ORDER BY t.id DESC`, actorID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []OAuthToken{}
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// RevokeOAuthToken deletes a token of a local actor's (by its row id); it
// stops working at once. ErrNotFound if the actor has no such token.
func (q *Queries) RevokeOAuthToken(ctx context.Context, actorID, id int64) error {
	return q.deleteOne(ctx, `DELETE FROM oauth_tokens WHERE id = $1 AND actor_id = $2`, id, actorID)
}

// RevokeActorOAuthTokens deletes every token of a local actor's and
// returns how many there were.
func (q *Queries) RevokeActorOAuthTokens(ctx context.Context, actorID int64) (int64, error) {
	return inTx(ctx, q, func(tx *Tx) (int64, error) {
		r, err := tx.w.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE actor_id = $1`, actorID)
		if err != nil {
			return 0, err
		}
		return r.RowsAffected()
	})
}

// RevokeOAuthTokenOfApp deletes the token with that hash if the app
// issued it (POST /oauth/revoke), and reports whether one went.
func (q *Queries) RevokeOAuthTokenOfApp(ctx context.Context, appID int64, tokenHash string) (bool, error) {
	err := q.deleteOne(ctx, `DELETE FROM oauth_tokens WHERE token_hash = $1 AND app_id = $2`, tokenHash, appID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// deleteOne runs a DELETE in a transaction of its own: ErrNotFound when it
// deleted nothing.
func (q *Queries) deleteOne(ctx context.Context, query string, args ...any) error {
	return q.write(ctx, func(tx *Tx) error {
		r, err := tx.w.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// OAuthCode is an authorization code (kept only as its hash) waiting to be
// exchanged for a token.
type OAuthCode struct {
	AppID         int64
	ActorID       int64
	RedirectURI   string
	Scopes        []string
	CodeChallenge string // PKCE S256; "" without PKCE
	ExpiresAt     time.Time
}

// CreateOAuthCode stores a code whose hash is codeHash. Expired codes are
// swept on the way.
func (q *Queries) CreateOAuthCode(ctx context.Context, c *OAuthCode, codeHash string) error {
	return q.write(ctx, func(tx *Tx) error {
		if _, err := tx.w.ExecContext(ctx, `DELETE FROM oauth_codes WHERE expires_at < $1`, q.db.Now().UnixMilli()); err != nil {
			return err
		}
		_, err := tx.w.ExecContext(ctx, `INSERT INTO oauth_codes(code_hash, app_id, actor_id, redirect_uri, scopes, code_challenge, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, codeHash, c.AppID, c.ActorID, c.RedirectURI, strings.Join(c.Scopes, " "), c.CodeChallenge, c.ExpiresAt.UnixMilli())
		return err
	})
}

// TakeOAuthCode deletes the code with that hash and returns it, or
// ErrNotFound: a code works once, and of two requests racing with it only
// one gets it. In a transaction (the token endpoint's) the code is gone
// only if that one commits.
func (q *Queries) TakeOAuthCode(ctx context.Context, codeHash string) (*OAuthCode, error) {
	return inTx(ctx, q, func(tx *Tx) (*OAuthCode, error) { return tx.takeOAuthCode(ctx, codeHash) })
}

func (tx *Tx) takeOAuthCode(ctx context.Context, codeHash string) (*OAuthCode, error) {
	var c OAuthCode
	var scopes string
	var expires int64
	err := tx.w.QueryRowContext(ctx, `DELETE FROM oauth_codes WHERE code_hash = $1
		RETURNING app_id, actor_id, redirect_uri, scopes, code_challenge, expires_at`, codeHash).
		Scan(&c.AppID, &c.ActorID, &c.RedirectURI, &scopes, &c.CodeChallenge, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	c.Scopes, c.ExpiresAt = strings.Fields(scopes), time.UnixMilli(expires).UTC()
	return &c, err
}

package store

import (
	"context"
	"strings"
	"time"
)

// Whole-table reads of the client API's tables, as in inspect.go: for
// tests and tools, not for the request paths.

// AllOAuthApps lists every registered app, oldest first.
func (q *Queries) AllOAuthApps(ctx context.Context) ([]OAuthApp, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT `+appColumns+` FROM oauth_apps ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []OAuthApp{}
	for rows.Next() {
		a, err := scanApp(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}

// AllOAuthCodes lists every authorization code not yet exchanged (expired
// ones too, until the next code sweeps them), by app.
func (q *Queries) AllOAuthCodes(ctx context.Context) ([]OAuthCode, error) {
	rows, err := q.r.QueryContext(ctx, `SELECT app_id, actor_id, redirect_uri, scopes, code_challenge, expires_at FROM oauth_codes ORDER BY app_id, expires_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []OAuthCode{}
	for rows.Next() {
		var c OAuthCode
		var scopes string
		var expires int64
		if err := rows.Scan(&c.AppID, &c.ActorID, &c.RedirectURI, &scopes, &c.CodeChallenge, &expires); err != nil {
			return nil, err
		}
		c.Scopes, c.ExpiresAt = strings.Fields(scopes), time.UnixMilli(expires).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}

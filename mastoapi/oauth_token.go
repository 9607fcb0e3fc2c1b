package mastoapi

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"herald/store"
)

// Token is Mastodon's Token entity, what POST /oauth/token answers.
type Token struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Scope       string `json:"scope"`
	CreatedAt   int64  `json:"created_at"`
}

// oauthError is an error of the token and revocation endpoints, written
// as RFC 6749 section 5.2 says ({"error": code, "error_description": ...}).
func oauthError(status int, code, desc string) *Error {
	return &Error{Status: status, Msg: code, Desc: desc}
}

var (
	errInvalidClient = oauthError(http.StatusUnauthorized, "invalid_client",
		"Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.")
	errInvalidGrant = oauthError(http.StatusBadRequest, "invalid_grant",
		"The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.")
)

// client authenticates the app calling the token or revocation endpoint:
// HTTP Basic (client_secret_basic) or client_id and client_secret in the
// parameters (client_secret_post).
func (h *Handler) client(c *Call) (*store.OAuthApp, error) {
	id, secret, ok := c.R.BasicAuth()
	if !ok {
		id, secret = c.Params.Get("client_id"), c.Params.Get("client_secret")
	}
	if id == "" || secret == "" {
		return nil, errInvalidClient
	}
	app, err := h.DB.OAuthAppByClientID(c.Ctx(), id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !sameToken(store.HashToken(secret), app.SecretHash)) {
		return nil, errInvalidClient
	}
	return app, err
}

// token serves POST /oauth/token: the authorization_code grant (with
// PKCE verified when the authorization sent a challenge) and the
// client_credentials grant, as Mastodon's Doorkeeper has them
// (grant_flows %w(authorization_code client_credentials)); the password
// grant is refused as it is there.
func (h *Handler) token(c *Call) error {
	c.W.Header().Set("Cache-Control", "no-store")
	c.W.Header().Set("Pragma", "no-cache")
	grant := c.Params.Get("grant_type")
	if grant != "authorization_code" && grant != "client_credentials" {
		return oauthError(http.StatusBadRequest, "unsupported_grant_type", "The authorization grant type is not supported by the authorization server.")
	}
	app, err := h.client(c)
	if err != nil {
		return err
	}
	t := &store.OAuthToken{AppID: app.ID}
	secret := store.NewToken()
	if grant == "client_credentials" {
		scopes, ok := ParseScopes(c.Params.Get("scope"), []string{"read"})
		if !ok || !subset(scopes, app.Scopes) {
			return oauthError(http.StatusBadRequest, "invalid_scope", "The requested scope is invalid, unknown, or malformed.")
		}
		t.Scopes = scopes
		if err := h.DB.IssueOAuthToken(c.Ctx(), t, store.HashToken(secret)); err != nil {
			return err
		}
		return c.JSON(Token{AccessToken: secret, TokenType: "Bearer", Scope: strings.Join(t.Scopes, " "), CreatedAt: t.CreatedAt.Unix()})
	}
	code, redirect, verifier := c.Params.Get("code"), c.Params.Get("redirect_uri"), c.Params.Get("code_verifier")
	if code == "" || redirect == "" {
		return oauthError(http.StatusBadRequest, "invalid_request", "Missing required parameter: "+map[bool]string{true: "code", false: "redirect_uri"}[code == ""]+".")
	}
	now := h.Now()
	err = h.DB.Write(c.Ctx(), func(tx *store.Tx) error {
		// The code goes whatever happens next: a code that failed once
		// (a wrong verifier, say) may have been stolen.
		grant, err := tx.TakeOAuthCode(c.Ctx(), store.HashToken(code))
		switch {
		case errors.Is(err, store.ErrNotFound):
			return errInvalidGrant
		case err != nil:
			return err
		case grant.AppID != app.ID || grant.RedirectURI != redirect || now.After(grant.ExpiresAt):
			return errInvalidGrant
		case grant.CodeChallenge != "" && !pkceMatches(grant.CodeChallenge, verifier):
			return errInvalidGrant
		}
		t.ActorID, t.Scopes = grant.ActorID, grant.Scopes
		return tx.IssueOAuthToken(c.Ctx(), t, store.HashToken(secret))
	})
	if errors.Is(err, errInvalidGrant) {
		// Take the code out anyway (the transaction that took it rolled
		// back with the error).
		h.DB.TakeOAuthCode(c.Ctx(), store.HashToken(code))
		return errInvalidGrant
	}
	if err != nil {
		return err
	}
	return c.JSON(Token{AccessToken: secret, TokenType: "Bearer", Scope: strings.Join(t.Scopes, " "), CreatedAt: t.CreatedAt.Unix()})
}

// pkceMatches checks a code_verifier against the S256 challenge (RFC
// 7636 section 4.6): BASE64URL(SHA256(verifier)), without padding.
func pkceMatches(challenge, verifier string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return sameToken(base64.RawURLEncoding.EncodeToString(sum[:]), challenge)
}

// revoke serves POST /oauth/revoke (RFC 7009): the app's token goes; a
// token that is unknown is answered the same (200, {}), one of another
// app's is refused.
func (h *Handler) revoke(c *Call) error {
	app, err := h.client(c)
	if err != nil {
		return err
	}
	hash := store.HashToken(c.Params.Get("token"))
	t, err := h.DB.OAuthTokenByHash(c.Ctx(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return c.JSON(map[string]any{})
	case err != nil:
		return err
	case t.AppID != app.ID:
		return oauthError(http.StatusForbidden, "unauthorized_client", "You are not authorized to revoke this token")
	}
	if _, err := h.DB.RevokeOAuthTokenOfApp(c.Ctx(), app.ID, hash); err != nil {
		return err
	}
	return c.JSON(map[string]any{})
}

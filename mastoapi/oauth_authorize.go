package mastoapi

import (
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"herald/login"
	"herald/store"
)

// The authorize page: Herald's own log-in and consent form, one page with
// no JavaScript. Herald keeps no browser session: every authorization
// asks for the account's password, so force_login is always honoured.
// The form is protected against cross-site posting by a token that must
// match a cookie set with the page (login CSRF); the page may not be
// framed.

const (
	csrfCookie   = "herald_oauth"
	formLifetime = time.Hour
	codeLifetime = 10 * time.Minute // Doorkeeper's default
)

// dummyHash is checked when the account does not exist or has no
// password, so a wrong account name costs the same time as a wrong
// password and the page tells nobody which accounts exist.
var dummyHash = sync.OnceValue(func() string {
	h, _ := login.HashPassword("not a password of anyone's")
	return h
})

// authRequest is an authorization request, from the query of GET
// /oauth/authorize or the form that POSTs it back.
type authRequest struct {
	app                 *store.OAuthApp
	redirectURI         string
	scopes              []string
	state               string
	codeChallenge       string
	codeChallengeMethod string
}

// parseAuthRequest checks an authorization request. An error before the
// redirect URI is known to be the app's is shown on a page (never
// redirected: that would send a browser anywhere); a later one is
// returned as an OAuth error for the redirect.
func (h *Handler) parseAuthRequest(c *Call) (req *authRequest, pageErr string, oauthErr *Error) {
	p := c.Params
	app, err := h.DB.OAuthAppByClientID(c.Ctx(), p.Get("client_id"))
	if err != nil {
		return nil, "The app asking for access is not registered here (unknown client_id).", nil
	}
	req = &authRequest{app: app, redirectURI: p.Get("redirect_uri"), state: p.Get("state"),
		codeChallenge: p.Get("code_challenge"), codeChallengeMethod: p.Get("code_challenge_method")}
	if req.redirectURI == "" && len(app.RedirectURIs) == 1 {
		req.redirectURI = app.RedirectURIs[0]
	}
	if !redirectAllowed(app.RedirectURIs, req.redirectURI) {
		return nil, "The redirect_uri is not one the app registered.", nil
	}
	var ok bool
	req.scopes, ok = ParseScopes(p.Get("scope"), []string{"read"})
	switch {
	case p.Get("response_type") != "code":
		return req, "", &Error{Msg: "unsupported_response_type", Desc: "The authorization server does not support this response type."}
	case !ok || !subset(req.scopes, app.Scopes):
		return req, "", &Error{Msg: "invalid_scope", Desc: "The requested scope is invalid, unknown, or malformed."}
	case req.codeChallenge != "" && req.codeChallengeMethod != "S256":
		return req, "", &Error{Msg: "invalid_request", Desc: "The code_challenge_method must be S256."}
	}
	return req, "", nil
}

// redirectAllowed reports whether uri is one of the registered ones:
// the same string, or for an http loopback URI (127.0.0.1, [::1],
// localhost) the same but for the port, which RFC 8252 section 7.3 lets
// a native app choose when it asks.
func redirectAllowed(registered []string, uri string) bool {
	for _, r := range registered {
		if r == uri {
			return true
		}
		a, errA := url.Parse(r)
		b, errB := url.Parse(uri)
		if errA == nil && errB == nil && a.Scheme == "http" && b.Scheme == "http" && loopback(a.Hostname()) &&
			a.Hostname() == b.Hostname() && a.Path == b.Path && a.RawQuery == b.RawQuery && b.Fragment == "" {
			return true
		}
	}
	return false
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// authorizePage serves GET /oauth/authorize.
func (h *Handler) authorizePage(c *Call) error {
	req, pageErr, oauthErr := h.parseAuthRequest(c)
	switch {
	case pageErr != "":
		return h.page(c, http.StatusBadRequest, "error", map[string]any{"Message": pageErr})
	case oauthErr != nil:
		return h.redirectError(c, req, oauthErr)
	}
	return h.renderAuthorize(c, req, http.StatusOK, "", "")
}

// renderAuthorize shows the form with a fresh CSRF token.
func (h *Handler) renderAuthorize(c *Call, req *authRequest, status int, username, flash string) error {
	token := store.NewToken()
	http.SetCookie(c.W, &http.Cookie{Name: csrfCookie, Value: token, Path: "/oauth/authorize", MaxAge: int(formLifetime / time.Second),
		HttpOnly: true, Secure: h.Instance.Scheme == "https", SameSite: http.SameSiteStrictMode})
	var scopes []map[string]string
	for _, s := range req.scopes {
		scopes = append(scopes, map[string]string{"Name": s, "Text": scopeText(s)})
	}
	website := ""
	if webURL(req.app.Website) {
		website = req.app.Website
	}
	return h.page(c, status, "authorize", map[string]any{
		"App": req.app.Name, "Website": website, "Scopes": scopes, "Scope": strings.Join(req.scopes, " "),
		"ClientID": req.app.ClientID, "RedirectURI": req.redirectURI, "State": req.state,
		"CodeChallenge": req.codeChallenge, "CodeChallengeMethod": req.codeChallengeMethod,
		"CSRF": token, "Username": username, "Flash": flash,
	})
}

// approve serves POST /oauth/authorize: the form sent back, with the
// account's name and password and the decision.
func (h *Handler) approve(c *Call) error {
	req, pageErr, oauthErr := h.parseAuthRequest(c)
	switch {
	case pageErr != "":
		return h.page(c, http.StatusBadRequest, "error", map[string]any{"Message": pageErr})
	case oauthErr != nil:
		return h.redirectError(c, req, oauthErr)
	}
	cookie, err := c.R.Cookie(csrfCookie)
	if err != nil || !sameToken(c.Params.Get("csrf"), cookie.Value) {
		return h.renderAuthorize(c, req, http.StatusForbidden, "", "This form expired or did not come from this page: try again.")
	}
	if c.Params.Get("decision") == "deny" {
		return h.redirectError(c, req, &Error{Msg: "access_denied", Desc: "The resource owner or authorization server denied the request."})
	}
	username := c.Params.Get("username")
	client := clientAddress(c.R)
	if wait, ok := h.limit.Allow(client); !ok {
		c.W.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
		h.Logger.Warn("client API: log-in refused, too many failures", "remote", c.R.RemoteAddr)
		return h.renderAuthorize(c, req, http.StatusTooManyRequests, username, "Too many failed log-ins: wait a minute and try again.")
	}
	actor, err := h.checkPassword(c, username, c.Params.Get("password"))
	if err != nil {
		return err
	}
	if actor == nil {
		h.limit.Failed(client)
		h.Logger.Warn("client API: failed log-in", "remote", c.R.RemoteAddr)
		return h.renderAuthorize(c, req, http.StatusUnauthorized, username, "Wrong account or password.")
	}
	code := store.NewToken()
	if err := h.DB.CreateOAuthCode(c.Ctx(), &store.OAuthCode{AppID: req.app.ID, ActorID: actor.ID, RedirectURI: req.redirectURI,
		Scopes: req.scopes, CodeChallenge: req.codeChallenge, ExpiresAt: h.Now().Add(codeLifetime)}, store.HashToken(code)); err != nil {
		return err
	}
	h.Logger.Info("client API: authorized an app", "actor", actor.Name, "app", req.app.Name)
	if req.redirectURI == OOB {
		return h.page(c, http.StatusOK, "code", map[string]any{"App": req.app.Name, "Code": code})
	}
	return h.redirect(c, req, url.Values{"code": {code}})
}

// checkPassword returns the local actor that username names (its name,
// @name or name@domain) if password is its password, nil if not.
func (h *Handler) checkPassword(c *Call, username, password string) (*store.Actor, error) {
	name := strings.TrimPrefix(strings.TrimSpace(strings.ToLower(username)), "@")
	if local, domain, ok := strings.Cut(name, "@"); ok && strings.EqualFold(domain, h.Instance.Domain) {
		name = local
	}
	hash := dummyHash()
	actor, err := h.DB.ActorByName(c.Ctx(), name)
	if err == nil {
		if hash, err = h.DB.ActorPasswordHash(c.Ctx(), actor.ID); errors.Is(err, store.ErrNotFound) {
			actor, hash = nil, dummyHash()
		} else if err != nil {
			return nil, err
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if !login.CheckPassword(hash, password) || actor == nil {
		return nil, nil
	}
	return actor, nil
}

// redirectError sends an OAuth error to the app's redirect URI (or shows
// it, for the out-of-band URI).
func (h *Handler) redirectError(c *Call, req *authRequest, e *Error) error {
	if req.redirectURI == OOB {
		return h.page(c, http.StatusBadRequest, "error", map[string]any{"Message": e.Desc})
	}
	return h.redirect(c, req, url.Values{"error": {e.Msg}, "error_description": {e.Desc}})
}

// redirect sends the browser to the request's redirect URI with params
// (and the state) added to its query.
func (h *Handler) redirect(c *Call, req *authRequest, params url.Values) error {
	if req.state != "" {
		params.Set("state", req.state)
	}
	sep := "?"
	if strings.Contains(req.redirectURI, "?") {
		sep = "&"
	}
	c.W.Header().Set("Location", req.redirectURI+sep+params.Encode())
	c.W.WriteHeader(http.StatusFound)
	return nil
}

// page renders an OAuth page, never framed, never cached.
func (h *Handler) page(c *Call, status int, name string, data map[string]any) error {
	data["Domain"] = h.Instance.Domain
	hd := c.W.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	c.W.WriteHeader(status)
	return h.pages.Render(c.W, name, data)
}

func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// clientAddress is what a failed log-in is counted against: the peer's
// IP. Behind a reverse proxy that is the proxy's, so the limit is then one
// for everyone, the safe way round (as the console's).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// scopeText says in words what a scope lets an app do.
func scopeText(s string) string {
	top, sub, _ := strings.Cut(s, ":")
	switch top {
	case "profile":
		return "see your profile"
	case "follow":
		return "see and change who you follow, block and mute"
	case "push":
		return "receive push notifications"
	case "admin":
		return "moderate the server (Herald serves none of this)"
	}
	verb := map[string]string{"read": "read", "write": "change"}[top]
	if sub == "" {
		return verb + " everything of your account"
	}
	return verb + " your " + strings.ReplaceAll(sub, "_", " ")
}

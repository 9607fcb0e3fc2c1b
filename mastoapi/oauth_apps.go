package mastoapi

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"herald/store"
)

// OOB is the redirect URI that asks the authorize page to show the code
// instead of redirecting (RFC 6749's out-of-band flow, Doorkeeper's
// native_redirect_uri).
const OOB = "urn:ietf:wg:oauth:2.0:oob"

// App limits, Mastodon's (app/models/doorkeeper/application.rb's
// validations: a name of at most 60 characters, URIs of at most 2000).
const (
	maxAppName = 60
	maxURI     = 2000
)

// createApp serves POST /api/v1/apps: client_name, redirect_uris (one a
// line, or a list), scopes (default read) and website, from JSON, a form
// or the query.
func (h *Handler) createApp(c *Call) error {
	p := c.Params
	name := strings.TrimSpace(p.Get("client_name"))
	var clean []string
	for _, v := range p.List("redirect_uris") {
		for _, u := range strings.Split(v, "\n") {
			if u = strings.TrimSpace(u); u != "" {
				clean = append(clean, u)
			}
		}
	}
	scopes, ok := ParseScopes(p.Get("scopes"), []string{"read"})
	website := strings.TrimSpace(p.Get("website"))
	switch {
	case name == "":
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Application name can't be blank")
	case utf8.RuneCountInString(name) > maxAppName:
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Application name is too long (maximum is 60 characters)")
	case len(clean) == 0:
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Redirect URI can't be blank")
	case !ok:
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Scopes doesn't match configured on the server.")
	case website != "" && !webURL(website):
		return Errorf(http.StatusUnprocessableEntity, "Validation failed: Website is invalid")
	}
	for _, u := range clean {
		if why := redirectURIProblem(u); why != "" {
			return Errorf(http.StatusUnprocessableEntity, "Validation failed: Redirect URI "+why)
		}
	}
	clientID, secret := store.NewToken(), store.NewToken()
	app := &store.OAuthApp{ClientID: clientID, SecretHash: store.HashToken(secret), Name: name, Website: website, RedirectURIs: clean, Scopes: scopes}
	if err := h.DB.CreateOAuthApp(c.Ctx(), app); err != nil {
		return err
	}
	out := appEntity(app)
	out.VapidKey = h.vapidPublicKey(c.Ctx())
	out.ClientID, out.ClientSecret, out.SecretExpiresAt = clientID, secret, new(int64)
	return c.JSON(out)
}

// verifyApp serves GET /api/v1/apps/verify_credentials: the token's app.
func (h *Handler) verifyApp(c *Call) error {
	app, err := h.DB.OAuthAppByID(c.Ctx(), c.Token.AppID)
	if err != nil {
		return err
	}
	out := appEntity(app)
	out.VapidKey = h.vapidPublicKey(c.Ctx())
	return c.JSON(out)
}

// Application is Mastodon's Application entity; CredentialApplication
// adds the client id and secret, shown once, when the app registers.
type Application struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Website         *string  `json:"website"`
	Scopes          []string `json:"scopes"`
	RedirectURI     string   `json:"redirect_uri"`
	RedirectURIs    []string `json:"redirect_uris"`
	VapidKey        string   `json:"vapid_key"`
	ClientID        string   `json:"client_id,omitempty"`
	ClientSecret    string   `json:"client_secret,omitempty"`
	SecretExpiresAt *int64   `json:"client_secret_expires_at,omitempty"`
}

func appEntity(a *store.OAuthApp) Application {
	out := Application{ID: ID(a.ID), Name: a.Name, Scopes: a.Scopes, RedirectURI: strings.Join(a.RedirectURIs, "\n"), RedirectURIs: a.RedirectURIs}
	if a.Website != "" {
		out.Website = &a.Website
	}
	return out
}

// redirectURIProblem says what is wrong with a redirect URI an app
// registers, "" if nothing, as Doorkeeper judges them: absolute, without
// a fragment, not a script scheme; custom schemes (an app's own, such as
// com.tapbots.Ivory.10217:/request_token) and http are accepted, and so is
// the out-of-band URI.
func redirectURIProblem(s string) string {
	if s == OOB {
		return ""
	}
	if len(s) > maxURI {
		return "is too long"
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Scheme == "":
		return "must be an absolute URI."
	case u.Fragment != "" || strings.Contains(s, "#"):
		return "cannot contain a fragment."
	}
	switch strings.ToLower(u.Scheme) {
	case "data", "vbscript", "javascript":
		return "is forbidden by the server."
	case "http", "https":
		if u.Host == "" {
			return "must be an absolute URI."
		}
	}
	return ""
}

// webURL reports whether s is an http(s) URL with a host.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && len(s) <= maxURI
}

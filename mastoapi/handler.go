package mastoapi

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/httpapi"
	"herald/login"
	"herald/outbox"
	"herald/policy"
	"herald/store"
	"herald/web/templates"
)

// Config is what the client API is built on: the node's parts.
type Config struct {
	DB        *store.DB
	Instance  federation.Instance
	Publisher *outbox.Publisher // the one way out: follows, blocks, profile Updates
	Fetcher   *federation.Fetcher
	// Policy is the operator's moderation, applied to the statuses pages
	// show (moderated.go); nil applies none.
	Policy  *policy.Live
	Logger  *slog.Logger
	Now     func() time.Time
	Version string
	// HideSocialGraph hides followers and following lists from everyone
	// but the actor itself (serve --hide-social-graph).
	HideSocialGraph bool
}

// Handler serves the client API.
type Handler struct {
	Config
	pages    templates.Pages
	limit    *login.Limiter
	rendered accountCache
	streams  hub // the streaming API's connections and the VAPID key (stream_hub.go, push.go)
}

// New builds the client API's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	pages, err := templates.ParseOAuth(template.FuncMap{})
	if err != nil {
		return nil, err
	}
	return &Handler{Config: cfg, pages: pages, limit: login.NewLimiter(cfg.Now)}, nil
}

// Access is who may call a route.
type Access int

// The access levels, as Mastodon's controllers declare them.
const (
	// Public routes answer without a token; a token sent must be valid
	// and have the route's scope (authorize_if_got_token!).
	Public Access = iota
	// AppToken routes need a token, an app's own or a user's
	// (doorkeeper_authorize!).
	AppToken
	// UserToken routes need a token of a logged-in actor: an app's own
	// token gets 422 (require_user!).
	UserToken
)

// Route is one endpoint: its method and chi pattern, who may call it,
// the scopes it accepts (any of them, each also granted by its parents:
// see Covers), and its handler. routes.go lists them all.
type Route struct {
	Method  string
	Pattern string
	Access  Access
	Scopes  []string
	Handle  func(*Call) error
}

// Call is one request to a route, authorized and with its parameters
// read.
type Call struct {
	W      http.ResponseWriter
	R      *http.Request
	Params *Params
	// Token is the request's access token, nil on a public route called
	// without one.
	Token *store.OAuthToken
	// Actor is the token's local actor, nil for an app's own token.
	Actor *store.Actor
	h     *Handler
}

// Ctx is the request's context.
func (c *Call) Ctx() context.Context { return c.R.Context() }

// Mount adds the client API's routes, the OAuth endpoints and the
// well-known documents to r (the server's root router, under which the
// app API keeps /api/v1/actors/...). Wrap the root in CORS too.
func (h *Handler) Mount(r chi.Router) {
	for _, rt := range h.routes() {
		r.Method(rt.Method, rt.Pattern, h.serve(rt))
	}
	for _, p := range imagePaths {
		r.Get(p, missing)
	}
	h.mountStreaming(r)
}

// serve wraps a route's handler: cache headers, the token and its scope,
// the parameters, and the error answer.
func (h *Handler) serve(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Mastodon's set_cache_headers: nothing of an account's is cached.
		w.Header().Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
		c := &Call{W: w, R: r, h: h}
		err := h.fromHeader(c, rt)
		if err == nil {
			c.Params, err = readParams(r)
		}
		if err == nil && c.Token == nil {
			err = h.tokenFromParams(c, rt)
		}
		if err == nil {
			err = rt.Handle(c)
		}
		if err != nil {
			h.fail(c, err)
		}
	})
}

// fromHeader finds the request's token (Authorization: Bearer) and
// checks it against the route. A token in the access_token parameter is
// looked at once the parameters are read (tokenFromParams).
func (h *Handler) fromHeader(c *Call, rt Route) error {
	token, ok := federation.BearerToken(c.R)
	if !ok {
		return nil // perhaps in the parameters: tokenFromParams
	}
	return h.useToken(c, rt, token)
}

// tokenFromParams takes the token from the access_token parameter, as
// Doorkeeper does after the header; without one a route that needs a
// token answers 401.
func (h *Handler) tokenFromParams(c *Call, rt Route) error {
	if t := c.Params.Get("access_token"); t != "" {
		return h.useToken(c, rt, t)
	}
	if rt.Access != Public {
		return ErrInvalidToken
	}
	return nil
}

// useToken looks the token up and checks its scopes and kind.
func (h *Handler) useToken(c *Call, rt Route, token string) error {
	ctx := c.Ctx()
	t, err := h.DB.OAuthTokenByHash(ctx, store.HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return ErrInvalidToken
	}
	if err != nil {
		return err
	}
	if len(rt.Scopes) > 0 && !Granted(t.Scopes, rt.Scopes) {
		return ErrOutsideScopes
	}
	if t.ActorID != 0 {
		if c.Actor, err = h.DB.ActorByID(ctx, t.ActorID); err != nil {
			return err
		}
	} else if rt.Access == UserToken {
		return ErrNeedsUser
	}
	c.Token = t
	if now := h.Now(); now.Sub(t.LastUsedAt) > time.Hour {
		if err := h.DB.TouchOAuthToken(ctx, t.ID, now); err != nil {
			h.Logger.Warn("client API: could not note a token's use", "err", err)
		}
	}
	return nil
}

// fail answers err: an *Error as it says, a missing row 404, a refusal of
// the outbox 422 with its reason, lack of space 503, anything else 500
// (logged, the message not shown).
func (h *Handler) fail(c *Call, err error) {
	var e *Error
	var in *outbox.InputError
	switch {
	case errors.As(err, &e):
		if e.Status == http.StatusUnauthorized {
			c.W.Header().Set("WWW-Authenticate", `Bearer realm="Doorkeeper", error="invalid_token", error_description="The access token is invalid"`)
		}
		writeError(c.W, e)
	case errors.Is(err, store.ErrNotFound):
		writeError(c.W, ErrNotFound)
	case errors.As(err, &in):
		writeError(c.W, Errorf(http.StatusUnprocessableEntity, in.Msg))
	case store.IsOutOfSpace(err):
		httpapi.OutOfSpace(c.W, err) // 503 with Retry-After, as every API of Herald's

	case errors.Is(err, context.Canceled):
	default:
		h.Logger.Error("client API failed", "method", c.R.Method, "path", c.R.URL.Path, "err", err)
		writeError(c.W, Errorf(http.StatusInternalServerError, "Something went wrong on our side"))
	}
}

// IsUpload reports whether r is one of the client API's uploads (avatar
// and header, media), which may be larger than the server's body limit.
func IsUpload(r *http.Request) bool {
	p := r.URL.Path
	return (r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodPost) &&
		(p == "/api/v1/accounts/update_credentials" || p == "/api/v1/media" || p == "/api/v2/media" || strings.HasPrefix(p, "/api/v1/media/"))
}

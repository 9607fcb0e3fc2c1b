// Package admin is the operator's console under /admin: server-rendered
// pages (no JavaScript, inline SVG charts, readable on a phone and in dark
// mode) behind a password login, showing the delivery queue and its
// history, one row per remote host, each post's text and deliveries, the
// blocklist and allowlist, the inbox's recent refusals and drops, the
// actors, relays, webhooks, jobs and the log level; and acting on them as
// the CLI's commands do, through the same store calls and jobs (retry,
// pause, resume, block, actors' profiles, tokens, keys, moves and
// deletion, follow requests, relays, webhooks). What cannot be undone asks
// first, on a page of its own (confirm.go).
//
// The password is set with `herald admin password` and stored as a bcrypt
// hash; a session is a random cookie (HttpOnly, SameSite=Strict, Secure
// under https) stored as its SHA-256, and every form carries the session's
// CSRF token. Failed logins are rate limited. The console runs inside the
// server, so its actions call the store and the node directly.
package admin

import (
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/inbox"
	"herald/login"
	"herald/node"
	"herald/store"
	"herald/web/templates"
)

// Config is what the console needs from the server.
type Config struct {
	Node  *node.Node
	Inbox *inbox.Metrics // the recent refusals and drops
	// PublicBlocklist says whether the status page lists the blocklist,
	// which the blocks page mentions.
	PublicBlocklist bool
	// Started is when the server started, for the uptime.
	Started time.Time
}

// Handler serves the console.
type Handler struct {
	cfg    Config
	db     *store.DB
	inst   federation.Instance
	log    *slog.Logger
	now    func() time.Time
	pages  templates.Pages
	limit  *login.Limiter
	secure bool // cookies only over https
}

// New builds the console.
func New(cfg Config) (*Handler, error) {
	n := cfg.Node
	h := &Handler{cfg: cfg, db: n.DB, inst: n.Instance, log: n.Logger, now: n.Now, secure: n.Instance.Scheme == "https"}
	h.limit = login.NewLimiter(h.now)
	pages, err := templates.ParseAdmin(template.FuncMap{
		"when":    h.when,
		"hostURL": hostURL,
		"short":   short,
	})
	if err != nil {
		return nil, err
	}
	h.pages = pages
	return h, nil
}

// Routes is the console's router, to mount at /admin.
func (h *Handler) Routes() chi.Router {
	r := chi.NewRouter()
	r.Use(securityHeaders)
	r.Get("/login", h.loginPage)
	r.Post("/login", h.login)
	r.Group(func(r chi.Router) {
		r.Use(h.requireSession)
		r.Post("/logout", h.logout)
		r.Get("/", h.overview)
		r.Get("/hosts", h.hosts)
		r.Get("/hosts/{host}", h.host)
		r.Post("/hosts/{host}/retry", h.retryHost)
		r.Post("/hosts/{host}/pause", h.pauseHost)
		r.Post("/hosts/{host}/resume", h.resumeHost)
		r.Post("/hosts/{host}/block", h.asks(h.hostBlocking, h.blockHost))
		r.Post("/hosts/{host}/signatures/reset", h.resetSignatures)
		r.Post("/deliveries/{id}/retry", h.retryDelivery)
		r.Get("/posts", h.posts)
		r.Post("/posts/retry", h.retryPost)
		r.Get("/blocks", h.blocks)
		r.Post("/blocks", h.asks(h.domainBlocking, h.addBlock))
		r.Post("/blocks/remove", h.removeBlock)
		r.Get("/inbox", h.inboxPage)
		r.Get("/actors", h.actors)
		r.Post("/actors", h.addActor)
		r.Post("/actors/{name}/token", h.asks(h.tokenRenewal, h.newToken))
		r.Post("/actors/{name}/answer", h.answerFollow)
		h.sectionRoutes(r)
	})
	r.NotFound(h.notFound)
	r.MethodNotAllowed(h.methodNotAllowed)
	return r
}

// securityHeaders keeps the console out of caches and frames, and lets a
// page load nothing but itself: no script runs, no CDN is reached.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "same-origin")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		next.ServeHTTP(w, r)
	})
}

// navItems are the console's sections.
var navItems = []struct{ Name, URL string }{
	{"Overview", "/admin"}, {"Hosts", "/admin/hosts"}, {"Posts", "/admin/posts"},
	{"Blocks", "/admin/blocks"}, {"Reports", "/admin/reports"}, {"Inbox", "/admin/inbox"}, {"Actors", "/admin/actors"},
	{"Relays", "/admin/relays"}, {"Webhooks", "/admin/webhooks"}, {"Jobs", "/admin/jobs"}, {"Server", "/admin/server"},
}

type navItem struct {
	Name, URL string
	Here      bool
}

// render writes a console page. data gets the fields every page uses.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data map[string]any) {
	data["Domain"] = h.inst.Domain
	if s := sessionOf(r); s != nil {
		data["CSRF"] = s.CSRF
		var nav []navItem
		for _, n := range navItems {
			here := r.URL.Path == n.URL || (n.URL != "/admin" && strings.HasPrefix(r.URL.Path, n.URL))
			nav = append(nav, navItem{n.Name, n.URL, here})
		}
		data["Nav"] = nav
	}
	if _, ok := data["Flash"]; !ok {
		if msg := r.URL.Query().Get("done"); msg != "" {
			data["Flash"] = flashes[msg]
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := h.pages.Render(w, page, data); err != nil {
		h.log.Error("admin: render", "page", page, "err", err)
	}
}

// flashes are the messages a redirect after an action may show, by key:
// the URL carries a key, never text, so no one can make the console say
// something it did not.
var flashes = map[string]string{
	"retried":   "Failed deliveries requeued; they go out now.",
	"paused":    "Deliveries paused: held without spending retries.",
	"resumed":   "Deliveries resumed: the held ones go out, at most 4 at a time.",
	"blocked":   "Blocked. Follows with the domain were removed.",
	"unblocked": "Block lifted.",
	"answered":  "Done: the answer is being sent.",
	"nothing":   "Nothing matched: nothing changed.",

	"signatures-reset":  "Forgotten: the host is sent draft-cavage signatures until it shows evidence again.",
	"signatures-resent": "Forgotten, and what was delivered to the host in the last 7 days is being sent again.",
}

// fail answers a request the console could not do.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.log.Error("admin: request failed", "path", r.URL.Path, "err", err)
	http.Error(w, "Something went wrong on our side.", http.StatusInternalServerError)
}

// when renders a time for the console: UTC, with how long ago (or from
// now) it is.
func (h *Handler) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := h.now().Sub(t)
	rel := templates.Duration(d.Abs())
	if d < 0 {
		rel = "in " + rel
	} else {
		rel += " ago"
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC (" + rel + ")"
}

// hostURL is the console page of a host.
func hostURL(host string) string { return "/admin/hosts/" + url.PathEscape(host) }

// short is the last part of an id, for tables.
func short(iri string) string { return iri[strings.LastIndex(iri, "/")+1:] }

func urlQuery(s string) string { return url.QueryEscape(s) }

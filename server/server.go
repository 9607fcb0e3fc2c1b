// Package server assembles Herald's HTTP surface: it builds the chi router
// from the packages below it (webfinger, nodeinfo, and later inbox and
// outbox), adds middleware (request ids, logging, panic recovery, body
// limits), serves /metrics, /healthz and the status page, and runs the
// listener with a graceful shutdown.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"herald/admin"
	"herald/appapi"
	"herald/federation"
	"herald/followersync"
	"herald/httpapi"
	"herald/inbox"
	"herald/mastoapi"
	"herald/node"
	"herald/nodeinfo"
	"herald/outbox"
	"herald/outbox/delivery"
	"herald/outbox/media"
	"herald/store"
	"herald/web/templates"
	"herald/webfinger"
)

// MaxUploadBytes caps an upload: the largest file media.Probe accepts and
// room for the multipart framing.
const MaxUploadBytes = media.VideoLimit + 1<<20

// Config is what the HTTP server adds to its node.
type Config struct {
	// HideSocialGraph serves followers and following collections as counts
	// only, without the lists.
	HideSocialGraph bool
	// TLS, when set, makes the server speak HTTPS with this certificate.
	TLS *Certificate
	// TrustProxy takes the client's address (X-Forwarded-For, Forwarded)
	// and scheme (X-Forwarded-Proto, for RFC 9421's @target-uri) from the
	// requests of trusted proxies (clientaddr.go).
	TrustProxy bool
	// TrustedProxies are the proxies TrustProxy believes; empty means
	// LoopbackProxies.
	TrustedProxies []netip.Prefix
	// ShowBlocklist says who sees the blocked domains and their reasons on
	// the public status page: BlocklistNobody (the default; the page
	// shows only how many) or BlocklistEveryone.
	ShowBlocklist string
	// MetricsAccess says who may read /metrics without the token:
	// MetricsLoopback (the default) or MetricsEveryone.
	MetricsAccess string
	// MetricsToken, when set, is the bearer token /metrics requires (of
	// everyone: loopback callers too).
	MetricsToken string
	// MetricsListener says that /metrics is served on a listener of its
	// own (RunMetrics, --metrics-listen), not on the main one.
	MetricsListener bool
	// AuthorizedFetch serves objects, activities and collections only to
	// signed GETs, and the actor document unsigned only in its minimal
	// form (authorized.go).
	AuthorizedFetch bool
	// InboxRate is how many inbox requests one remote host may make
	// (inbox.Rate); the zero Rate limits nothing.
	InboxRate inbox.Rate
}

// Server is Herald's HTTP server: the node's handlers on one router.
type Server struct {
	cfg     Config
	node    *node.Node
	db      *store.DB
	inst    federation.Instance
	log     *slog.Logger
	pages   templates.Pages
	started time.Time
	panels  []PanelFunc
	router  chi.Router
	inbox   *inbox.Handler
	outbox  *outbox.Handler
	space   spaceWatch // ready.go
	http    *httpMetrics
	admin   *admin.Handler
	clients *mastoapi.Handler // the Mastodon client API (clientapi.go)
}

// New builds the server and its router on n.
func New(ctx context.Context, cfg Config, n *node.Node) (*Server, error) {
	pages, err := templates.Parse()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, node: n, db: n.DB, inst: n.Instance, log: n.Logger, pages: pages, started: n.Now()}
	s.registerSpaceMetrics()
	s.registerReportMetrics()
	s.inbox = s.newInbox()
	s.outbox = s.newOutbox()
	// The public page shows what the instance publishes: its actors, their
	// public posts, and the size of the blocklist. What the operator needs
	// about the queue, hosts and drops is in the console (/admin).
	s.AddPanel(s.postsPanel)
	s.AddPanel(s.blockedPanel)
	s.admin, err = admin.New(admin.Config{Node: n, Inbox: s.inbox.Metrics, PublicBlocklist: cfg.ShowBlocklist == BlocklistEveryone, Started: s.started})
	if err != nil {
		return nil, err
	}
	if s.clients, err = s.newClientAPI(); err != nil {
		return nil, err
	}
	s.http = newHTTPMetrics(n.Registry)
	s.router = s.routes()
	s.http.known(s.router)
	return s, nil
}

// Registry is where packages register their Prometheus metrics.
func (s *Server) Registry() prometheus.Registerer { return s.node.Registry }

// ServeHTTP makes the server an http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	if s.cfg.TrustProxy {
		r.Use(s.fromProxy)
	}
	r.Use(middleware.RequestID)
	r.Use(s.logRequests)
	r.Use(s.recoverPanics)
	r.Use(limitBody)
	r.Use(s.securityHeaders)
	r.Use(mastoapi.CORS)
	r.Use(s.suspended)

	inst := s.inst
	wf := &webfinger.Handler{Instance: inst, Exists: s.actorExists}
	r.Get("/.well-known/webfinger", wf.ServeHTTP)
	r.Get("/.well-known/host-meta", webfinger.HostMeta(inst))
	ni := &nodeinfo.Handler{Instance: inst, Version: s.node.Version, Usage: s.usage}
	r.Get("/.well-known/nodeinfo", ni.WellKnown)
	r.Get("/nodeinfo/2.0", ni.Document("2.0"))
	r.Get("/nodeinfo/2.1", ni.Document("2.1"))

	r.Get("/actor", s.instanceActor)
	r.Get("/users/{name}", s.actor)
	r.Get("/users/{name}/ed25519-key", s.ed25519Key)
	r.Get("/@{name}", s.actor)
	r.Get("/authorize_interaction", s.interact)

	r.Post("/inbox", s.inbox.ServeHTTP)
	r.Post("/actor/inbox", s.inbox.ServeHTTP)
	r.Get("/actor/inbox", s.inbox.ReadRelayFeed)
	r.Post("/users/{name}/inbox", s.inbox.ServeHTTP)
	r.Get("/users/{name}/inbox", s.inbox.Read)

	r.Post("/users/{name}/outbox", s.outbox.Post)
	r.Post("/users/{name}/uploadMedia", s.outbox.Upload)
	r.Get("/media/{file}", s.mediaFile)
	r.Get("/users/{name}/outbox", s.secured("no such actor", false, s.outbox.Outbox))
	r.Get("/users/{name}/outbox/{id}/deliveries", s.outbox.Deliveries)
	r.Get("/users/{name}/statuses/{id}", s.secured("no such object", true, s.outbox.Object))
	r.Get("/users/{name}/statuses/{id}/context", s.secured("no such context", false, s.outbox.ThreadContext))
	r.Get("/users/{name}/statuses/{id}/{collection}", s.secured("no such collection", false, s.outbox.Reactions))
	r.Get("/users/{name}/activities/{id}", s.secured("no such activity", false, s.outbox.Activity))
	r.Get("/users/{name}/followers", s.secured("no such actor", false, s.outbox.Followers))
	r.Get("/users/{name}/following", s.secured("no such actor", false, s.outbox.Following))
	r.Get("/users/{name}/collections/featured", s.secured("no such actor", false, s.outbox.Featured))
	r.Get("/users/{name}/quote_authorizations/{id}", s.outbox.QuoteAuthorization)
	r.Get("/users/{name}/approvals/{id}", s.secured("no such approval", false, s.outbox.Approval))
	r.Get("/tags/{name}", s.tagPage)
	r.Get("/users/{name}/followers_synchronization", s.node.Syncer.ServeHTTP)
	r.Get("/actor/outbox", s.instanceOutbox)
	r.Get("/status/deliveries", s.reportPage)

	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Method(http.MethodGet, "/metrics", s.publicMetrics())
	r.Get("/status", s.status)
	r.Mount("/admin", s.admin.Routes())
	r.Mount(appapi.Prefix, s.appAPI().Routes())
	r.Get("/api/openapi.json", appapi.ServeOpenAPI)
	s.clients.Mount(r)
	r.Get("/", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/status", http.StatusFound) })

	r.NotFound(s.notFound)
	r.MethodNotAllowed(s.methodNotAllowed)
	return r
}

func (s *Server) actorExists(ctx context.Context, name string) (bool, string, error) {
	a, err := s.db.ActorByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	return true, a.MovedTo, nil
}

func (s *Server) usage(ctx context.Context) (nodeinfo.Usage, error) {
	var u nodeinfo.Usage
	n, err := s.db.CountActors(ctx)
	if err != nil {
		return u, err
	}
	// Every actor is driven by an app rather than a person logging in, so
	// every actor counts as active.
	u.Users.Total, u.Users.ActiveMonth, u.Users.ActiveHalfyear = n, n, n
	u.LocalPosts, err = s.localPosts(ctx)
	return u, err
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		s.log.Error("health check failed", "err", err)
		httpapi.JSON(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "error": "database unavailable"})
		return
	}
	httpapi.JSON(w, http.StatusOK, s.seen(r))
}

// Run serves on ln until ctx is cancelled, then shuts down gracefully,
// giving requests in flight up to 10 seconds. The node's background work
// runs separately (node.Run), and stops after the listener.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.clients.CloseStreams) // streams do not end by themselves
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS.TLSConfig())
	}
	go s.watchSpace(ctx)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(shutdownCtx)
	if serveErr := <-errc; err == nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = serveErr
	}
	return err
}

// Node is the node the server serves.
func (s *Server) Node() *node.Node { return s.node }

// Runner is the delivery scheduler; tests drive it with Step.
func (s *Server) Runner() *delivery.Runner { return s.node.Runner }

// FollowersSync is the FEP-8fcf syncer; tests run its queued syncs with
// Step.
func (s *Server) FollowersSync() *followersync.Syncer { return s.node.Syncer }

// Client is the outbound HTTP client (SSRF guard, timeouts).
func (s *Server) Client() *federation.Client { return s.node.Client }

// Instance is the server's public scheme and domain.
func (s *Server) Instance() federation.Instance { return s.inst }

// Inbox is the inbox handler (its metrics hold the recent drops and
// refusals the console shows).
func (s *Server) Inbox() *inbox.Handler { return s.inbox }

// Routes is the router, for tests that visit every route.
func (s *Server) Routes() chi.Routes { return s.router }

// Package node assembles one Herald node from its database: the outbound
// client, the remote actor fetcher, the delivery scheduler, the publisher
// (the one way out for every activity), the followers synchronization and
// the job runner that does the operator's commands. New is the one place
// the object graph is built: `herald serve` builds a node and server/ mounts
// its HTTP handlers on it; tests and benchmarks build the same one. Run does
// the node's background work, all of it in the node's one queue runner
// (package queue): it registers the process, and runs the runner, whose
// queues are the deliveries, the webhooks, the jobs and the followers
// syncs, and whose periodic work is the node's sweeps and samples.
package node

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"herald/federation"
	"herald/federation/signature"
	"herald/followersync"
	"herald/host"
	"herald/jobs"
	"herald/outbox"
	"herald/outbox/delivery"
	"herald/policy"
	"herald/queue"
	"herald/store"
	"herald/webfinger"
	"herald/webhook"
)

// Config is what a node needs beyond its database.
type Config struct {
	// Instance is the scheme and domain of every id, as the database
	// records them (see ResolveInstance).
	Instance federation.Instance
	Version  string
	Logger   *slog.Logger
	// LogLevel is the level Logger logs at; Run follows the database's
	// log level with it. nil leaves the level alone.
	LogLevel *slog.LevelVar
	// Now is the clock (default time.Now); tests inject one.
	Now func() time.Time
	// AllowPrivateNetwork lets the outbound client reach loopback and
	// private addresses (tests and local interop only).
	AllowPrivateNetwork bool
	// ExtraRoots are CAs the outbound client trusts besides the system's;
	// InsecureSkipVerify trusts any certificate (tests only).
	ExtraRoots         []*x509.Certificate
	InsecureSkipVerify bool
	// RetryScale multiplies delivery retry delays (tests only; default 1).
	RetryScale float64
	// DeliveryLease is how long a claimed row of any queue stays with
	// this process without renewal (default 5 minutes; renewed while it
	// lives): the last resort. A dead process's leases are taken over at
	// the next start, or within StaleAfter of its last heartbeat.
	DeliveryLease time.Duration
	// NoFollowersSync turns FEP-8fcf followers synchronization off, both
	// directions.
	NoFollowersSync bool
	// DialContext replaces the outbound client's dialer (tests map host
	// names to loopback addresses with it); nil dials as usual.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Role is what this process does besides its HTTP handlers, which the
	// server mounts or not: policy.RoleAll (the default) and
	// policy.RoleWorker run the delivery scheduler, the job runner, the
	// followers synchronization and the sweeps; policy.RoleWeb runs none of
	// them (only on PostgreSQL, where another process does).
	Role string
	// WebhooksAllowPrivateNetwork lets webhooks reach loopback and private
	// addresses, where apps usually run, whatever AllowPrivateNetwork says
	// for federation.
	WebhooksAllowPrivateNetwork bool
}

// Node is one Herald node: its parts, built by New.
type Node struct {
	Config
	DB *store.DB
	// ProcessID names this process in the processes table and on every
	// lease it takes.
	ProcessID   string
	Registry    *prometheus.Registry
	InstanceKey *store.InstanceKey
	Client      *federation.Client
	Fetcher     *federation.Fetcher
	// Policy is the federation policy every part of the node consults.
	Policy *policy.Live
	// Queues is the queue runner that owns every background pool: the
	// queues of Runner, Jobs and Syncer are its.
	Queues    *queue.Runner
	Runner    *delivery.Runner
	Syncer    *followersync.Syncer
	Publisher *outbox.Publisher
	Jobs      *jobs.Runner
	// noWorker: at the last heartbeat no process did the background work
	// (watched by nodes of RoleWeb).
	noWorker bool

	// Signatures is what the node knows of the signatures each remote
	// host verifies: the inbox and the fetcher record evidence in it, the
	// runner signs by it.
	Signatures *delivery.Signatures
}

// New builds a node on db. It creates the instance actor's key on first
// start.
func New(ctx context.Context, cfg Config, db *store.DB) (*Node, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	key, err := db.InstanceActorKey(ctx, federation.GenerateKeyPEM)
	if err != nil {
		return nil, err
	}
	n := &Node{Config: cfg, DB: db, ProcessID: newProcessID(), InstanceKey: key, Policy: policy.NewLive(db, 0)}
	n.Registry = newRegistry(cfg.Version, cfg.Role)
	n.Client = n.newClient()
	if n.Fetcher, err = n.newFetcher(); err != nil {
		return nil, err
	}
	n.Signatures = delivery.NewSignatures(db, n.Client, cfg.Logger, cfg.Now)
	n.Signatures.Policy = n.Policy
	n.Fetcher.OnActor = n.Signatures.ActorFetched
	n.Syncer = &followersync.Syncer{
		DB: db, Instance: cfg.Instance, Fetcher: n.Fetcher, Metrics: followersync.NewMetrics(n.Registry),
		Logger: cfg.Logger, Now: cfg.Now, Disabled: cfg.NoFollowersSync,
	}
	n.Queues = queue.New(queue.Config{DB: db, Owner: n.ProcessID, Logger: cfg.Logger, Now: cfg.Now, Lease: cfg.DeliveryLease,
		Heartbeat: HeartbeatInterval, StaleAfter: StaleAfter, Register: n.register})
	dcfg := delivery.Config{
		DB: db, Policy: n.Policy, Client: n.Client, Instance: cfg.Instance, Logger: cfg.Logger,
		Metrics: delivery.NewMetrics(n.Registry, db), Now: cfg.Now, Queues: n.Queues,
		RetryScale: cfg.RetryScale, Signatures: n.Signatures,
		Webhooks: delivery.WebhookConfig{
			Client:  webhook.NewClient(cfg.WebhooksAllowPrivateNetwork, federation.UserAgent(cfg.Version, cfg.Instance.Base())),
			Metrics: delivery.NewWebhookMetrics(n.Registry),
		},
	}
	if !cfg.NoFollowersSync {
		dcfg.FollowersHeader = n.Syncer.DeliveryHeader
	}
	n.Runner = delivery.New(dcfg)
	n.Syncer.Wake = n.Runner.Wake
	n.Publisher = &outbox.Publisher{DB: db, Instance: cfg.Instance, Fetcher: n.Fetcher, Runner: n.Runner, Now: cfg.Now, Lookup: n.lookup}
	n.Syncer.Publisher = n.Publisher
	n.Syncer.Attach(n.Queues)
	n.Jobs = &jobs.Runner{DB: db, Policy: n.Policy, Publisher: n.Publisher, Resolve: n.resolve, Logger: cfg.Logger, Now: cfg.Now}
	n.Jobs.Attach(n.Queues)
	return n, nil
}

// newClient builds an outbound HTTP client (SSRF guard, timeouts, the
// operator's trust). Plain http only when ids are http themselves (a
// loopback domain or --scheme http).
func (n *Node) newClient() *federation.Client {
	return federation.NewClient(federation.ClientOptions{
		AllowPrivate:       n.AllowPrivateNetwork,
		AllowHTTP:          n.Instance.Scheme == "http",
		ExtraRoots:         n.ExtraRoots,
		InsecureSkipVerify: n.InsecureSkipVerify,
		UserAgent:          federation.UserAgent(n.Version, n.Instance.Base()),
		DialContext:        n.DialContext,
	})
}

// newFetcher builds the remote actor and key fetcher: GETs signed as the
// instance actor, hosts the federation policy refuses never contacted. It has a client (and
// connection pool) of its own: deliveries to a slow server must not hold
// up the fetch of its keys, which the inbox waits for.
func (n *Node) newFetcher() (*federation.Fetcher, error) {
	priv, err := federation.ParsePrivateKeyPEM(n.InstanceKey.PrivateKeyPEM)
	if err != nil {
		return nil, err
	}
	key := signature.Key{ID: n.Instance.InstanceKeyID(), Private: priv}
	return &federation.Fetcher{
		Store:  actorCache{n.DB},
		Client: n.newClient(),
		Now:    n.Now,
		SignGET: func(req *http.Request) error {
			return signature.Sign(req, nil, key, signature.Cavage, n.Now())
		},
		Blocked: n.refused,
	}, nil
}

// resolve turns what an operator typed (@user@host, user@host or an actor
// URL) into an actor id, with WebFinger through the node's client.
func (n *Node) resolve(ctx context.Context, target string) (string, error) {
	if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
		return target, nil
	}
	return n.lookup(ctx, target)
}

// lookup is WebFinger through the node's client, over the instance's
// scheme (http only for a loopback test instance). A host the federation
// policy refuses is not asked.
func (n *Node) lookup(ctx context.Context, handle string) (string, error) {
	if _, h, err := webfinger.ParseHandle(handle); err == nil {
		a, err := host.ParseAuthority(h)
		if err != nil || n.refused(a.Name) {
			return "", fmt.Errorf("webfinger %s: %w", handle, federation.ErrBlocked)
		}
	}
	return webfinger.Lookup(ctx, n.Client, handle, n.Instance.Scheme)
}

// refused reports whether the federation policy refuses a host: blocked,
// or not allowed in allowlist mode. It fails closed: if the policy cannot
// be read, nobody is contacted.
func (n *Node) refused(h host.Name) bool {
	p, err := n.Policy.Get(context.Background())
	return err != nil || p.Host(h).Refused()
}

// newProcessID mints the id this process registers under.
func newProcessID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newRegistry builds the registry /metrics serves: Go runtime and process
// collectors plus herald_build_info, whose role label tells a dashboard
// which scraped process does the deliveries. The node's parts add their
// federation_* metrics to it.
func newRegistry(version, role string) *prometheus.Registry {
	if role == "" {
		role = policy.RoleAll
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "herald_build_info",
		Help:        "Always 1; the version label says which Herald is running, role what this process does (all, web or worker).",
		ConstLabels: prometheus.Labels{"version": version, "role": role},
	})
	info.Set(1)
	reg.MustRegister(info)
	return reg
}

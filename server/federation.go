package server

import (
	"context"
	"net/http"

	"herald/federation"
	"herald/federation/signature"
	"herald/followersync"
	"herald/inbox"
	"herald/outbox/delivery"
	"herald/store"
)

// newClient builds the outbound HTTP client every fetch and delivery uses.
// Plain http is allowed only when ids are http themselves (a loopback
// domain or --insecure-http).
func newClient(cfg Config) *federation.Client {
	return federation.NewClient(federation.ClientOptions{
		AllowPrivate:       cfg.AllowPrivateNetwork,
		AllowHTTP:          cfg.Instance.Scheme == "http",
		ExtraRoots:         cfg.ExtraRoots,
		InsecureSkipVerify: cfg.InsecureSkipVerify,
		UserAgent:          federation.UserAgent(cfg.Version, cfg.Instance.Base()),
	})
}

// newFetcher builds the remote actor and key fetcher: GETs signed as the
// instance actor, blocked domains never contacted.
func newFetcher(cfg Config, db *store.DB, client *federation.Client, instanceKey *store.InstanceKey) (*federation.Fetcher, error) {
	priv, err := federation.ParsePrivateKeyPEM(instanceKey.PrivateKeyPEM)
	if err != nil {
		return nil, err
	}
	key := signature.Key{ID: cfg.Instance.InstanceKeyID(), Private: priv}
	return &federation.Fetcher{
		Store:  db,
		Client: client,
		Now:    cfg.Now,
		SignGET: func(req *http.Request) error {
			return signature.Sign(req, nil, key, signature.Cavage, cfg.Now())
		},
		Blocked: func(host string) bool {
			blocked, err := db.IsBlocked(context.Background(), host)
			// Fail closed: if the blocklist cannot be read, contact nobody.
			return blocked || err != nil
		},
	}, nil
}

// newInbox builds the inbox handler and registers its metrics.
func (s *Server) newInbox() *inbox.Handler {
	return &inbox.Handler{
		DB:       s.db,
		Instance: s.cfg.Instance,
		Keys:     s.fetcher,
		Metrics:  inbox.NewMetrics(s.registry),
		Logger:   s.cfg.Logger,
		Now:      s.cfg.Now,
		Wake:     s.runner.Wake,
		Limits:   inbox.DefaultLimits(),
		Sync:     s.sync,
	}
}

// newSyncer builds the FEP-8fcf followers synchronization (both
// directions) and registers its metrics.
func (s *Server) newSyncer() *followersync.Syncer {
	return &followersync.Syncer{
		DB:       s.db,
		Instance: s.cfg.Instance,
		Fetcher:  s.fetcher,
		Metrics:  followersync.NewMetrics(s.registry),
		Logger:   s.cfg.Logger,
		Now:      s.cfg.Now,
		Wake:     s.runner.Wake,
		Disabled: s.cfg.NoFollowersSync,
	}
}

// newRunner builds the delivery scheduler and registers its metrics.
func (s *Server) newRunner() *delivery.Runner {
	return delivery.New(delivery.Config{
		DB:         s.db,
		Client:     s.client,
		Instance:   s.cfg.Instance,
		Logger:     s.cfg.Logger,
		Metrics:    delivery.NewMetrics(s.registry, s.db),
		Now:        s.cfg.Now,
		Lease:      s.cfg.DeliveryLease,
		RetryScale: s.cfg.RetryScale,

		NoFollowersSync: s.cfg.NoFollowersSync,
	})
}

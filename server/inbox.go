package server

import "herald/inbox"

// newInbox builds the inbox handler and registers its metrics.
func (s *Server) newInbox() *inbox.Handler {
	return &inbox.Handler{
		DB:        s.db,
		Instance:  s.inst,
		Policy:    s.node.Policy,
		Keys:      s.node.Fetcher,
		Metrics:   inbox.NewMetrics(s.node.Registry),
		Logger:    s.log,
		Now:       s.node.Now,
		Publisher: s.node.Publisher,
		Wake:      s.node.Runner.Wake,
		Limits:    inbox.DefaultLimits(),
		RateLimit: inbox.NewRateLimit(s.cfg.InboxRate),
		Sync:      s.node.Syncer,
		Evidence:  s.node.Signatures,
	}
}

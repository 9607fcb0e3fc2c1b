package server

import "herald/mastoapi"

// newClientAPI builds the Mastodon client API (mastoapi) on the node:
// its publisher (the one way out), fetcher and database.
func (s *Server) newClientAPI() (*mastoapi.Handler, error) {
	h, err := mastoapi.New(mastoapi.Config{
		DB: s.db, Instance: s.inst, Publisher: s.node.Publisher, Fetcher: s.node.Fetcher, Policy: s.node.Policy,
		Logger: s.log, Now: s.node.Now, Version: s.node.Version, HideSocialGraph: s.cfg.HideSocialGraph,
	})
	if err == nil {
		s.node.Jobs.Push = h.SendPush // the job runner sends the client API's Web Push
	}
	return h, err
}

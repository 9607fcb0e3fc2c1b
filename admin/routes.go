package admin

import "github.com/go-chi/chi/v5"

// sectionRoutes are the pages and actions of the sections that do what the
// CLI's commands do (relays, webhooks, jobs, the server's log level, the
// allowlist, one actor), each family in a file of its own. They are
// mounted inside the session group: every one needs a live session, and
// every POST the session's CSRF token. The destructive ones ask first
// (asks, confirm.go).
func (h *Handler) sectionRoutes(r chi.Router) {
	r.Get("/relays", h.relays)
	r.Post("/relays", h.addRelay)
	r.Post("/relays/remove", h.asks(h.relayRemoval, h.removeRelay))

	r.Get("/webhooks", h.webhooks)
	r.Post("/webhooks", h.addWebhook)
	r.Get("/webhooks/{id}", h.webhook)
	r.Post("/webhooks/{id}/pause", h.pauseWebhook)
	r.Post("/webhooks/{id}/resume", h.resumeWebhook)
	r.Post("/webhooks/{id}/redeliver", h.redeliverWebhook)
	r.Post("/webhooks/{id}/delete", h.asks(h.webhookRemoval, h.deleteWebhook))

	r.Get("/jobs", h.jobsPage)
	r.Get("/jobs/{id}", h.jobPage)

	r.Post("/blocks/limit", h.limitDomain)

	r.Get("/reports", h.reportsPage)
	r.Get("/reports/{id}", h.reportPage)
	r.Post("/reports/{id}/resolve", h.asks(h.reportResolution, h.resolveReport))
	r.Post("/reports/{id}/close", h.closeReport)
	r.Post("/reports/{id}/note", h.addReportNote)

	r.Get("/server", h.serverPage)
	r.Post("/server/log-level", h.setLogLevel)

	r.Post("/allow", h.addAllow)
	r.Post("/allow/remove", h.asks(h.allowRemoval, h.removeAllow))

	r.Get("/actors/{name}", h.actorPage)
	r.Post("/actors/{name}/profile", h.editProfile)
	r.Post("/actors/{name}/revoke-token", h.asks(h.tokenRevocation, h.revokeToken))
	r.Post("/actors/{name}/password", h.setPassword)
	r.Post("/actors/{name}/password/remove", h.asks(h.passwordRemoval, h.removePassword))
	r.Post("/actors/{name}/app-tokens/revoke", h.asks(h.appTokenRevocation, h.revokeAppTokens))
	r.Post("/actors/{name}/rotate-key", h.asks(h.keyRotation, h.rotateKey))
	r.Post("/actors/{name}/move", h.asks(h.actorMove, h.moveActor))
	r.Post("/actors/{name}/delete", h.asks(h.actorDeletion, h.deleteActor))
	r.Post("/actors/{name}/interactions/approve", h.asks(h.interactionDecision(true), h.decideInteraction(true)))
	r.Post("/actors/{name}/interactions/reject", h.asks(h.interactionDecision(false), h.decideInteraction(false)))
}

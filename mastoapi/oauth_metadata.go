package mastoapi

// metadata serves GET /.well-known/oauth-authorization-server: RFC 8414
// authorization server metadata as Mastodon 4.3+ serves it
// (OAuthMetadataPresenter), with what Herald supports.
func (h *Handler) metadata(c *Call) error {
	base := h.Instance.Base()
	return c.JSON(map[string]any{
		"issuer":                                base + "/",
		"service_documentation":                 "https://docs.joinmastodon.org/",
		"authorization_endpoint":                base + "/oauth/authorize",
		"token_endpoint":                        base + "/oauth/token",
		"revocation_endpoint":                   base + "/oauth/revoke",
		"userinfo_endpoint":                     base + "/oauth/userinfo",
		"app_registration_endpoint":             base + "/api/v1/apps",
		"scopes_supported":                      Scopes,
		"response_types_supported":              []string{"code"},
		"response_modes_supported":              []string{"query"},
		"grant_types_supported":                 []string{"authorization_code", "client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

// userinfo serves GET and POST /oauth/userinfo (scope profile): who the
// token's actor is, in OpenID Connect's claims, as Mastodon 4.3+ answers.
func (h *Handler) userinfo(c *Call) error {
	a := c.Actor
	out := map[string]any{
		"iss":                h.Instance.Base() + "/",
		"sub":                h.Instance.ActorID(a.Name),
		"name":               displayName(a),
		"preferred_username": a.Name,
		"profile":            h.Instance.ProfileURL(a.Name),
		"picture":            h.avatarURL(a.AvatarURL),
	}
	return c.JSON(out)
}

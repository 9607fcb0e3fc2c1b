package admin

// sectionFlashes are the flash messages of the sections in sectionRoutes,
// by key, added to flashes at start: kept here, beside nothing else, so the
// sections' messages and the older pages' do not edit the same lines.
var sectionFlashes = map[string]string{
	"log-level":          "Log level recorded; this server logs at it now, every other one as soon as it hears of it.",
	"allowed":            "Allowed. The allowlist counts only in allowlist mode.",
	"disallowed":         "Taken off the allowlist.",
	"webhook-paused":     "Webhook paused: its events are held, none is sent until you resume it.",
	"webhook-resumed":    "Webhook resumed: what waited goes out now, oldest first.",
	"webhook-removed":    "Webhook deleted, with what was queued for it.",
	"token-revoked":      "Token revoked: nothing can use the API as this actor until you make a new token.",
	"password-set":       "Log-in password set (stored as a bcrypt hash).",
	"password-removed":   "Log-in password removed: nobody can log in from an app until a new one is set.",
	"app-token-revoked":  "Token revoked: that app is logged out.",
	"app-tokens-revoked": "Every app token revoked: every app is logged out.",
}

func init() {
	for k, v := range sectionFlashes {
		flashes[k] = v
	}
}

package admin

import (
	"cmp"
	"net/http"
	"strings"

	"herald/node"
)

// The server page: what `herald log-level` sets, and what the server is.

// logLevels are the levels the page offers, node.ParseLogLevel's.
var logLevels = []string{"debug", "info", "warn", "error"}

func (h *Handler) serverPage(w http.ResponseWriter, r *http.Request) {
	row, err := h.db.Instance(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	level := row.LogLevel
	if level == "" {
		level = "info"
	}
	data := map[string]any{"Level": level, "Levels": logLevels, "Version": h.cfg.Node.Version, "Scheme": h.inst.Scheme,
		"Engine": h.db.Engine(), "Role": cmp.Or(h.cfg.Node.Role, "all")}
	if lv := h.cfg.Node.LogLevel; lv != nil {
		data["Running"] = strings.ToLower(lv.Level().String())
	}
	h.render(w, r, http.StatusOK, "server", data)
}

// setLogLevel records the log level as `herald log-level LEVEL` does; this
// node applies it at once, the others when the commit wakes them (on
// PostgreSQL) and at their next start.
func (h *Handler) setLogLevel(w http.ResponseWriter, r *http.Request) {
	level := strings.ToLower(r.PostFormValue("level"))
	if _, err := node.ParseLogLevel(level); err != nil {
		h.pageError(w, r, http.StatusBadRequest, "The log level is debug, info, warn or error.")
		return
	}
	if err := h.db.SetLogLevel(r.Context(), level); err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.ReloadLogLevel(r.Context())
	h.log.Info("admin: log level set", "log_level", level)
	done(w, r, "/admin/server", "log-level")
}

package admin

import (
	"net/http"
	"strings"

	"herald/host"
	"herald/policy"
	"herald/store"
)

func init() { flashes["limited"] = "Limited." }

// limitDomain limits a domain (or sets only its flags) as `herald block
// DOMAIN --severity limit|noop [--reject-media] [--reject-reports]` does.
func (h *Handler) limitDomain(w http.ResponseWriter, r *http.Request) {
	name, err := host.ParseOperator(r.PostFormValue("domain"))
	if err != nil {
		h.pageError(w, r, http.StatusBadRequest, "Give a host name such as loud.example: "+err.Error()+".")
		return
	}
	sev, ok := policy.ParseSeverity(r.PostFormValue("severity"))
	if !ok || sev == policy.SeveritySuspend {
		h.pageError(w, r, http.StatusBadRequest, "The severity is limit or flags only; a block is the form above.")
		return
	}
	b := store.BlockedDomain{Domain: name.String(), Severity: sev, Reason: strings.TrimSpace(r.PostFormValue("reason")),
		RejectMedia: r.PostFormValue("reject_media") != "", RejectReports: r.PostFormValue("reject_reports") != ""}
	if _, err := h.db.SetDomainRule(r.Context(), b); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: limited", "domain", b.Domain, "severity", sev, "reject_media", b.RejectMedia, "reject_reports", b.RejectReports)
	done(w, r, "/admin/blocks", "limited")
}

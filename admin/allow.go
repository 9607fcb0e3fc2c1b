package admin

import (
	"errors"
	"net/http"
	"strings"

	"herald/host"
	"herald/policy"
	"herald/store"
)

// The allowlist's actions, on the blocks page: what `herald allow add` and
// `herald allow remove` do. The list is used in allowlist mode
// (serve --federation-mode allowlist), where removing a domain ends
// federation with it, so a removal asks first.

func (h *Handler) addAllow(w http.ResponseWriter, r *http.Request) {
	name, err := host.ParseOperator(r.PostFormValue("domain"))
	if err != nil {
		h.pageError(w, r, http.StatusBadRequest, "Give a host name such as friend.example: "+err.Error()+".")
		return
	}
	domain := name.String()
	if _, err := h.db.AllowDomain(r.Context(), domain, strings.TrimSpace(r.PostFormValue("reason"))); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: allowed", "domain", domain)
	done(w, r, "/admin/blocks", "allowed")
}

// allowRemoval asks before a domain leaves the allowlist.
func (h *Handler) allowRemoval(r *http.Request) (question, error) {
	domain := r.PostFormValue("domain")
	mode, err := h.db.FederationMode(r.Context())
	if err != nil {
		return question{}, err
	}
	effect := "The allowlist is not in use (the federation mode is blocklist): nothing changes until allowlist mode."
	if mode == policy.ModeAllowlist {
		effect = "Herald stops federating with " + domain + " and its subdomains at once: nothing is delivered to them and nothing they send is let in."
	}
	return question{Title: "Take " + domain + " off the allowlist?", Effects: []string{effect},
		Button: "Take it off", Back: "/admin/blocks"}, nil
}

// removeAllow takes the domain off the list, spelled as the list has it.
func (h *Handler) removeAllow(w http.ResponseWriter, r *http.Request) {
	domain := r.PostFormValue("domain")
	if err := h.db.DisallowDomain(r.Context(), domain); errors.Is(err, store.ErrNotFound) {
		done(w, r, "/admin/blocks", "nothing")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: disallowed", "domain", domain)
	done(w, r, "/admin/blocks", "disallowed")
}

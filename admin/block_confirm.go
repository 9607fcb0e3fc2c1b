package admin

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"herald/host"
)

// The questions a block asks first (confirm.go): from a host's page and
// from the blocks page. A block removes follows, which lifting it does not
// bring back.

func blockEffects(domain string) []string {
	return []string{
		"Herald stops delivering to " + domain + " and its subdomains, refuses what they send, and fetches nothing from them.",
		"Every follow between your actors and accounts there is removed now; lifting the block later does not bring them back.",
	}
}

// hostBlocking asks before the block button of a host's page.
func (h *Handler) hostBlocking(r *http.Request) (question, error) {
	authority := chi.URLParam(r, "host")
	domain := blockDomainOf(authority)
	if domain == "" {
		return question{}, notFoundErr("No such host.")
	}
	return question{Title: "Block " + domain + "?", Effects: blockEffects(domain), Button: "Block " + domain, Back: hostURL(authority)}, nil
}

// domainBlocking asks before the blocks page's form blocks a domain; a
// name that is no host name is refused before anything is asked.
func (h *Handler) domainBlocking(r *http.Request) (question, error) {
	name, err := host.ParseOperator(r.PostFormValue("domain"))
	if err != nil {
		return question{}, badRequest("Give a host name such as bad.example: " + err.Error() + ".")
	}
	domain := name.String()
	return question{Title: "Block " + domain + "?", Effects: blockEffects(domain), Button: "Block " + domain, Back: "/admin/blocks"}, nil
}

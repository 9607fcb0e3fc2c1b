package server

import (
	"net/http"
	"strings"

	"herald/federation"
	"herald/outbox"
)

// suspended answers for a local actor the operator suspended (`herald
// actor suspend`), as Mastodon answers for a temporarily suspended
// account (mastodon/mastodon app/controllers/concerns/
// account_owned_concern.rb: everything the account owns is 403; its actor
// document is still served, with `suspended: true` and its profile left
// out, so other servers can verify its signatures and see the
// suspension). Its key document is served too; its inbox takes
// deliveries as before. Everything else under /users/{name} and /@{name}
// is 403 while the suspension lasts. The live policy says who is
// suspended, so this costs no query.
func (s *Server) suspended(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, rest, ok := localPath(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		p, err := s.node.Policy.Get(r.Context())
		if err != nil || !p.ActorNameSuspended(name) {
			next.ServeHTTP(w, r) // an unreadable policy: the handlers fail closed themselves
			return
		}
		switch {
		case rest == "/inbox" && r.Method == http.MethodPost, rest == "/ed25519-key":
			next.ServeHTTP(w, r)
		case rest == "" && federation.WantsActivityJSON(r):
			a, err := s.db.ActorByName(r.Context(), name)
			if err != nil {
				next.ServeHTTP(w, r) // gone or deleted since: the handler says so
				return
			}
			writeActivityJSON(w, http.StatusOK, outbox.SuspendedActorDocument(outbox.ActorDocument(s.inst, a)))
		default:
			w.Header().Set("Cache-Control", "max-age=180, public")
			s.writeError(w, r, http.StatusForbidden, "This account is suspended.")
		}
	})
}

// localPath splits /users/{name}/rest and /@{name}/rest.
func localPath(path string) (name, rest string, ok bool) {
	var tail string
	switch {
	case strings.HasPrefix(path, "/users/"):
		tail = path[len("/users/"):]
	case strings.HasPrefix(path, "/@"):
		tail = path[len("/@"):]
	default:
		return "", "", false
	}
	name, rest, _ = strings.Cut(tail, "/")
	if rest != "" {
		rest = "/" + rest
	}
	return name, rest, name != ""
}

package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/outbox"
	"herald/store"
)

// actor serves /users/{name} and /@{name}: the ActivityStreams document to
// servers, a profile page to browsers.
func (s *Server) actor(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	a, err := s.db.ActorByNameWithDeleted(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "No such actor.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	inst := s.inst
	if a.Deleted {
		// Gone for good, as Mastodon answers for a deleted account; a
		// person in a browser gets a page that says so.
		if wantsHTML(r) {
			s.writeError(w, r, http.StatusGone, "This account was deleted.")
			return
		}
		writeActivityJSON(w, http.StatusGone, map[string]any{
			"@context": "https://www.w3.org/ns/activitystreams", "id": inst.ActorID(a.Name), "type": "Tombstone", "formerType": a.Type,
		})
		return
	}
	if federation.WantsActivityJSON(r) {
		doc := outbox.ActorDocument(inst, a)
		if s.cfg.AuthorizedFetch {
			switch s.fetchAccess(w, r, true) {
			case accessAnonymous:
				doc = minimalActor(doc)
			case accessRefused:
				s.writeError(w, r, http.StatusNotFound, "No such actor.")
				return
			case accessAnswered:
				return
			}
			w.Header().Set("Cache-Control", "private")
		}
		writeActivityJSON(w, http.StatusOK, doc)
		return
	}
	followers, following, err := s.db.ActorCounts(r.Context(), a.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	display := a.DisplayName
	if display == "" {
		display = a.Name
	}
	posts, err := s.profilePosts(r.Context(), a)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept")
	s.pages.Render(w, "actor.html", map[string]any{
		"Domain":         inst.Domain,
		"DisplayName":    display,
		"Handle":         "@" + a.Name + "@" + inst.Domain,
		"Type":           a.Type,
		"ManualApproval": a.ManualApproval,
		"SummaryHTML":    federation.SummaryHTML(a.Summary),
		"Followers":      followers,
		"Following":      following,
		"Since":          a.CreatedAt.Format("2 January 2006"),
		"ID":             inst.ActorID(a.Name),
		"Fields":         a.Fields,
		"Avatar":         a.AvatarURL,
		"Memorial":       a.Memorial,
		"Posts":          posts,
	})
}

// profilePosts are the actor's pinned posts, then its newest public ones.
func (s *Server) profilePosts(ctx context.Context, a *store.Actor) ([]profilePost, error) {
	pinned, err := s.db.PinnedObjects(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	recent, err := s.db.PublicObjects(ctx, a.ID, 20)
	if err != nil {
		return nil, err
	}
	return s.postsOf(ctx, append(pinned, recent...))
}

// instanceActor serves /actor, the Application that signs Herald's fetches.
func (s *Server) instanceActor(w http.ResponseWriter, r *http.Request) {
	doc := outbox.InstanceActorDocument(s.inst, s.node.InstanceKey.PublicKeyPEM, s.node.InstanceKey.CreatedAt)
	if !federation.WantsActivityJSON(r) && acceptsHTML(r.Header.Get("Accept")) {
		http.Redirect(w, r, "/status", http.StatusFound)
		return
	}
	writeActivityJSON(w, http.StatusOK, doc)
}

// interact is the target of the WebFinger subscribe template.
func (s *Server) interact(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	s.pages.Render(w, "interact.html", map[string]any{
		"Domain": s.inst.Domain,
		"URI":    r.URL.Query().Get("uri"),
	})
}

func (s *Server) internalError(w http.ResponseWriter, r *http.Request, err error) {
	s.log.Error("request failed", "path", r.URL.Path, "err", err)
	s.writeError(w, r, http.StatusInternalServerError, "Something went wrong on our side.")
}

// instanceOutbox serves the instance actor's outbox: always empty, since the
// instance actor publishes nothing.
func (s *Server) instanceOutbox(w http.ResponseWriter, r *http.Request) {
	writeActivityJSON(w, http.StatusOK, map[string]any{
		"@context":     "https://www.w3.org/ns/activitystreams",
		"id":           s.inst.InstanceActorID() + "/outbox",
		"type":         "OrderedCollection",
		"totalItems":   0,
		"orderedItems": []any{},
	})
}

// ed25519Key serves the CryptographicKey document that the keyid of the
// actor's Ed25519 RFC 9421 signatures names. It is public, like the actor's
// publicKey, even under authorized fetch: a key must be fetchable to
// verify the signature that would authorize the fetch.
func (s *Server) ed25519Key(w http.ResponseWriter, r *http.Request) {
	a, err := s.db.ActorByName(r.Context(), chi.URLParam(r, "name"))
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "No such key.")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	doc := outbox.Ed25519KeyDocument(s.inst, a)
	if doc == nil {
		s.writeError(w, r, http.StatusNotFound, "No such key.")
		return
	}
	writeActivityJSON(w, http.StatusOK, doc)
}

package admin

import (
	"errors"
	"net/http"

	"herald/login"
	"herald/store"
)

// The actor page's log-in password: what a person types to log in to a
// local actor from a Mastodon app, as `herald actor password NAME
// [--remove]` sets or removes it.

// setPassword sets the password from the form, typed twice: checked and
// hashed by login.HashPassword (bcrypt), never logged or shown.
func (h *Handler) setPassword(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	password := r.PostFormValue("password")
	if password != r.PostFormValue("again") {
		h.renderActor(w, r, http.StatusBadRequest, a, "The two passwords differ: nothing changed.")
		return
	}
	hash, err := login.HashPassword(password)
	if err != nil {
		h.renderActor(w, r, http.StatusBadRequest, a, "Not set: "+err.Error()+".")
		return
	}
	if err := h.db.SetActorPassword(r.Context(), a.ID, hash); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: log-in password set", "actor", a.Name)
	done(w, r, actorURL(a.Name), "password-set")
}

// passwordRemoval asks before the password goes.
func (h *Handler) passwordRemoval(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "Remove @" + a.Name + "'s log-in password?",
		Effects: []string{"Nobody can log in to @" + a.Name + " from a Mastodon app until a new password is set.",
			"Apps already logged in keep their tokens: revoke those below if they must stop too."},
		Button: "Remove the password", Back: actorURL(a.Name)}, nil
}

func (h *Handler) removePassword(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if err := h.db.RemoveActorPassword(r.Context(), a.ID); errors.Is(err, store.ErrNotFound) {
		done(w, r, actorURL(a.Name), "nothing")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: log-in password removed", "actor", a.Name)
	done(w, r, actorURL(a.Name), "password-removed")
}

package admin

import (
	"context"
	"net/http"

	"herald/login"
	"herald/store"
)

// setActorPassword stores the hash of the password a person logs in to a
// local actor with from a Mastodon app: the client API's actor_passwords
// table, which the mapi branch brings (store.DB.SetActorPassword, as
// `herald actor password` calls it). Until it is on main this is nil: the
// actor page says log-in passwords come with the client API, and the form's
// URL answers 404. When it lands, this is the one line to add:
//
//	setActorPassword = (*store.DB).SetActorPassword
var setActorPassword func(db *store.DB, ctx context.Context, actorID int64, hash string) error = (*store.DB).SetActorPassword

// setPassword sets the actor's log-in password from the form, typed twice,
// as `herald actor password NAME` does: checked and hashed by HashPassword
// (bcrypt), never logged or shown.
func (h *Handler) setPassword(w http.ResponseWriter, r *http.Request) {
	if setActorPassword == nil {
		h.pageError(w, r, http.StatusNotFound, "Log-in passwords for Mastodon apps come with the client API, which this Herald does not have yet.")
		return
	}
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
	if err := setActorPassword(h.db, r.Context(), a.ID, hash); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: log-in password set", "actor", a.Name)
	done(w, r, actorURL(a.Name), "password-set")
}

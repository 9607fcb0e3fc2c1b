package admin

import (
	"fmt"
	"net/http"
	"strconv"

	"herald/store"
)

// The actor page's app tokens: the tokens the actor gave Mastodon apps
// (which app, what scopes, when made and last used), each revoked alone
// or all at once, as `herald actor tokens NAME [--revoke ID]
// [--revoke-all]` does. Only their hashes are kept, so none is shown.

// appTokenRevocation asks before one token, or all (the form's id empty),
// is revoked.
func (h *Handler) appTokenRevocation(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	back := actorURL(a.Name)
	if r.PostFormValue("id") == "" {
		return question{Title: "Revoke every app token of @" + a.Name + "?",
			Effects: []string{"Every Mastodon app logged in to @" + a.Name + " is logged out at once; each must log in again."},
			Button:  "Revoke them all", Back: back}, nil
	}
	t, err := h.appTokenOf(r, a)
	if err != nil {
		return question{}, err
	}
	return question{Title: fmt.Sprintf("Revoke %s's token?", t.AppName),
		Effects: []string{fmt.Sprintf("%s (token %d) is logged out of @%s at once; it must log in again.", t.AppName, t.ID, a.Name)},
		Button:  "Revoke it", Back: back}, nil
}

func (h *Handler) revokeAppTokens(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if r.PostFormValue("id") == "" {
		n, err := h.db.RevokeActorOAuthTokens(r.Context(), a.ID)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.log.Info("admin: app tokens revoked", "actor", a.Name, "tokens", n)
		done(w, r, actorURL(a.Name), "app-tokens-revoked")
		return
	}
	t, err := h.appTokenOf(r, a)
	if err == nil {
		err = h.db.RevokeOAuthToken(r.Context(), a.ID, t.ID)
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.log.Info("admin: app token revoked", "actor", a.Name, "token", t.ID, "app", t.AppName)
	done(w, r, actorURL(a.Name), "app-token-revoked")
}

// appTokenOf is the actor's token the form's id names, or a 404.
func (h *Handler) appTokenOf(r *http.Request, a *store.Actor) (*store.OAuthToken, error) {
	id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
	if err != nil {
		return nil, notFoundErr("@" + a.Name + " has no such token.")
	}
	list, err := h.db.ActorOAuthTokens(r.Context(), a.ID)
	if err != nil {
		return nil, err
	}
	for _, t := range list {
		if t.ID == id {
			return &t, nil
		}
	}
	return nil, notFoundErr("@" + a.Name + " has no such token.")
}

package admin

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/jobs"
	"herald/store"
)

// The actor page: one local actor, with what `herald actor edit | token |
// rotate-key | move | delete` do; its log-in password and app tokens are in
// actor_password.go and actor_tokens.go.
// The profile is saved as actor edit saves it, then the Update goes out as
// a job; key rotation, move and delete are jobs too, and ask first, as a
// new or revoked token does.

func (h *Handler) actorPage(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.renderActor(w, r, http.StatusOK, a, "")
}

// renderActor shows a's page; a may hold a profile the operator typed and
// the page refused (bad, the reason), so the form keeps it.
func (h *Handler) renderActor(w http.ResponseWriter, r *http.Request, status int, a *store.Actor, bad string) {
	followers, following, err := h.db.ActorCounts(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The form has a row for each field the profile may have.
	fields := append([]store.ProfileField(nil), a.Fields...)
	for len(fields) < jobs.MaxFields {
		fields = append(fields, store.ProfileField{})
	}
	tokens, err := h.db.ActorOAuthTokens(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	_, err = h.db.ActorPasswordHash(r.Context(), a.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	hasPassword := err == nil
	// A suspension says when the actor is deleted for good unless lifted.
	suspension, err := h.db.ActorSuspensionOf(r.Context(), a.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	data := map[string]any{"Actor": a, "Fields": fields, "Followers": followers, "Following": following,
		"Profile": h.inst.ProfileURL(a.Name), "ID": h.inst.ActorID(a.Name), "Base": actorURL(a.Name),
		"AppTokens": tokens, "HasPassword": hasPassword, "Suspension": suspension}
	if bad != "" {
		data["Flash"], data["FlashBad"] = bad, true
	}
	h.render(w, r, status, "actor", data)
}

// editProfile saves the profile the form holds, as `herald actor edit`
// does with every flag given, and sends the Update to the actor's
// followers (a job).
func (h *Handler) editProfile(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	a.DisplayName = strings.TrimSpace(r.PostFormValue("display"))
	a.Summary = strings.TrimSpace(r.PostFormValue("summary"))
	a.AvatarURL = strings.TrimSpace(r.PostFormValue("avatar"))
	a.HeaderURL = strings.TrimSpace(r.PostFormValue("header"))
	a.Memorial = r.PostFormValue("memorial") != ""
	a.ManualApproval = r.PostFormValue("manual") != ""
	names, values := r.PostForm["field_name"], r.PostForm["field_value"]
	a.Fields = nil
	var bad string
	for i := range max(len(names), len(values)) {
		var f store.ProfileField
		if i < len(names) {
			f.Name = strings.TrimSpace(names[i])
		}
		if i < len(values) {
			f.Value = strings.TrimSpace(values[i])
		}
		if f.Name == "" && f.Value == "" {
			continue
		}
		if err := jobs.CheckField(f); err != nil && bad == "" {
			bad = "Profile field " + f.Name + ": " + err.Error() + "."
		}
		a.Fields = append(a.Fields, f)
	}
	if len(a.Fields) > jobs.MaxFields && bad == "" {
		bad = "A profile has at most 4 fields."
	}
	for what, u := range map[string]string{"avatar": a.AvatarURL, "header": a.HeaderURL} {
		if err := jobs.CheckImageURL(u); err != nil && bad == "" {
			bad = "The " + what + ": " + err.Error() + "."
		}
	}
	if bad != "" {
		h.renderActor(w, r, http.StatusBadRequest, a, bad)
		return
	}
	if err := h.db.SetActorProfile(r.Context(), a); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: profile saved", "actor", a.Name)
	h.submit(w, r, jobs.KindUpdateActor, a, jobs.Args{})
}

// tokenRenewal asks before a new bearer token replaces the actor's.
func (h *Handler) tokenRenewal(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "A new token for @" + a.Name + "?",
		Effects: []string{"The token @" + a.Name + "'s app uses now stops working at once: the app must be given the new one.",
			"The new token is shown once, on the next page."},
		Button: "Make a new token", Back: actorURL(a.Name)}, nil
}

// tokenRevocation asks before the actor's bearer token is revoked.
func (h *Handler) tokenRevocation(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "Revoke @" + a.Name + "'s token?",
		Effects: []string{"The token @" + a.Name + "'s app uses stops working at once, and no new one is shown: nothing can post as @" + a.Name + " through the API until you make a new token."},
		Button:  "Revoke the token", Back: actorURL(a.Name)}, nil
}

// revokeToken replaces the token's hash with that of a token nobody is
// shown, the store's one way to change a token (SetActorToken, as `herald
// actor token` uses): the old token stops working and no token works.
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request) {
	a, err := h.actorOf(r)
	if err == nil {
		err = h.db.SetActorToken(r.Context(), a.Name, store.NewToken())
	}
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.log.Info("admin: token revoked", "actor", a.Name)
	done(w, r, actorURL(a.Name), "token-revoked")
}

// keyRotation asks before the actor gets a new key pair.
func (h *Handler) keyRotation(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "A new key pair for @" + a.Name + "?",
		Effects: []string{"The old key signs nothing more; an Update with the new one goes to every server that knows @" + a.Name + ".",
			"A server that cached the old key refuses @" + a.Name + "'s activities until it fetches the new one, which it does when a signature fails."},
		Button: "Rotate the key", Back: actorURL(a.Name)}, nil
}

func (h *Handler) rotateKey(w http.ResponseWriter, r *http.Request) {
	h.actorJob(w, r, jobs.KindRotateKey, jobs.Args{})
}

// actorMove asks before the actor moves; a target that is no account is
// refused first, as `herald actor move --to` refuses it.
func (h *Handler) actorMove(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	to := strings.TrimSpace(r.PostFormValue("to"))
	if err := jobs.CheckTarget(to); err != nil {
		return question{}, badRequest("Move to where? " + err.Error() + ".")
	}
	return question{Title: "Move @" + a.Name + " to " + to + "?",
		Effects: []string{"Herald sends a Move to @" + a.Name + "'s followers: their servers make them follow " + to + " instead.",
			"@" + a.Name + " takes no new followers afterwards. " + to + " must list @" + a.Name + " among its aliases (alsoKnownAs), or the move fails and nothing changes."},
		Button: "Move @" + a.Name, Back: actorURL(a.Name)}, nil
}

func (h *Handler) moveActor(w http.ResponseWriter, r *http.Request) {
	h.actorJob(w, r, jobs.KindMove, jobs.Args{Target: strings.TrimSpace(r.PostFormValue("to"))})
}

// actorDeletion asks before the actor is deleted for good.
func (h *Handler) actorDeletion(r *http.Request) (question, error) {
	a, err := h.actorOf(r)
	if err != nil {
		return question{}, err
	}
	return question{Title: "Delete @" + a.Name + " for good?",
		Effects: []string{"Every server that knows @" + a.Name + " gets a Delete; its profile and posts answer 410 Gone from now on, and its token stops working.",
			"It cannot be restored, and the name @" + a.Name + " cannot be used again."},
		Button: "Delete @" + a.Name, Back: actorURL(a.Name)}, nil
}

func (h *Handler) deleteActor(w http.ResponseWriter, r *http.Request) {
	h.actorJob(w, r, jobs.KindDeleteActor, jobs.Args{})
}

// actorJob leaves the job of kind for the URL's actor.
func (h *Handler) actorJob(w http.ResponseWriter, r *http.Request, kind string, args jobs.Args) {
	a, err := h.actorOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	h.submit(w, r, kind, a, args)
}

// actorOf is the local actor the URL's {name} names (a deleted one is no
// more), or a 404 to answer.
func (h *Handler) actorOf(r *http.Request) (*store.Actor, error) {
	a, err := h.db.ActorByName(r.Context(), chi.URLParam(r, "name"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundErr("There is no actor @" + chi.URLParam(r, "name") + " here.")
	}
	return a, err
}

// actorURL is the console page of a local actor.
func actorURL(name string) string { return "/admin/actors/" + name }

package admin

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation"
	"herald/host"
	"herald/jobs"
	"herald/store"
)

// Every action is a POST that requireSession has checked for the session
// and its CSRF token; it changes the database, wakes the part of the node
// that acts on it, and redirects (the page shows a flash by key).

// done redirects after an action to back with the flash key.
func done(w http.ResponseWriter, r *http.Request, back, key string) {
	sep := "?"
	if strings.Contains(back, "?") {
		sep = "&"
	}
	http.Redirect(w, r, back+sep+"done="+key, http.StatusSeeOther)
}

// retried says how a requeue went.
func retried(n int64) string {
	if n == 0 {
		return "nothing"
	}
	return "retried"
}

func (h *Handler) retryHost(w http.ResponseWriter, r *http.Request) {
	host := chi.URLParam(r, "host")
	n, err := h.db.RequeueFailed(r.Context(), host, 0)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	h.log.Info("admin: requeued failed deliveries", "host", host, "rows", n)
	done(w, r, hostURL(host), retried(n))
}

func (h *Handler) retryDelivery(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id <= 0 {
		h.pageError(w, r, http.StatusNotFound, "No such delivery.")
		return
	}
	n, err := h.db.RequeueFailed(r.Context(), "", id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, "/admin/") {
		back = "/admin/hosts"
	}
	done(w, r, back, retried(n))
}

func (h *Handler) retryPost(w http.ResponseWriter, r *http.Request) {
	iri := r.PostFormValue("activity")
	a, err := h.db.ActivityByIRI(r.Context(), iri)
	if errors.Is(err, store.ErrNotFound) {
		h.pageError(w, r, http.StatusNotFound, "No such activity.")
		return
	}
	var n int64
	if err == nil {
		n, err = h.db.RequeueFailedOfActivity(r.Context(), a.ID)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	done(w, r, "/admin/posts?activity="+urlQuery(iri), retried(n))
}

func (h *Handler) pauseHost(w http.ResponseWriter, r *http.Request) {
	host, ok := authorityParam(w, r)
	if !ok {
		return
	}
	var until time.Time
	if v := r.PostFormValue("for"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > 30*24*time.Hour {
			http.Error(w, "Pause for a duration such as 6h (at most 30 days), or leave it empty.", http.StatusBadRequest)
			return
		}
		until = h.now().Add(d).Truncate(time.Second)
	}
	held, err := h.db.PauseHost(r.Context(), host, until)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: paused deliveries", "host", host, "until", until, "held", held)
	done(w, r, hostURL(host), "paused")
}

func (h *Handler) resumeHost(w http.ResponseWriter, r *http.Request) {
	host, ok := authorityParam(w, r)
	if !ok {
		return
	}
	_, err := h.db.ResumeHost(r.Context(), host)
	if errors.Is(err, store.ErrNotFound) {
		done(w, r, hostURL(host), "nothing")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Runner.Wake()
	h.log.Info("admin: resumed deliveries", "host", host)
	done(w, r, hostURL(host), "resumed")
}

func (h *Handler) blockHost(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "host")
	a, err := host.ParseAuthority(name)
	if err != nil {
		http.Error(w, "No such host.", http.StatusNotFound)
		return
	}
	h.block(w, r, a.Name.String(), hostURL(name))
}

func (h *Handler) addBlock(w http.ResponseWriter, r *http.Request) {
	h.block(w, r, r.PostFormValue("domain"), "/admin/blocks")
}

// block blocks a domain as `herald block` does.
func (h *Handler) block(w http.ResponseWriter, r *http.Request, domain, back string) {
	name, err := host.ParseOperator(domain)
	if err != nil {
		http.Error(w, "Give a host name such as bad.example: "+err.Error()+".", http.StatusBadRequest)
		return
	}
	domain = name.String()
	removed, err := h.db.BlockDomain(r.Context(), domain, strings.TrimSpace(r.PostFormValue("reason")))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: blocked", "domain", domain, "follows_removed", removed)
	done(w, r, back, "blocked")
}

func (h *Handler) removeBlock(w http.ResponseWriter, r *http.Request) {
	err := h.db.UnblockDomain(r.Context(), r.PostFormValue("domain"))
	if errors.Is(err, store.ErrNotFound) {
		done(w, r, "/admin/blocks", "nothing")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	done(w, r, "/admin/blocks", "unblocked")
}

// addActor creates an actor as `herald actor add` does and shows its token
// once, on the page the POST answers (never in a URL).
func (h *Handler) addActor(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	typ := r.PostFormValue("type")
	bad := func(msg string) {
		h.renderActors(w, r, http.StatusBadRequest, map[string]any{"Flash": msg, "FlashBad": true})
	}
	if !store.ValidActorName(name) {
		bad("An actor name is 1 to 30 of a-z, 0-9 and _.")
		return
	}
	if typ != "Person" && typ != "Service" && typ != "Application" && typ != "Group" {
		bad("The type is Person, Service, Application or Group.")
		return
	}
	priv, pub, err := federation.GenerateKeyPEM()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	token := store.NewToken()
	a := &store.Actor{Name: name, Type: typ, DisplayName: strings.TrimSpace(r.PostFormValue("display")), ManualApproval: r.PostFormValue("manual") != "",
		PrivateKeyPEM: priv, PublicKeyPEM: pub}
	if err := h.db.CreateActor(r.Context(), a, token); errors.Is(err, store.ErrExists) {
		bad(fmt.Sprintf("An actor %q exists already.", name))
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: actor added", "name", name)
	h.renderActors(w, r, http.StatusOK, map[string]any{"Token": token, "TokenFor": "@" + name})
}

// newToken issues a new bearer token, as `herald actor token` does.
func (h *Handler) newToken(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	token := store.NewToken()
	if err := h.db.SetActorToken(r.Context(), name, token); errors.Is(err, store.ErrNotFound) {
		h.pageError(w, r, http.StatusNotFound, "No such actor.")
		return
	} else if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: new token", "actor", name)
	h.renderActors(w, r, http.StatusOK, map[string]any{"Token": token, "TokenFor": "@" + name})
}

// answerFollow approves or rejects a follow request through the job
// runner, which sends the Accept or Reject as `herald follows` does.
func (h *Handler) answerFollow(w http.ResponseWriter, r *http.Request) {
	kind := map[string]string{"approve": jobs.KindApprove, "reject": jobs.KindReject}[r.PostFormValue("answer")]
	a, err := h.db.ActorByName(r.Context(), chi.URLParam(r, "name"))
	if kind == "" || errors.Is(err, store.ErrNotFound) {
		http.Error(w, "No such follow request.", http.StatusBadRequest)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, err := jobs.Submit(r.Context(), h.db, kind, a.ID, jobs.Args{Follower: r.PostFormValue("follower")}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Jobs.Wake()
	done(w, r, "/admin/actors", "answered")
}

// authorityParam is the {host} of the URL as deliveries name hosts
// (host.Authority's form), or a 404 for what is no host.
func authorityParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	a, err := host.ParseAuthority(chi.URLParam(r, "host"))
	if err != nil {
		http.Error(w, "No such host.", http.StatusNotFound)
		return "", false
	}
	return a.String(), true
}

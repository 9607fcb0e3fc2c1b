package appapi

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/federation/as"
	"herald/host"
	"herald/httpapi"
	"herald/outbox"
	"herald/store"
)

// Block is a remote actor the actor blocks.
type Block struct {
	Actor     string    `json:"actor"`
	CreatedAt time.Time `json:"created_at"`
}

// blocks serves GET /actors/{name}/blocks.
func (h *Handler) blocks(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	list, err := h.DB.ActorBlocks(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []Block{}
	for _, b := range list {
		out = append(out, Block{Actor: b.Target, CreatedAt: b.CreatedAt})
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"blocks": out})
}

// BlockResult is what blocking or unblocking an actor sent.
type BlockResult struct {
	Actor    string `json:"actor"`
	Activity string `json:"activity"` // the Block, or the Undo of it
}

// block serves POST /actors/{name}/blocks: a Block published through the
// outbox, as `POST /users/{name}/outbox {"type": "Block", ...}` does (the
// follows between the two go, the actor's Follows are refused, the Block is
// sent to it). An actor already blocked is answered 200 with its Block.
func (h *Handler) block(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	target, ok := readActor(w, r, "the id of the actor to block")
	if !ok {
		return
	}
	if iri, err := h.DB.LatestBlock(r.Context(), a.ID, target); err == nil {
		httpapi.JSON(w, http.StatusOK, BlockResult{Actor: target, Activity: iri})
		return
	} else if !errors.Is(err, store.ErrNotFound) {
		h.fail(w, r, err)
		return
	}
	h.publish(w, r, a, as.NewActivity("Block", as.IRI(target)), http.StatusCreated)
}

// unblock serves DELETE /actors/{name}/blocks?actor=ID: the Undo of the
// actor's Block, published through the outbox.
func (h *Handler) unblock(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	target := r.URL.Query().Get("actor")
	if target == "" {
		httpapi.Error(w, http.StatusBadRequest, "?actor= (the id of the blocked actor) is required")
		return
	}
	iri, err := h.DB.LatestBlock(r.Context(), a.ID, target)
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, "this actor does not block "+target)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.publish(w, r, a, as.NewActivity("Undo", as.IRI(iri)), http.StatusOK)
}

// publish publishes doc through the outbox and answers what it sent; a
// refusal (the actor cannot be fetched, say) is a 400 with the reason.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request, a *store.Actor, doc *as.Object, code int) {
	res, err := h.Publisher.Publish(r.Context(), a, doc, outbox.Options{})
	var in *outbox.InputError
	if errors.As(err, &in) {
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	target := res.Activity.ObjectIRI
	if doc.Type.First() == "Undo" {
		target = r.URL.Query().Get("actor")
	}
	httpapi.JSON(w, code, BlockResult{Actor: target, Activity: res.Activity.IRI})
}

// DomainBlock is a domain the actor blocks.
type DomainBlock struct {
	Domain    string    `json:"domain"`
	CreatedAt time.Time `json:"created_at"`
}

// domainBlocks serves GET /actors/{name}/domain_blocks.
func (h *Handler) domainBlocks(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	list, err := h.DB.ActorDomainBlocks(r.Context(), a.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := []DomainBlock{}
	for _, b := range list {
		out = append(out, DomainBlock{Domain: b.Target, CreatedAt: b.CreatedAt})
	}
	httpapi.JSON(w, http.StatusOK, map[string]any{"domain_blocks": out})
}

// DomainBlockResult is what blocking a domain did.
type DomainBlockResult struct {
	Domain           string `json:"domain"`
	FollowersRemoved int    `json:"followers_removed"`
}

// blockDomain serves POST /actors/{name}/domain_blocks {"domain": ...}:
// 201 for a new block, 200 when it was there.
func (h *Handler) blockDomain(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var body struct {
		Domain string `json:"domain"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	name, err := host.ParseOperator(body.Domain)
	domain := name.String()
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "domain: "+err.Error())
		return
	}
	if domain == h.Instance.Host() {
		httpapi.Error(w, http.StatusBadRequest, "an actor cannot block its own instance")
		return
	}
	removed, created, err := h.Publisher.BlockDomain(r.Context(), a, domain)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	httpapi.JSON(w, code, DomainBlockResult{Domain: domain, FollowersRemoved: removed})
}

// unblockDomain serves DELETE /actors/{name}/domain_blocks/{domain}: 204,
// or 404 when the actor does not block it.
func (h *Handler) unblockDomain(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	name, err := host.ParseOperator(chi.URLParam(r, "domain"))
	domain := name.String()
	if err != nil {
		httpapi.Error(w, http.StatusBadRequest, "domain: "+err.Error())
		return
	}
	err = h.DB.RemoveActorDomainBlock(r.Context(), a.ID, domain)
	if errors.Is(err, store.ErrNotFound) {
		httpapi.Error(w, http.StatusNotFound, "this actor does not block "+domain)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

package appapi

import (
	"errors"
	"net/http"
	"strings"

	"herald/httpapi"
	"herald/outbox"
	"herald/webfinger"
)

// NoteRequest is the body of POST /actors/{name}/notes: a post as
// `herald post` takes it.
type NoteRequest struct {
	Text      string `json:"text"`
	To        string `json:"to"`          // public (default), followers, @user@host or an actor URL
	CW        string `json:"cw"`          // a content warning
	InReplyTo string `json:"in_reply_to"` // the URL of the post it answers
	Language  string `json:"language"`    // a language tag such as en or pt-BR
	Quote     string `json:"quote"`       // the URL of a post it quotes (FEP-044f)
}

// NoteResult is what posting a note published.
type NoteResult struct {
	Activity string `json:"activity"` // the Create
	Object   string `json:"object"`   // the Note
	// Unresolved names recipients whose inbox could not be found, and why.
	Unresolved map[string]string `json:"unresolved,omitempty"`
}

// postNote serves POST /actors/{name}/notes: the text composed as `herald
// post` does it (mentions, hashtags and links as Mastodon makes them;
// contentMap from the language) and published through the outbox at once,
// so the recipient of a direct note is mentioned and the author of what it
// answers is addressed. An Idempotency-Key header works as at the outbox.
func (h *Handler) postNote(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var req NoteRequest
	if !readJSON(w, r, &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Text) == "":
		httpapi.Error(w, http.StatusBadRequest, "text is required")
		return
	case req.To != "" && req.To != "public" && req.To != "followers" && !isHTTP(req.To):
		if _, _, err := webfinger.ParseHandle(req.To); err != nil {
			httpapi.Error(w, http.StatusBadRequest, "to must be public, followers, @user@host or an actor URL")
			return
		}
	}
	if req.InReplyTo != "" && !isHTTP(req.InReplyTo) {
		httpapi.Error(w, http.StatusBadRequest, "in_reply_to must be the URL of a post")
		return
	}
	if req.Quote != "" && !isHTTP(req.Quote) {
		httpapi.Error(w, http.StatusBadRequest, "quote must be the URL of a post")
		return
	}
	doc, err := h.Publisher.TextNoteDocument(r.Context(), a, outbox.TextNote{Text: req.Text, To: req.To, CW: req.CW,
		InReplyTo: req.InReplyTo, Language: req.Language, Quote: req.Quote})
	var in *outbox.InputError
	switch {
	case errors.As(err, &in):
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
		return
	case errors.Is(err, outbox.ErrUnresolved):
		httpapi.Error(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	res, err := h.Publisher.Publish(r.Context(), a, doc, outbox.Options{IdempotencyKey: r.Header.Get("Idempotency-Key")})
	if errors.As(err, &in) {
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	code := http.StatusCreated
	if res.Replayed {
		code = http.StatusOK
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.Header().Set("Location", res.Activity.IRI)
	httpapi.JSON(w, code, NoteResult{Activity: res.Activity.IRI, Object: res.Activity.ObjectIRI, Unresolved: res.Unresolved})
}

func isHTTP(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}

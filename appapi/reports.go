package appapi

import (
	"errors"
	"net/http"
	"time"

	"herald/httpapi"
	"herald/outbox"
)

// ReportResult is a report the actor filed.
type ReportResult struct {
	ID        int64    `json:"id"`
	Account   string   `json:"account"`
	Posts     []string `json:"posts"`
	Comment   string   `json:"comment"`
	Forwarded bool     `json:"forwarded"`
	// Flag is the id of the Flag sent to the account's server, if
	// forwarded.
	Flag      string    `json:"flag,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// fileReport serves POST /actors/{name}/reports {"account", "posts",
// "comment", "forward"}: the actor reports a remote account to this
// instance's moderators (the report queue) and, with forward, to the
// account's server as a Flag from the instance actor, the actor unnamed.
// 201 with the report.
func (h *Handler) fileReport(w http.ResponseWriter, r *http.Request) {
	a, ok := h.authorize(w, r)
	if !ok {
		return
	}
	var body struct {
		Account string   `json:"account"`
		Posts   []string `json:"posts"`
		Comment string   `json:"comment"`
		Forward bool     `json:"forward"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	rep, err := h.Publisher.Report(r.Context(), a, outbox.ReportInput{Account: body.Account, Posts: body.Posts, Comment: body.Comment, Forward: body.Forward})
	var in *outbox.InputError
	if errors.As(err, &in) {
		httpapi.Error(w, http.StatusBadRequest, in.Msg)
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusCreated, ReportResult{ID: rep.ID, Account: rep.Account, Posts: append([]string{}, rep.Posts...), Comment: rep.Comment,
		Forwarded: rep.FlagID != "", Flag: rep.FlagID, CreatedAt: h.Publisher.Now().UTC()})
}

package admin

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/jobs"
	"herald/node"
	"herald/store"
)

// The jobs pages: what the job runner did for the CLI's commands and the
// console's actions, newest first (`herald jobs`), and one job with its
// outcome, where each console action that needs the network or the keys
// leads.

// submit leaves a job for the runner, as the matching command does
// (jobs.Submit: a row, which wakes the workers on commit), wakes this
// node's runner, and sends the browser to the job's page, which shows
// what became of it. actor nil is the instance actor (relays).
func (h *Handler) submit(w http.ResponseWriter, r *http.Request, kind string, actor *store.Actor, args jobs.Args) {
	var actorID int64
	if actor != nil {
		actorID = actor.ID
	}
	id, err := jobs.Submit(r.Context(), h.db, kind, actorID, args)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.cfg.Node.Jobs.Wake()
	h.log.Info("admin: job submitted", "job", id, "kind", kind)
	http.Redirect(w, r, fmt.Sprintf("/admin/jobs/%d", id), http.StatusSeeOther)
}

// jobKinds say what each kind of job is, for people.
var jobKinds = map[string]string{
	jobs.KindPost: "Post", jobs.KindDelete: "Delete a post", jobs.KindFollow: "Follow", jobs.KindUnfollow: "Unfollow",
	jobs.KindApprove: "Approve a follow request", jobs.KindReject: "Reject a follow request",
	jobs.KindDeleteActor: "Delete an actor", jobs.KindUpdateActor: "Send a profile update", jobs.KindRotateKey: "New key pair",
	jobs.KindPin: "Pin", jobs.KindUnpin: "Unpin", jobs.KindMove: "Move an actor", jobs.KindAlias: "Change aliases",
	jobs.KindRelayAdd: "Subscribe to a relay", jobs.KindRelayRemove: "Leave a relay",
	jobs.KindInteractionApprove: "Approve an interaction", jobs.KindInteractionReject: "Reject an interaction",
}

// jobRow is a job as the pages show it.
type jobRow struct {
	store.Job
	What, Actor string
	Result      *jobs.Result // when done
	Outcome     string       // what the result says, in a sentence
	Pending     bool         // queued or running
	Back        string       // the page of what the job was about
}

func (h *Handler) jobRow(r *http.Request, j store.Job, names map[int64]string) jobRow {
	row := jobRow{Job: j, What: jobKinds[j.Kind], Pending: j.State == store.JobQueued || j.State == store.JobRunning}
	if row.What == "" {
		row.What = j.Kind
	}
	if _, ok := names[j.ActorID]; !ok {
		names[j.ActorID] = "(deleted)"
		if a, err := h.db.ActorByID(r.Context(), j.ActorID); err == nil {
			names[j.ActorID] = "@" + a.Name
		}
	}
	row.Actor = names[j.ActorID]
	if j.State == store.JobDone {
		if res, err := jobs.ResultOf(&j); err == nil {
			row.Result, row.Outcome = &res, outcome(res)
		}
	}
	switch {
	case j.Kind == jobs.KindRelayAdd || j.Kind == jobs.KindRelayRemove:
		row.Back = "/admin/relays"
	case j.Kind == jobs.KindDeleteActor || j.Kind == jobs.KindApprove || j.Kind == jobs.KindReject || j.ActorID == 0:
		row.Back = "/admin/actors"
	default:
		row.Back = "/admin/actors/" + strings.TrimPrefix(row.Actor, "@")
	}
	return row
}

// outcome says what a done job's activity reached, as the CLI prints it.
func outcome(res jobs.Result) string {
	if res.Activity == "" {
		return "Done."
	}
	s := fmt.Sprintf("queued for %d inboxes", res.Queued)
	if res.Queued == 1 {
		s = "queued for 1 inbox"
	}
	if res.SkippedBlocked+res.SkippedUnavailable > 0 {
		s += fmt.Sprintf(" (skipped: %d blocked, %d unavailable)", res.SkippedBlocked, res.SkippedUnavailable)
	}
	if res.Queued == 0 {
		s += ": nobody to send it to yet"
	}
	return s + "."
}

// jobsPage lists the latest 50 jobs.
func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request) {
	list, err := h.db.RecentJobs(r.Context(), 50)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	names := map[int64]string{0: "(instance)"}
	rows := make([]jobRow, len(list))
	pending := false
	for i, j := range list {
		rows[i] = h.jobRow(r, j, names)
		pending = pending || rows[i].Pending
	}
	data := map[string]any{"Jobs": rows}
	if pending {
		data["Refresh"] = 5
	}
	h.render(w, r, http.StatusOK, "jobs", data)
}

// jobPage shows one job and its outcome; while it waits the page reloads
// every 2 seconds, so the operator sees it finish without a script.
func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	var j *store.Job
	if err == nil {
		j, err = h.db.JobByID(r.Context(), id)
	}
	if err != nil {
		if errors.As(err, new(*strconv.NumError)) || errors.Is(err, store.ErrNotFound) {
			h.pageError(w, r, http.StatusNotFound, "There is no such job.")
			return
		}
		h.fail(w, r, err)
		return
	}
	row := h.jobRow(r, *j, map[int64]string{0: "(instance)"})
	data := map[string]any{"Job": row}
	if row.Pending {
		data["Refresh"] = 2
		noWorker, err := h.db.WorkerMissing(r.Context(), h.now().Add(-node.StaleAfter))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		data["NoWorker"] = noWorker
	}
	h.render(w, r, http.StatusOK, "job", data)
}

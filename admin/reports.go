package admin

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"herald/jobs"
	"herald/store"
)

// The report queue: the reports `herald reports` lists (received Flags and
// reports made here), each with its notes, resolved with an action as
// `herald report resolve` does, closed, or noted.

func init() {
	flashes["report-resolved"] = "Report resolved; the action is taken."
	flashes["report-closed"] = "Report closed without an action."
	flashes["report-noted"] = "Note added."
}

// reportView is one report as the pages show it.
type reportView struct {
	store.Report
	Local bool // the reported account is a local actor (a Flag received)
}

func (h *Handler) reportsPage(w http.ResponseWriter, r *http.Request) {
	state := store.ReportOpen
	if r.URL.Query().Get("state") == "all" {
		state = ""
	}
	list, err := h.db.Reports(r.Context(), state, 200)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	open, err := h.db.OpenReports(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	views := make([]reportView, 0, len(list))
	for _, rep := range list {
		views = append(views, reportView{Report: rep, Local: rep.Inbound})
	}
	h.render(w, r, http.StatusOK, "reports", map[string]any{"Reports": views, "All": state == "", "Open": open})
}

func (h *Handler) reportPage(w http.ResponseWriter, r *http.Request) {
	h.renderReport(w, r, http.StatusOK, "")
}

func (h *Handler) renderReport(w http.ResponseWriter, r *http.Request, status int, bad string) {
	rep, err := h.reportOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	notes, err := h.db.ReportNotes(r.Context(), rep.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	actions := jobs.ReportActions
	if rep.Inbound {
		actions = []string{jobs.ReportSuspend, jobs.ReportDelete, jobs.ReportNone}
	}
	data := map[string]any{"Report": reportView{Report: *rep, Local: rep.Inbound}, "Notes": notes, "Actions": actions}
	if bad != "" {
		data["Flash"], data["FlashBad"] = bad, true
	}
	h.render(w, r, status, "report", data)
}

// resolveReport takes the chosen action and resolves the report.
func (h *Handler) resolveReport(w http.ResponseWriter, r *http.Request) {
	rep, err := h.reportOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	did, err := jobs.ResolveReport(r.Context(), h.db, h.inst, rep, r.PostFormValue("action"))
	if errors.Is(err, jobs.ErrReportAction) {
		h.renderReport(w, r, http.StatusBadRequest, "That action does not apply to this report.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.noteReport(r, rep.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("admin: report resolved", "report", rep.ID, "action", r.PostFormValue("action"), "did", did)
	done(w, r, reportPath(rep.ID), "report-resolved")
}

// closeReport closes the report without an action.
func (h *Handler) closeReport(w http.ResponseWriter, r *http.Request) {
	rep, err := h.reportOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if err := h.db.SettleReport(r.Context(), rep.ID, store.ReportClosed, ""); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.noteReport(r, rep.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	done(w, r, reportPath(rep.ID), "report-closed")
}

// addReportNote adds the form's note.
func (h *Handler) addReportNote(w http.ResponseWriter, r *http.Request) {
	rep, err := h.reportOf(r)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if strings.TrimSpace(r.PostFormValue("note")) == "" {
		h.renderReport(w, r, http.StatusBadRequest, "Write the note first.")
		return
	}
	if err := h.noteReport(r, rep.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	done(w, r, reportPath(rep.ID), "report-noted")
}

// noteReport adds the form's note, if it has one.
func (h *Handler) noteReport(r *http.Request, id int64) error {
	note := strings.TrimSpace(r.PostFormValue("note"))
	if note == "" {
		return nil
	}
	return h.db.AddReportNote(r.Context(), id, note)
}

// reportOf is the report the path names.
func (h *Handler) reportOf(r *http.Request) (*store.Report, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil {
		return nil, notFoundErr("No such report.")
	}
	rep, err := h.db.ReportByID(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFoundErr("No such report.")
	}
	return rep, err
}

func reportPath(id int64) string { return "/admin/reports/" + strconv.FormatInt(id, 10) }

// reportResolution asks before an action that changes what federates
// (every action but none): what it will do, as the CLI's resolve does it.
func (h *Handler) reportResolution(r *http.Request) (question, error) {
	rep, err := h.reportOf(r)
	if err != nil {
		return question{}, err
	}
	action := r.PostFormValue("action")
	back := reportPath(rep.ID)
	q := question{Title: "Resolve report #" + strconv.FormatInt(rep.ID, 10) + " with " + action + "?", Button: "Resolve with " + action, Back: back}
	switch {
	case action == jobs.ReportNone:
		q.Effects = []string{"Nothing changes but the report's state."}
	case rep.Inbound && action == jobs.ReportSuspend:
		q.Effects = []string{rep.Account + " is suspended: its document is served as suspended, its posts answer 403, its deliveries wait, and an Update tells its followers' servers. Unless lifted (herald actor unsuspend) it is deleted for good in 30 days."}
	case rep.Inbound && action == jobs.ReportDelete:
		q.Effects = []string{"The reported posts of " + rep.Account + " are deleted, and a Delete of each goes to every server that has it."}
	case action == jobs.ReportLimit:
		q.Effects = []string{rep.Account + " is limited: its posts reach only the actors who follow it, and its Follows need approval."}
	case action == jobs.ReportSuspend:
		q.Effects = []string{"Everything " + rep.Account + " sends is dropped, and the follows with it, both ways, are removed."}
	case action == jobs.ReportBlock:
		q.Effects = []string{"The account's whole domain is blocked: nothing passes either way, and the follows with it are removed."}
	case action == jobs.ReportDelete:
		q.Effects = []string{"The copies of the reported posts kept here are marked deleted."}
	default:
		return question{}, badRequest("That action does not apply to this report.")
	}
	return q, nil
}

package admin

import (
	"net/http"
	"slices"
)

// A destructive action asks first. Its form posts as usual; without
// confirm=yes the answer is a page that says what the action will do, with
// a form that posts the same fields again with confirm=yes and a link
// back. Only that second POST acts. It is plain HTML: no script, so it
// works wherever the console does, and the question is the server's, so
// no page can skip it.

// question is what a confirmation page asks.
type question struct {
	Title   string   // "Delete @alice?"
	Effects []string // what happens, one sentence each
	Button  string   // the button that does it: "Delete @alice"
	Back    string   // where "Cancel" goes: the page the form was on
}

// errBadRequest carries what is wrong with a request, for the error page,
// from code that builds a question before the action checks the rest.
type errBadRequest struct {
	status int
	msg    string
}

func (e errBadRequest) Error() string { return e.msg }

// badRequest is a 400 saying msg; notFoundErr a 404.
func badRequest(msg string) error  { return errBadRequest{http.StatusBadRequest, msg} }
func notFoundErr(msg string) error { return errBadRequest{http.StatusNotFound, msg} }

// asks wraps a destructive action: ask builds the question from the
// request (or refuses the request, which then changes nothing); a POST
// that carries confirm=yes goes on to act.
func (h *Handler) asks(ask func(r *http.Request) (question, error), act http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q, err := ask(r)
		if err != nil {
			h.refuse(w, r, err)
			return
		}
		if r.PostFormValue("confirm") == "yes" {
			act(w, r)
			return
		}
		h.render(w, r, http.StatusOK, "confirm", map[string]any{"Q": q, "Action": r.URL.EscapedPath(), "Fields": carried(r)})
	}
}

// field is one form value the confirmation posts again.
type field struct{ Name, Value string }

// carried are the fields of the form being confirmed, but its CSRF token
// (the page writes the session's own) and confirm, in a stable order.
func carried(r *http.Request) []field {
	var out []field
	for name, values := range r.PostForm {
		if name == "csrf" || name == "confirm" {
			continue
		}
		for _, v := range values {
			out = append(out, field{name, v})
		}
	}
	slices.SortStableFunc(out, func(a, b field) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

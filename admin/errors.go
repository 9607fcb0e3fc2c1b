package admin

import (
	"context"
	"errors"
	"net/http"
)

// pageError answers with the console's error page, status and what went
// wrong in HTML, as every page of the console is: a person reads it, in a
// browser, and finds the way back by the navigation when logged in.
func (h *Handler) pageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", map[string]any{"Status": http.StatusText(status), "Message": msg})
}

// notFound answers a path under /admin that is no page of the console.
// It runs outside requireSession, so it looks for a session itself: a
// logged-in operator gets the navigation, anyone else only the message.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.pageError(w, h.withSession(r), http.StatusNotFound, "The console has no such page.")
}

// methodNotAllowed answers a method the path does not take (a GET of an
// action's URL, say).
func (h *Handler) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	h.pageError(w, h.withSession(r), http.StatusMethodNotAllowed, "This page does not take that request: go back and use its form.")
}

// withSession is r with its live session, if it has one.
func (h *Handler) withSession(r *http.Request) *http.Request {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return r
	}
	s, err := h.db.AdminSessionByToken(r.Context(), c.Value)
	if err != nil {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), ctxKey{}, s))
}

// refuse answers err: the error page it asks for (errBadRequest, from
// badRequest or notFoundErr), or else a 500.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var bad errBadRequest
	if errors.As(err, &bad) {
		h.pageError(w, r, bad.status, bad.msg)
		return
	}
	h.fail(w, r, err)
}

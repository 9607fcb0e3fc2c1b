package mastoapi

import (
	"encoding/json"
	"net/http"
)

// Error is an answer other than success: Status and {"error": Msg}, as
// Mastodon writes its errors (app/controllers/api/base_controller.rb).
// Desc, when set, is OAuth's error_description (the token endpoint
// writes {"error": "invalid_grant", "error_description": "..."}).
type Error struct {
	Status int
	Msg    string
	Desc   string
}

// Error is the message.
func (e *Error) Error() string { return e.Msg }

// Errorf is an *Error with a status and a message.
func Errorf(status int, msg string) *Error { return &Error{Status: status, Msg: msg} }

// Mastodon's messages for the errors every endpoint can answer, word for
// word: apps show them, and some compare them.
var (
	ErrNotFound      = Errorf(http.StatusNotFound, "Record not found")
	ErrInvalidToken  = Errorf(http.StatusUnauthorized, "The access token is invalid")
	ErrOutsideScopes = Errorf(http.StatusForbidden, "This action is outside the authorized scopes")
	ErrNeedsUser     = Errorf(http.StatusUnprocessableEntity, "This method requires an authenticated user")
	ErrNotPermitted  = Errorf(http.StatusForbidden, "This action is not allowed")
	ErrRemote        = Errorf(http.StatusServiceUnavailable, "Remote data could not be fetched")
)

// writeError answers e as JSON.
func writeError(w http.ResponseWriter, e *Error) {
	body := map[string]string{"error": e.Msg}
	if e.Desc != "" {
		body["error_description"] = e.Desc
	}
	writeJSON(w, e.Status, body)
}

// writeJSON answers v as JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

package mastoapi

import (
	"net/http"

	"herald/httpapi"
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

// writeError answers e in Mastodon's shape, through httpapi's writer:
// {"error": msg}, as httpapi.Error writes it, and error_description beside
// it for OAuth's errors.
func writeError(w http.ResponseWriter, e *Error) {
	if e.Desc == "" {
		httpapi.Error(w, e.Status, e.Msg)
		return
	}
	httpapi.JSON(w, e.Status, map[string]string{"error": e.Msg, "error_description": e.Desc})
}

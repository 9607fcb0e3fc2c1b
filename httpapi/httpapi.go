// Package httpapi holds the small HTTP pieces the inbox, the outbox and
// followers synchronization share: JSON errors, ActivityStreams responses,
// reading an activity body within the limits, and bearer-token
// authorization of an actor's app.
package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"herald/federation"
	"herald/store"
)

// Write answers v encoded as JSON, as contentType, with status code: the
// one JSON writer of Herald's handlers (JSON, Activity and Error are its
// usual content types; WebFinger and NodeInfo name their own).
func Write(w http.ResponseWriter, contentType string, code int, v any) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// JSON answers v as plain JSON with status code.
func JSON(w http.ResponseWriter, code int, v any) {
	Write(w, "application/json; charset=utf-8", code, v)
}

// Activity answers v as an ActivityStreams document with status code.
func Activity(w http.ResponseWriter, code int, v any) {
	Write(w, federation.ContentType, code, v)
}

// Error answers {"error": msg} with code.
func Error(w http.ResponseWriter, code int, msg string) {
	JSON(w, code, map[string]string{"error": msg})
}

// OutOfSpace answers 503 with Retry-After if err says the database is out
// of space, and reports whether it did. Senders and apps retry later, and
// the server logs the condition once a minute with a count, so a handler
// that used it logs nothing itself.
func OutOfSpace(w http.ResponseWriter, err error) bool {
	if !store.IsOutOfSpace(err) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(store.SpaceRetryAfter.Seconds())))
	Error(w, http.StatusServiceUnavailable, "the server is out of storage space; retry later")
	return true
}

// ReadBody checks that a request carries ActivityStreams JSON and reads at
// most federation.MaxDocumentSize of it. On failure it has answered (415, 413 or 400) and
// returns false.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if !federation.IsActivityContentType(r.Header.Get("Content-Type")) {
		Error(w, http.StatusUnsupportedMediaType, "content type must be application/activity+json, application/ld+json or application/json")
		return nil, false
	}
	body, err := federation.ReadBody(r.Body, federation.MaxDocumentSize)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) || errors.Is(err, federation.ErrBodyTooLarge) {
			Error(w, http.StatusRequestEntityTooLarge, "body larger than 1 MiB")
		} else {
			Error(w, http.StatusBadRequest, "could not read body")
		}
		return nil, false
	}
	return body, true
}

// ErrAnswered means the handler already wrote its response.
var ErrAnswered = errors.New("answered")

// Authorize checks that the request's bearer token belongs to the local
// actor named name: 404 if there is no such actor, 401 without a valid
// token, 403 with another actor's. On failure it has answered and returns
// ErrAnswered (or a database error, unanswered).
func Authorize(w http.ResponseWriter, r *http.Request, db *store.DB, name string) (*store.Actor, error) {
	ctx := r.Context()
	owner, err := db.ActorByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		Error(w, http.StatusNotFound, "no such actor")
		return nil, ErrAnswered
	}
	if err != nil {
		return nil, err
	}
	caller, err := Caller(w, r, db)
	if err != nil {
		return nil, err
	}
	if caller.ID != owner.ID {
		Error(w, http.StatusForbidden, "this token belongs to another actor")
		return nil, ErrAnswered
	}
	return owner, nil
}

// Caller returns the local actor whose bearer token the request carries:
// 401 without a valid one. On failure it has answered and returns
// ErrAnswered (or a database error, unanswered).
func Caller(w http.ResponseWriter, r *http.Request, db *store.DB) (*store.Actor, error) {
	token, ok := federation.BearerToken(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald"`)
		Error(w, http.StatusUnauthorized, "a bearer token is required")
		return nil, ErrAnswered
	}
	caller, err := db.ActorByToken(r.Context(), token)
	if errors.Is(err, store.ErrNotFound) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="herald", error="invalid_token"`)
		Error(w, http.StatusUnauthorized, "invalid token")
		return nil, ErrAnswered
	}
	return caller, err
}

// Package jobs carries the operator's commands to the running server. A
// command that needs the network or the server's keys (herald post, follow,
// unfollow, delete, follows approve|reject, actor edit|rotate-key|delete|
// move|alias, relay add|remove) records what it wants as a row (Submit),
// wakes the server and waits a moment for the outcome (Wait). The server's
// Runner claims the row and does the work with
// its own client, keys and policy, committing the job's outcome in the same
// transaction as its effects. So a command needs no network flags and can
// never disagree with the server about ids, keys or who may be contacted.
package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"herald/outbox"
	"herald/store"
)

// Kinds of job: one per command that needs the server.
const (
	KindPost        = "post"
	KindDelete      = "delete"
	KindFollow      = "follow"
	KindUnfollow    = "unfollow"
	KindApprove     = "approve"
	KindReject      = "reject"
	KindDeleteActor = "actor-delete"
	KindUpdateActor = "actor-update"
	KindRotateKey   = "actor-rotate-key"
	KindPin         = "pin"
	KindUnpin       = "unpin"
	// KindMove and KindAlias move an actor away and let one elsewhere
	// move here (move.go).
	KindMove  = "actor-move"
	KindAlias = "actor-alias"
	// KindRelayAdd and KindRelayRemove are the instance actor's: they
	// have no local actor (relays.go).
	KindRelayAdd    = "relay-add"
	KindRelayRemove = "relay-remove"
	// KindReport files an actor's report about a remote account and, with
	// Forward, sends it to the account's server (outbox.Publisher.Report).
	KindReport = "report"
	// KindQuoteRevoke takes back the stamp an actor gave a quote of its
	// post Object by the post Target (outbox.Publisher.RevokeQuote).
	KindQuoteRevoke = "quote-revoke"
)

// Args are a command's arguments; which fields apply depends on the kind.
type Args struct {
	Text     string  `json:"text,omitempty"`     // post: the text
	To       string  `json:"to,omitempty"`       // post: public, followers, @user@host or an actor URL
	CW       string  `json:"cw,omitempty"`       // post: a content warning (summary, sensitive)
	ReplyTo  string  `json:"reply_to,omitempty"` // post: the object it answers (inReplyTo)
	Lang     string  `json:"lang,omitempty"`     // post: the language of the text (contentMap)
	Media    []int64 `json:"media,omitempty"`    // post: uploads to attach (store.Media ids)
	Quote    string  `json:"quote,omitempty"`    // post: the post it quotes
	Object   string  `json:"object,omitempty"`   // delete, pin, unpin: the object's URL
	Target   string  `json:"target,omitempty"`   // follow, unfollow, actor-move, actor-alias: @user@host or an actor URL; relay-add, relay-remove: the relay's URL
	Follower string  `json:"follower,omitempty"` // approve, reject: the follower's actor id
	Style    string  `json:"style,omitempty"`    // relay-add: mastodon or litepub; "" to detect
	Remove   bool    `json:"remove,omitempty"`   // actor-alias: take the alias away instead
	Notice   int64   `json:"notice,omitempty"`   // push: the notification to push
	// report: the reported account is Target, its posts Posts.
	Posts   []string `json:"posts,omitempty"`
	Comment string   `json:"comment,omitempty"`
	Forward bool     `json:"forward,omitempty"`
}

// Result is what a finished job did, kept with it as JSON.
type Result struct {
	Type               string            `json:"type"`     // the activity sent
	Activity           string            `json:"activity"` // its id
	Object             string            `json:"object,omitempty"`
	Queued             int               `json:"queued"`
	SkippedBlocked     int               `json:"skipped_blocked,omitempty"`
	SkippedUnavailable int               `json:"skipped_unavailable,omitempty"`
	Unresolved         map[string]string `json:"unresolved,omitempty"`
	// Report is the report a report job filed (its id in `herald reports`).
	Report int64 `json:"report,omitempty"`
}

// resultOf is the Result of a publication.
func resultOf(res *outbox.Result) Result {
	r := Result{Queued: res.Queued.Queued, SkippedBlocked: res.Queued.SkippedBlocked,
		SkippedUnavailable: res.Queued.SkippedUnavailable, Unresolved: res.Unresolved}
	if a := res.Activity; a != nil {
		r.Type, r.Activity, r.Object = a.Type, a.IRI, a.ObjectIRI
	}
	return r
}

// Submit queues a job for actorID and returns its id. The caller's
// database handle wakes the server on commit (store.NotifyOnCommit).
func Submit(ctx context.Context, db *store.DB, kind string, actorID int64, args Args) (int64, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return 0, err
	}
	return db.AddJob(ctx, kind, actorID, b)
}

// pollInterval is how often Wait looks at the job: a command waits for
// one answer, so a short poll costs nothing worth a wake-up channel.
const pollInterval = 20 * time.Millisecond

// Wait returns the job once it is done or failed, or as it stands when
// timeout passes first.
func Wait(ctx context.Context, db *store.DB, id int64, timeout time.Duration) (*store.Job, error) {
	deadline := time.Now().Add(timeout)
	for {
		j, err := db.JobByID(ctx, id)
		if err != nil {
			return nil, err
		}
		if j.State == store.JobDone || j.State == store.JobFailed || !time.Now().Before(deadline) {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// ResultOf decodes a done job's result.
func ResultOf(j *store.Job) (Result, error) {
	var r Result
	if len(j.Result) == 0 {
		return r, errors.New("the job has no result")
	}
	if err := json.Unmarshal(j.Result, &r); err != nil {
		return r, fmt.Errorf("job %d: result: %w", j.ID, err)
	}
	return r, nil
}

package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"herald/federation/as"
	"herald/outbox"
	"herald/policy"
	"herald/store"
)

// Runner timing.
const (
	// PollInterval is how often the runner looks for jobs when nobody woke
	// it: a fallback, since commands wake the server when they commit.
	PollInterval = 5 * time.Second
	// jobTimeout bounds one job (a WebFinger lookup and an actor fetch at
	// most); the lease outlasts it.
	jobTimeout = time.Minute
	jobLease   = 5 * time.Minute
)

// Runner runs queued jobs inside the server.
type Runner struct {
	DB        *store.DB
	Publisher *outbox.Publisher
	// Policy is the federation policy (a relay on a refused host is not
	// subscribed to).
	Policy *policy.Live
	// Resolve turns @user@host or an actor URL into an actor id, with the
	// server's client (WebFinger).
	Resolve func(ctx context.Context, target string) (string, error)
	Logger  *slog.Logger
	Now     func() time.Time
	// Owner is the registered process the job leases name.
	Owner string

	once sync.Once
	wake chan struct{}
}

func (r *Runner) wakes() chan struct{} {
	r.once.Do(func() { r.wake = make(chan struct{}, 1) })
	return r.wake
}

// Wake tells the runner that a job may be waiting. It never blocks.
func (r *Runner) Wake() {
	select {
	case r.wakes() <- struct{}{}:
	default:
	}
}

// Run runs jobs as they come until ctx ends. A job cut off by the end is
// handed back to the queue for the next start.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		r.Step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-r.wakes():
		}
	}
}

// Step runs every queued job and returns how many ran. Tests call it
// instead of Run.
func (r *Runner) Step(ctx context.Context) int {
	n := 0
	for ctx.Err() == nil {
		j, err := r.DB.ClaimJob(ctx, r.Owner, r.Now(), jobLease)
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if err != nil {
			if ctx.Err() == nil {
				r.Logger.Error("jobs: claim", "err", err)
			}
			break
		}
		r.run(ctx, j)
		n++
	}
	return n
}

// run does one job. Its success is committed with its effects (by do);
// a failure is recorded for the command and `herald jobs` to show.
func (r *Runner) run(ctx context.Context, j *store.Job) {
	jctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	err := r.do(jctx, j)
	if err == nil {
		r.Logger.Info("job done", "job", j.ID, "kind", j.Kind)
		return
	}
	bg := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		// Shutting down: the job runs again at the next start.
		if err := r.DB.ReleaseJob(bg, j.ID, r.Now()); err != nil {
			r.Logger.Error("jobs: release", "job", j.ID, "err", err)
		}
		return
	}
	r.Logger.Info("job failed", "job", j.ID, "kind", j.Kind, "err", err)
	if err := r.DB.FailJob(bg, j.ID, err.Error(), r.Now()); err != nil {
		r.Logger.Error("jobs: record failure", "job", j.ID, "err", err)
	}
}

// do runs a job's kind.
func (r *Runner) do(ctx context.Context, j *store.Job) error {
	var args Args
	if err := json.Unmarshal(j.Args, &args); err != nil {
		return fmt.Errorf("unreadable arguments: %w", err)
	}
	switch j.Kind {
	case KindRelayAdd:
		return r.relayAdd(ctx, j, args)
	case KindRelayRemove:
		return r.relayRemove(ctx, j, args)
	}
	actor, err := r.DB.ActorByID(ctx, j.ActorID)
	if errors.Is(err, store.ErrNotFound) {
		return errors.New("the actor does not exist (any more)")
	}
	if err != nil {
		return err
	}
	if actor.Deleted {
		return fmt.Errorf("%s was deleted", actor.Name)
	}
	finish := outbox.Options{InTx: func(ctx context.Context, tx *store.Tx, res *outbox.Result) error {
		return r.finish(ctx, tx, j, resultOf(res))
	}}
	switch j.Kind {
	case KindPost:
		note, err := r.note(ctx, actor, args)
		if err != nil {
			return err
		}
		_, err = r.Publisher.Publish(ctx, actor, note, finish)
		return err
	case KindPin, KindUnpin:
		typ := map[string]string{KindPin: "Add", KindUnpin: "Remove"}[j.Kind]
		_, err := r.Publisher.Publish(ctx, actor, &as.Object{Type: as.Types{typ}, Object: as.IRI(args.Object),
			Target: as.IRI(r.Publisher.Instance.FeaturedURL(actor.Name))}, finish)
		return err
	case KindUpdateActor:
		_, err := r.Publisher.UpdateActor(ctx, actor, finish)
		return err
	case KindRotateKey:
		_, err := r.Publisher.RotateKey(ctx, actor, finish)
		return err
	case KindDelete:
		o, err := r.DB.ObjectByIRI(ctx, args.Object)
		if errors.Is(err, store.ErrNotFound) || (err == nil && o.ActorID != actor.ID) {
			return fmt.Errorf("%s has no object %s", actor.Name, args.Object)
		}
		if err != nil {
			return err
		}
		_, err = r.Publisher.Publish(ctx, actor, as.NewActivity("Delete", as.IRI(o.IRI)), finish)
		return err
	case KindFollow:
		target, err := r.resolve(ctx, args.Target)
		if err != nil {
			return err
		}
		_, err = r.Publisher.Publish(ctx, actor, as.NewActivity("Follow", as.IRI(target)), finish)
		return err
	case KindUnfollow:
		return r.unfollow(ctx, actor, args, finish)
	case KindApprove, KindReject:
		return r.answer(ctx, j, actor, args.Follower, j.Kind == KindApprove)
	case KindDeleteActor:
		_, err := r.Publisher.DeleteActor(ctx, actor, finish)
		return err
	case KindMove:
		return r.move(ctx, actor, args, finish)
	case KindAlias:
		return r.alias(ctx, actor, args, finish)
	}
	return fmt.Errorf("unknown kind of job %q", j.Kind)
}

// finish marks j done with res inside the transaction of its effects.
func (r *Runner) finish(ctx context.Context, tx *store.Tx, j *store.Job, res Result) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return tx.FinishJob(ctx, j.ID, b, r.Now())
}

// resolve turns a command's @user@host or actor URL into an actor id.
func (r *Runner) resolve(ctx context.Context, target string) (string, error) {
	id, err := r.Resolve(ctx, target)
	if err != nil {
		return "", fmt.Errorf("could not find %s: %w", target, err)
	}
	return id, nil
}

// note builds the Note a post job publishes (outbox.TextNoteDocument,
// which the app API's notes route uses too).
func (r *Runner) note(ctx context.Context, actor *store.Actor, args Args) (*as.Object, error) {
	to := args.To
	if to != "" && to != "public" && to != "followers" {
		id, err := r.resolve(ctx, to)
		if err != nil {
			return nil, err
		}
		to = id
	}
	return r.Publisher.TextNoteDocument(ctx, actor, outbox.TextNote{Text: args.Text, To: to, CW: args.CW,
		InReplyTo: args.ReplyTo, Language: args.Lang, Media: args.Media})
}

// unfollow undoes the actor's Follow of the target.
func (r *Runner) unfollow(ctx context.Context, actor *store.Actor, args Args, finish outbox.Options) error {
	target, err := r.resolve(ctx, args.Target)
	if err != nil {
		return err
	}
	list, err := r.DB.FollowingOf(ctx, actor.ID)
	if err != nil {
		return err
	}
	for _, g := range list {
		if g.Target == target {
			_, err := r.Publisher.Publish(ctx, actor, as.NewActivity("Undo", as.IRI(g.FollowID)), finish)
			return err
		}
	}
	return fmt.Errorf("%s does not follow %s", actor.Name, target)
}

// answer approves or rejects a pending follow request: the follower's
// state, the Accept or Reject, the webhook event and the job's outcome in
// one transaction (outbox.AnswerRequest, which the app API calls too).
func (r *Runner) answer(ctx context.Context, j *store.Job, actor *store.Actor, follower string, approve bool) error {
	_, err := r.Publisher.AnswerRequest(ctx, actor, follower, approve, func(ctx context.Context, tx *store.Tx, a *outbox.Answer) error {
		return r.finish(ctx, tx, j, Result{Type: a.Type, Activity: a.Activity, Object: a.FollowID,
			Queued: a.Queued.Queued, SkippedBlocked: a.Queued.SkippedBlocked, SkippedUnavailable: a.Queued.SkippedUnavailable})
	})
	return err
}

package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"herald/federation/as"
	"herald/outbox"
	"herald/policy"
	"herald/queue"
	"herald/store"
)

// jobTimeout bounds one job (a WebFinger lookup and an actor fetch at
// most); the lease outlasts it (the queue runner's, renewed while the job
// runs).
const jobTimeout = time.Minute

// Runner runs queued jobs inside the server: a queue of the queue runner
// (package queue), which claims one job at a time, leases it to Owner and
// hands it back if the server stops before it is done. A job's success is
// committed with its effects; a failure, or a job handed back, is written
// as the queue's result.
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
	// Owner is the registered process the job leases name, when the
	// Runner has a queue runner of its own (no Attach).
	Owner string

	// Push sends a notification's Web Push messages (the client API's
	// SendPush; nil: push jobs fail). push.go.
	Push func(ctx context.Context, actorID, notificationID int64) error

	// PurgeBatch is how many rows each transaction of a deleted actor's
	// purge changes at most (0: store.PurgeBatch). suspension_purge.go.
	PurgeBatch int

	once sync.Once
	q    *queue.Queue
}

// outcome is what became of a job: done (committed with its effects),
// failed with a reason, or handed back to the queue.
type outcome struct {
	id     int64
	state  string // store.JobDone, JobFailed or JobQueued
	reason string
}

// Attach makes the jobs a queue of qr, the node's queue runner. Call it
// once, before qr runs; a Runner never attached runs on a queue runner of
// its own when stepped.
func (r *Runner) Attach(qr *queue.Runner) { r.once.Do(func() { r.add(qr) }) }

// add adds the jobs' queue to qr.
func (r *Runner) add(qr *queue.Runner) {
	r.q = queue.Add(qr, queue.Spec[*store.Job, outcome]{
		Name:  "jobs",
		Table: store.JobLeases,
		Claim: func(ctx context.Context, c queue.Claim) ([]*store.Job, error) {
			j, err := r.DB.ClaimJob(ctx, c.Owner, c.Now, c.Lease)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return []*store.Job{j}, nil
		},
		Work:    r.run,
		Release: func(j *store.Job) outcome { return outcome{id: j.ID, state: store.JobQueued} },
		Record:  r.record,
		Due:     func(ctx context.Context, _ time.Time) (time.Time, bool, error) { return r.DB.NextJob(ctx) },
		Sweep:   r.DB.SweepJobs,
		// One job at a time, in the order they came: a command's post
		// and its delete, a follow and its unfollow.
		Cap: 1,
	})
}

// jobQueue is the jobs' queue, on a queue runner of its own if none was
// attached.
func (r *Runner) jobQueue() *queue.Queue {
	r.once.Do(func() { r.add(queue.New(queue.Config{DB: r.DB, Owner: r.Owner, Logger: r.Logger, Now: r.Now})) })
	return r.q
}

// Wake tells the runner that a job may be waiting. It never blocks.
func (r *Runner) Wake() { r.jobQueue().Wake() }

// Step runs every queued job and returns how many ran. Tests call it
// instead of running the node.
func (r *Runner) Step(ctx context.Context) int {
	n, err := r.jobQueue().Step(ctx)
	if err != nil {
		r.Logger.Error("jobs: record outcomes", "err", err)
	}
	return n
}

// run does one job. Its success is committed with its effects (by do);
// a failure is recorded for the command and `herald jobs` to show.
func (r *Runner) run(ctx context.Context, j *store.Job, _ <-chan struct{}) outcome {
	jctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	err := r.do(jctx, j)
	switch {
	case err == nil:
		r.Logger.Info("job done", "job", j.ID, "kind", j.Kind)
		return outcome{id: j.ID, state: store.JobDone}
	case ctx.Err() != nil:
		// Shutting down: the job runs again at the next start.
		return outcome{id: j.ID, state: store.JobQueued}
	}
	r.Logger.Info("job failed", "job", j.ID, "kind", j.Kind, "err", err)
	return outcome{id: j.ID, state: store.JobFailed, reason: err.Error()}
}

// record writes the jobs' failures and hand-backs; their successes were
// committed with their effects.
func (r *Runner) record(ctx context.Context, _ string, batch []outcome) error {
	if !slices.ContainsFunc(batch, func(o outcome) bool { return o.state != store.JobDone }) {
		return nil
	}
	return r.DB.Write(ctx, func(tx *store.Tx) error {
		for _, o := range batch {
			var err error
			switch o.state {
			case store.JobFailed:
				err = tx.FailJob(ctx, o.id, o.reason, r.Now())
			case store.JobQueued:
				err = tx.ReleaseJob(ctx, o.id, r.Now())
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
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
	case store.KindPush:
		return r.push(ctx, j, args)
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
	case KindReport:
		return r.report(ctx, j, actor, args)
	case KindQuoteRevoke:
		_, err := r.Publisher.RevokeQuote(ctx, actor, args.Object, args.Target, finish)
		return err
	case KindInteractionApprove, KindInteractionReject:
		return r.decideInteraction(ctx, j, actor, args.Request, j.Kind == KindInteractionApprove)
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
		InReplyTo: args.ReplyTo, Language: args.Lang, Media: args.Media, Quote: args.Quote})
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

package jobs

import (
	"context"
	"errors"

	"herald/store"
)

// push runs a push job (store.KindPush, queued with the notification it
// pushes): the client API's sender does the work, and the job is done.
// The sender is a plain function so that it moves with the job to
// whichever queue runs it.
func (r *Runner) push(ctx context.Context, j *store.Job, args Args) error {
	if r.Push == nil {
		return errors.New("this process does not send Web Push")
	}
	if err := r.Push(ctx, j.ActorID, args.Notice); err != nil {
		return err
	}
	return r.DB.FinishJob(ctx, j.ID, []byte(`{}`), r.Now())
}

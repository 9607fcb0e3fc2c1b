package jobs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"herald/internal/fedtest"
	"herald/jobs"
	"herald/store"
)

// followAlice makes a follow alice through Herald's inbox and delivers the
// Accept, so alice has one follower inbox on a's server.
func followAlice(t *testing.T, h *fedtest.Herald, a *fedtest.RemoteActor) {
	t.Helper()
	if code, resp := h.Deliver(t, "/users/alice/inbox", a, fedtest.Activity(a, "Follow", h.Inst.ActorID("alice"))); code != 202 {
		t.Fatalf("follow: %d %s", code, resp)
	}
	h.Step(t)
}

// TestPostJob: a command's post job waits in the queue until the runner
// takes it; the runner publishes the Note and marks the job done with what
// it queued, and the delivery it queued reaches the follower.
func TestPostJob(t *testing.T) {
	h := fedtest.NewHerald(t)
	remote := fedtest.NewRemote(t, "127.0.7.11")
	bob := remote.Actor(t, "bob")
	followAlice(t, h, bob)
	ctx := context.Background()

	id, err := jobs.Submit(ctx, h.DB, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "Hello from a job", To: "public"})
	if err != nil {
		t.Fatal(err)
	}
	// No runner yet: Wait gives the job back as it stands when its time
	// is up.
	j, err := jobs.Wait(ctx, h.DB, id, 0)
	if err != nil || j.State != store.JobQueued {
		t.Fatalf("before the runner: %+v %v", j, err)
	}
	if _, err := jobs.ResultOf(j); err == nil {
		t.Error("a queued job has a result")
	}

	if n := h.Node.Jobs.Step(ctx); n != 1 {
		t.Fatalf("the runner ran %d jobs, want 1", n)
	}
	if n := h.Node.Jobs.Step(ctx); n != 0 {
		t.Errorf("a done job ran again (%d)", n)
	}
	j, err = jobs.Wait(ctx, h.DB, id, time.Minute)
	if err != nil || j.State != store.JobDone {
		t.Fatalf("after the runner: %+v %v", j, err)
	}
	res, err := jobs.ResultOf(j)
	if err != nil {
		t.Fatal(err)
	}
	if res.Type != "Create" || !strings.HasPrefix(res.Activity, h.Inst.Base()+"/") || res.Queued != 1 || res.Object == "" {
		t.Fatalf("result %+v", res)
	}
	h.Step(t)
	var got bool
	for _, rec := range remote.Received() {
		if rec.Doc["id"] == res.Activity && rec.Doc["type"] == "Create" {
			got = true
		}
	}
	if !got {
		t.Errorf("bob's server never got %s", res.Activity)
	}
}

// TestFailedJobs: a job the runner cannot do is marked failed with the
// reason a command prints, and sends nothing.
func TestFailedJobs(t *testing.T) {
	h := fedtest.NewHerald(t)
	remote := fedtest.NewRemote(t, "127.0.7.12")
	followAlice(t, h, remote.Actor(t, "bob"))
	bobby, _ := h.AddActor(t, "bobby", false)
	carol, _ := h.AddActor(t, "carol", false)
	if j := h.RunJob(t, jobs.KindDeleteActor, carol.ID, jobs.Args{}); j.State != store.JobDone {
		t.Fatalf("delete carol: %+v", j)
	}
	// The Delete of carol goes to every server Herald knows an actor of,
	// bob's included; what counts is what the failed jobs send after it.
	h.Step(t)
	before := len(remote.Received())
	ctx := context.Background()

	for _, c := range []struct {
		name    string
		kind    string
		actorID int64
		args    []byte
		want    string
	}{
		{"unreadable arguments", jobs.KindPost, h.Alice.ID, []byte("{not json"), "unreadable arguments"},
		{"unknown kind", "frobnicate", h.Alice.ID, []byte("{}"), `unknown kind of job "frobnicate"`},
		{"a deleted actor", jobs.KindPost, carol.ID, []byte(`{"text":"hi"}`), "carol was deleted"},
		{"approve without a request", jobs.KindApprove, h.Alice.ID, []byte(`{"follower":"https://nobody.example/users/x"}`), ""},
		{"delete another actor's object", jobs.KindDelete, bobby.ID, []byte(`{"object":"` + h.Inst.Base() + `/objects/none"}`), "bobby has no object"},
	} {
		id, err := h.DB.AddJob(ctx, c.kind, c.actorID, c.args)
		if err != nil {
			t.Fatal(err)
		}
		h.Node.Jobs.Step(ctx)
		j, err := h.DB.JobByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != store.JobFailed || j.Error == "" || !strings.Contains(j.Error, c.want) {
			t.Errorf("%s: state %s, error %q; want failed with %q", c.name, j.State, j.Error, c.want)
		}
	}
	h.Step(t)
	if n := len(remote.Received()) - before; n != 0 {
		t.Errorf("failed jobs sent %d activities", n)
	}
}

// TestJobCutOffByShutdown: a job still running when the server stops is
// handed back to the queue, not failed, and the next runner does it.
func TestJobCutOffByShutdown(t *testing.T) {
	h := fedtest.NewHerald(t)
	ctx := context.Background()
	id, err := jobs.Submit(ctx, h.DB, jobs.KindFollow, h.Alice.ID, jobs.Args{Target: "@carol@far.example"})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	stopping := &jobs.Runner{DB: h.DB, Publisher: h.Node.Publisher, Logger: h.Node.Logger, Now: h.Clock, Owner: "stopping",
		Resolve: func(ctx context.Context, _ string) (string, error) {
			close(started)
			<-ctx.Done() // a lookup that outlives the server
			return "", ctx.Err()
		}}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan int)
	go func() { done <- stopping.Step(runCtx) }()
	<-started
	if j, _ := h.DB.JobByID(ctx, id); j.State != store.JobRunning {
		t.Errorf("while it runs the job is %s", j.State)
	}
	stop()
	<-done
	j, err := h.DB.JobByID(ctx, id)
	if err != nil || j.State != store.JobQueued || j.Error != "" {
		t.Fatalf("after the shutdown: %+v %v; want it queued again", j, err)
	}

	remote := fedtest.NewRemote(t, "127.0.7.13")
	carol := remote.Actor(t, "carol")
	next := &jobs.Runner{DB: h.DB, Publisher: h.Node.Publisher, Logger: h.Node.Logger, Now: h.Clock, Owner: "next",
		Resolve: func(context.Context, string) (string, error) { return carol.ID, nil }}
	if n := next.Step(ctx); n != 1 {
		t.Fatalf("the next runner ran %d jobs", n)
	}
	j, _ = h.DB.JobByID(ctx, id)
	res, err := jobs.ResultOf(j)
	if j.State != store.JobDone || err != nil || res.Type != "Follow" {
		t.Errorf("the job the next runner did: %+v %+v %v", j, res, err)
	}
}

// TestWaitSeesTheOutcome: a command waiting for its job returns as soon as
// the runner has done it, and with the context's error if it is cut off.
func TestWaitSeesTheOutcome(t *testing.T) {
	h := fedtest.NewHerald(t)
	ctx := context.Background()
	id, err := jobs.Submit(ctx, h.DB, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "waited for", To: "public"})
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan *store.Job, 1)
	go func() {
		j, _ := jobs.Wait(ctx, h.DB, id, time.Minute)
		waited <- j
	}()
	h.Node.Jobs.Step(ctx)
	if j := <-waited; j == nil || j.State != store.JobDone {
		t.Errorf("Wait returned %+v", j)
	}

	id, err = jobs.Submit(ctx, h.DB, jobs.KindPost, h.Alice.ID, jobs.Args{Text: "never run", To: "public"})
	if err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := jobs.Wait(cut, h.DB, id, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled context: %v", err)
	}
	if j, err := h.DB.JobByID(ctx, id); err != nil || j.State != store.JobQueued {
		t.Errorf("the job a cut-off Wait left: %+v %v", j, err)
	}
}

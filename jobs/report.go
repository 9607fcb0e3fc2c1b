package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"herald/federation"
	"herald/host"
	"herald/policy"

	"herald/outbox"
	"herald/store"
)

// report files the actor's report (herald report), done in the report's
// transaction; the result names the Flag it sent, if forwarded.
func (r *Runner) report(ctx context.Context, j *store.Job, actor *store.Actor, args Args) error {
	_, err := r.Publisher.Report(ctx, actor, outbox.ReportInput{
		Account: args.Target, Posts: args.Posts, Comment: args.Comment, Forward: args.Forward,
		InTx: func(ctx context.Context, tx *store.Tx, rep *store.Report) error {
			res := Result{Type: "Flag", Activity: rep.FlagID, Object: rep.Account, Report: rep.ID}
			if rep.FlagID != "" {
				res.Queued = 1
			} else {
				res.Type = ""
			}
			return r.finish(ctx, tx, j, res)
		},
	})
	return err
}

// Report actions: what resolving a report does (ResolveReport).
const (
	ReportLimit   = "limit"   // a remote account: herald account limit
	ReportSuspend = "suspend" // a remote account: herald account suspend; a local one: herald actor suspend
	ReportBlock   = "block"   // a remote account: block (suspend) its domain
	ReportDelete  = "delete"  // the reported posts: a remote one's copies here are marked deleted; a local one's are deleted (jobs)
	ReportNone    = "none"    // nothing to do
)

// ReportActions are the actions, in the order the console and the CLI
// offer them.
var ReportActions = []string{ReportLimit, ReportSuspend, ReportBlock, ReportDelete, ReportNone}

// ErrReportAction is ResolveReport's answer for an action that does not
// apply to the report.
var ErrReportAction = errors.New("that action does not apply to this report")

// ResolveReport takes the action on what r reports and marks it resolved
// with it. It says what it did. The reported account is remote for a
// report made here, local for a Flag received.
func ResolveReport(ctx context.Context, db *store.DB, inst federation.Instance, r *store.Report, action string) (string, error) {
	local, localName := (*store.Actor)(nil), ""
	if r.Inbound {
		name, ok := inst.LocalName(r.Account)
		if !ok {
			return "", fmt.Errorf("report %d: %s is not a local actor", r.ID, r.Account)
		}
		a, err := db.ActorByName(ctx, name)
		if err != nil {
			return "", fmt.Errorf("report %d: %s: %w", r.ID, r.Account, err)
		}
		local, localName = a, name
	}
	var did string
	switch {
	case action == ReportNone:
		did = "no action"
	case action == ReportSuspend && local != nil:
		// The Update of its suspended document, which tells its
		// followers' servers, is queued with the suspension (herald actor
		// suspend does the same).
		if _, _, err := SuspendActor(ctx, db, local.ID, fmt.Sprintf("report %d", r.ID)); err != nil {
			return "", err
		}
		// The date is the suspension's: one that began before this
		// report keeps its time, and so its deletion date.
		s, err := db.ActorSuspensionOf(ctx, local.ID)
		if err != nil {
			return "", err
		}
		did = fmt.Sprintf("suspended %s (deleted for good on %s unless lifted before)", localName,
			s.DeletionDue().UTC().Format(time.RFC3339))
	case action == ReportDelete && local != nil:
		for _, p := range r.Posts {
			if _, err := Submit(ctx, db, KindDelete, local.ID, Args{Object: p}); err != nil {
				return "", err
			}
		}
		did = fmt.Sprintf("deleting %d posts of %s (jobs)", len(r.Posts), localName)
	case local != nil:
		return "", fmt.Errorf("%w: %s is a local actor (suspend, delete or none)", ErrReportAction, r.Account)
	case action == ReportLimit || action == ReportSuspend:
		sev := map[string]string{ReportLimit: policy.SeveritySilence, ReportSuspend: policy.SeveritySuspend}[action]
		if _, err := db.SetAccountRule(ctx, store.AccountRule{Account: r.Account, Severity: sev, Reason: fmt.Sprintf("report %d", r.ID)}); err != nil {
			return "", err
		}
		did = map[string]string{ReportLimit: "limited ", ReportSuspend: "suspended "}[action] + r.Account
	case action == ReportBlock:
		n, err := host.NameOf(r.Account)
		if err != nil {
			return "", err
		}
		if _, err := db.BlockDomain(ctx, n.String(), fmt.Sprintf("report %d", r.ID)); err != nil {
			return "", err
		}
		did = "blocked " + n.String()
	case action == ReportDelete:
		for _, p := range r.Posts {
			if _, err := db.MarkObjectDeleted(ctx, p, r.Account, db.Now()); err != nil {
				return "", err
			}
		}
		did = fmt.Sprintf("deleted the copies of %d posts", len(r.Posts))
	default:
		return "", fmt.Errorf("%w: unknown action %q (want %s)", ErrReportAction, action, strings.Join(ReportActions, ", "))
	}
	if err := db.SettleReport(ctx, r.ID, store.ReportResolved, action); err != nil {
		return "", err
	}
	return did, nil
}

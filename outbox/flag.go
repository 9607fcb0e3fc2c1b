package outbox

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"herald/federation/as"
	"herald/outbox/delivery"
	"herald/store"
)

// ReportInput is a report a local actor makes about a remote account.
type ReportInput struct {
	Account string   // the reported account's actor id
	Posts   []string // the reported posts' ids, on the account's server
	Comment string
	// Forward sends the report to the account's server as a Flag from the
	// instance actor, as Mastodon forwards one: the reporter is never
	// named.
	Forward bool
	// FileUnforwarded, with Forward, files the report all the same when
	// the account's inbox cannot be resolved, not forwarded, and says why
	// in a note on it (where the operator reads the report), as Mastodon
	// files a report whatever becomes of its forwarding; without it such a
	// report is refused (an *InputError), for a caller who can try again.
	FileUnforwarded bool
	// InTx, when set, runs in the report's transaction (a job marks itself
	// done there).
	InTx func(ctx context.Context, tx *store.Tx, r *store.Report) error
}

// maxReportPosts bounds the posts one report names (Mastodon's report
// form takes a handful).
const maxReportPosts = 20

// Report files a local actor's report about a remote account in the
// report queue and, with Forward, queues the bare Flag to the account's
// server (its shared inbox where it has one) in the same transaction:
//
//	{"type": "Flag", "actor": "https://herald.example/actor",
//	 "object": ["https://remote.example/users/bob", "https://remote.example/users/bob/statuses/1"],
//	 "content": "the comment"}
//
// as mastodon/mastodon app/serializers/activitypub/flag_serializer.rb
// builds it (actor the instance actor, object the account and its posts,
// content the comment, nothing naming the reporter). An *InputError
// means nothing was filed.
func (p *Publisher) Report(ctx context.Context, reporter *store.Actor, in ReportInput) (*store.Report, error) {
	if err := p.refuseSuspended(ctx, reporter); err != nil {
		return nil, err
	}
	if !httpURL(in.Account) || p.ours(in.Account) {
		return nil, inputErr("account %q: give the reported remote account's actor id (https://host/users/name)", in.Account)
	}
	if len(in.Posts) > maxReportPosts {
		return nil, inputErr("a report names at most %d posts", maxReportPosts)
	}
	for _, post := range in.Posts {
		if !httpURL(post) || !sameHost(post, in.Account) {
			return nil, inputErr("post %q: a reported post must be on the account's server", post)
		}
	}
	in.Comment = strings.TrimSpace(in.Comment)
	if utf8.RuneCountInString(in.Comment) > 1000 {
		return nil, inputErr("the comment is longer than 1000 characters")
	}
	var inboxes []string
	var unforwarded string // why a report to forward was not, for its note
	if in.Forward {
		var failed map[string]error
		inboxes, failed = delivery.ResolveInboxes(ctx, p.Fetcher, []string{in.Account})
		if err := failed[in.Account]; err != nil && in.FileUnforwarded {
			in.Forward, unforwarded = false, fmt.Sprintf("not forwarded: the account's inbox could not be resolved (%v)", err)
		} else if err != nil {
			return nil, inputErr("cannot forward the report: the account's inbox: %v", err)
		}
	}
	r := &store.Report{Reporter: reporter.Name, Account: in.Account, Posts: in.Posts, Comment: in.Comment}
	now := p.Now()
	err := p.DB.Write(ctx, func(tx *store.Tx) error {
		if _, err := tx.AddReport(ctx, r); err != nil {
			return err
		}
		if unforwarded != "" {
			if err := tx.AddReportNote(ctx, r.ID, unforwarded); err != nil {
				return err
			}
		}
		if !in.Forward {
			return finishReport(ctx, tx, in, r)
		}
		// content always, empty or not, as Mastodon's serializer writes it.
		flag := &as.Object{Type: as.Types{"Flag"}}
		if err := flag.Set("object", append([]string{in.Account}, in.Posts...)); err != nil {
			return err
		}
		if err := flag.Set("content", in.Comment); err != nil {
			return err
		}
		id, _, err := p.Queue(ctx, tx, Outbound{Activity: flag, Audience: delivery.Audience{Inboxes: inboxes}, ObjectIRI: in.Account}, now)
		if err != nil {
			return err
		}
		r.FlagID = id
		if err := tx.MarkReportForwarded(ctx, r.ID, id); err != nil {
			return err
		}
		return finishReport(ctx, tx, in, r)
	})
	if err != nil {
		return nil, fmt.Errorf("file the report: %w", err)
	}
	if in.Forward {
		p.Runner.Wake()
	}
	return r, nil
}

func finishReport(ctx context.Context, tx *store.Tx, in ReportInput, r *store.Report) error {
	if in.InTx == nil {
		return nil
	}
	return in.InTx(ctx, tx, r)
}

package inbox

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"herald/store"
)

// DropReportsRejected: a Flag from a domain whose reports the operator
// rejects (herald block DOMAIN --reject-reports).
const DropReportsRejected = "reports_rejected"

// Flags (reports) another server sends about local actors and their
// posts, in the shapes peers send them, become reports in the queue, as
// Mastodon's app/lib/activitypub/activity/flag.rb takes them: one report
// per local account named, with the account's posts among those named.
//
//   - Mastodon: from its instance actor, object [account, post, ...],
//     content the comment (and, from some versions, to the account);
//   - GoToSocial: the same bare Flag, the account also in bto;
//   - Misskey: object the account alone, the reported posts' URLs written
//     into content.
//
// The Flag is never an item of the reported actor's inbox. A Flag naming
// no local account or post concerns nobody here (unaddressed). A Flag
// received twice (its id) is one report.

// urlInText finds the http(s) URLs written into a Flag's content.
var urlInText = regexp.MustCompile(`https?://[^\s<>"']+`)

// flag turns a Flag into reports inside the inbox's transaction.
func (h *Handler) flag(ctx context.Context, tx *store.Tx, a *activity) (string, error) {
	if m, _ := h.moderationOf(ctx, tx, a); m.RejectReports {
		return DropReportsRejected, nil
	}
	named := a.doc.RefsOf("object").IDs()
	named = append(named, a.doc.BTo.IDs()...)
	comment := a.doc.Content
	for _, u := range urlInText.FindAllString(comment, -1) {
		named = append(named, strings.TrimRight(u, ".,;:)]"))
	}
	var order []int64
	accounts := map[int64]string{}
	posts := map[int64][]string{}
	seenPost := map[string]bool{}
	for _, iri := range named {
		if !h.isLocal(iri) {
			continue
		}
		if local := h.localActor(ctx, tx, iri); local != nil && iri == h.Instance.ActorID(local.Name) {
			if _, ok := accounts[local.ID]; !ok {
				accounts[local.ID] = h.Instance.ActorID(local.Name)
				order = append(order, local.ID)
			}
			continue
		}
		o, err := tx.ObjectByIRI(ctx, iri)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if seenPost[o.IRI] {
			continue
		}
		seenPost[o.IRI] = true
		posts[o.ActorID] = append(posts[o.ActorID], o.IRI)
		if _, ok := accounts[o.ActorID]; !ok {
			// Misskey names the account; a post alone names its author.
			owner, err := tx.ActorByID(ctx, o.ActorID)
			if err != nil {
				return "", err
			}
			accounts[o.ActorID] = h.Instance.ActorID(owner.Name)
			order = append(order, o.ActorID)
		}
	}
	if len(order) == 0 {
		return DropUnaddressed, nil
	}
	for i, id := range order {
		flagID := a.id
		if flagID != "" && i > 0 {
			flagID += "#" + accounts[id] // one report per account, each with its own key
		}
		if _, err := tx.AddReport(ctx, &store.Report{Inbound: true, FlagID: flagID, Reporter: a.actor,
			Account: accounts[id], Posts: posts[id], Comment: comment}); err != nil {
			return "", err
		}
	}
	return "", nil
}

func init() { dropReasons = append(dropReasons, DropReportsRejected) }
